#include "actors/call/errors.hpp"

#include <boost/json.hpp>

#include <optional>

#include "wire/jsonrpc.hpp"
#include "wire/status.hpp"

namespace actor_host::manager_errors {

namespace rpc = wire::jsonrpc;
using wire::status_code;

std::string no_runtimes() {
  return status_error(status_code::unavailable,
                      "No runtimes found: no runtime is registered with this manager");
}

std::string runtime_not_found(std::string_view id) {
  return status_error(status_code::not_found, "Runtime " + std::string{id} + " not found");
}

std::string service_not_found(std::string_view name) {
  return status_error(status_code::not_found,
                      "No runtime named " + std::string{name}
                        + " is registered (runtimeName names a service: the name its "
                          "replicas registered with)");
}

std::string service_busy(std::string_view service, std::size_t queued) {
  return status_error(status_code::resource_exhausted,
                      "Service " + std::string{service}
                        + " is busy: every replica is at its cap on calls in flight and "
                        + std::to_string(queued)
                        + " call(s) wait in its queue, which is full; retry later or add "
                          "replicas");
}

std::string queue_timed_out(std::string_view service, std::chrono::milliseconds waited) {
  return status_error(status_code::deadline_exceeded,
                      "Call to service " + std::string{service} + " waited " +
                        std::to_string(waited.count())
                        + " ms in its queue (every replica at its cap) and timed out");
}

std::string timed_out(std::string_view runtime_id, std::string_view method,
                      std::chrono::milliseconds after) {
  return status_error(status_code::deadline_exceeded,
                      "Request to runtime " + std::string{runtime_id} + " timed out after "
                        + std::to_string(after.count()) + " ms (" + std::string{method} + ")");
}

std::string connection_closed(std::string_view runtime_id, std::string_view method) {
  return status_error(status_code::unavailable,
                      "Runtime " + std::string{runtime_id}
                        + " connection closed before the response was received ("
                        + std::string{method} + ")");
}

std::string answer_too_large(std::string_view runtime_id, std::uint64_t size, std::size_t cap) {
  return status_error(status_code::resource_exhausted,
                      "Runtime " + std::string{runtime_id} + " sent a message of "
                        + std::to_string(size)
                        + " bytes for this call, over the manager's max_frame_bytes ("
                        + std::to_string(cap)
                        + "): the call failed; make the answer or chunk smaller, or raise "
                          "--max-frame-bytes");
}

std::string node_lost(std::string_view runtime_id, std::string_view node, std::string_view method,
                      std::string_view why) {
  return status_error(status_code::unavailable,
                      "Runtime " + std::string{runtime_id} + " on node " + std::string{node}
                        + " is unreachable: the link to node " + std::string{node} + " was lost ("
                        + std::string{why} + ") before the response was received ("
                        + std::string{method} + ")");
}

std::string shutting_down() {
  return status_error(status_code::unavailable, "Manager is shutting down");
}

std::string invalid_params(std::string_view detail) {
  return rpc::error_object(rpc::code::invalid_params, "Invalid params: " + std::string{detail});
}

std::string internal(std::string_view detail) {
  return status_error(status_code::internal, detail);
}

std::string too_many_calls(std::size_t cap, std::string_view caller) {
  return status_error(status_code::resource_exhausted,
                      "Too many calls in flight from this " + std::string{caller}
                        + ": max_calls_per_caller is " + std::to_string(cap)
                        + "; wait for some to finish");
}

std::string bidi_input_overflow(std::size_t cap) {
  return status_error(status_code::resource_exhausted,
                      "Bidi input held for a run that has not started exceeds "
                      "max_bidi_input_bytes ("
                        + std::to_string(cap)
                        + " bytes): send less input before the runtime reports runActionState, "
                          "or raise max_bidi_input_bytes");
}

namespace {

/// What an error object without a Status stands for, by its JSON-RPC code.
struct rpc_meaning {
  int rpc;
  status_code status;
  int http; // not always the Status's own: an unknown method is a 404
};

constexpr rpc_meaning rpc_meanings[] = {
  {rpc::code::parse_error, status_code::invalid_argument, 400},
  {rpc::code::invalid_request, status_code::invalid_argument, 400},
  {rpc::code::invalid_params, status_code::invalid_argument, 400},
  {rpc::code::method_not_found, status_code::unimplemented, 404},
};
constexpr rpc_meaning no_meaning{0, status_code::unknown, 500};

/// How an error object classifies: its Status (data.code) if it carries
/// one, else the meaning of its JSON-RPC code.
struct classified {
  std::optional<int> status;
  rpc_meaning meaning = no_meaning;
};

classified classify(std::string_view error_object) {
  classified out;
  auto split = rpc::split_object(error_object);
  if (!split)
    return out;
  auto& err = *split;
  if (auto* data = err.find("data")) {
    double status = 0;
    if (auto d = rpc::split_object(*data))
      if (auto* c = d->find("code"); c && rpc::number_value(*c, status))
        if (auto code = wire::status_from_json_number(status)) {
          out.status = static_cast<int>(*code);
          return out;
        }
  }
  double code = 0;
  if (auto* c = err.find("code"); c && rpc::number_value(*c, code))
    for (auto& m : rpc_meanings)
      if (m.rpc == code) // compared as doubles: a peer's code may be any number
        out.meaning = m;
  return out;
}

} // namespace

int http_status(std::string_view error_object) {
  auto c = classify(error_object);
  return c.status ? wire::http_status_for(*c.status) : c.meaning.http;
}

int status_code_of(std::string_view error_object) {
  auto c = classify(error_object);
  return c.status ? *c.status : static_cast<int>(c.meaning.status);
}

std::string tools_error(std::string_view error_object) {
  namespace json = boost::json;
  // Error objects come from runtimes too: parsed with Boost.JSON's depth cap.
  json::error_code ec;
  auto v = json::parse(error_object, ec);
  json::object status;
  if (auto* o = ec ? nullptr : v.if_object()) {
    if (auto* d = o->if_contains("data"); d && d->is_object())
      status = d->as_object();
    else if (auto* m = o->if_contains("message"); m && m->is_string())
      status["message"] = *m;
  }
  if (!status.contains("code") || !status["code"].is_number())
    status["code"] = status_code_of(error_object);
  if (!status.contains("message") || !status["message"].is_string())
    status["message"] = "the call failed";
  json::object data;
  data["genkitErrorMessage"] = status["message"];
  if (auto* d = status.if_contains("details")) {
    data["genkitErrorDetails"] = *d;
    if (auto* dd = d->if_object())
      if (auto* stack = dd->if_contains("stack"))
        status["stack"] = *stack;
  }
  status["data"] = std::move(data);
  return json::serialize(status);
}

} // namespace actor_host::manager_errors
