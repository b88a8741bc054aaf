#include "wire/reflection_frames.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host::wire::reflection {

std::string run_action_state(std::string_view request_id, std::string_view trace_id) {
  std::string params = R"({"requestId":)";
  params += request_id;
  params += R"(,"state":{"traceId":)";
  params += jsonrpc::quote(trace_id);
  params += "}}";
  return jsonrpc::notification("runActionState", params);
}

std::string stream_chunk(std::string_view request_id, std::string_view chunk) {
  // What jsonrpc::notification would build, without the params copy.
  static constexpr std::string_view head
    = R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)";
  static constexpr std::string_view mid = R"(,"chunk":)";
  std::string f;
  f.reserve(head.size() + request_id.size() + mid.size() + chunk.size() + 2);
  f += head;
  f += request_id;
  f += mid;
  f += chunk;
  f += "}}";
  return f;
}

} // namespace actor_host::wire::reflection
