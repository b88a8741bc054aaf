#include "grpc_door/detail/run_params.hpp"

#include "grpc_door/detail/door_state.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <chrono>

namespace actor_host::grpc_door::detail {

namespace {

constexpr std::size_t max_runtime_id = 256;
constexpr std::size_t max_context_bytes = 64 << 10;

std::string json_string(std::string_view s) {
  return boost::json::serialize(boost::json::string{s});
}

} // namespace

grpc::Status run_params(grpc::GenericServerContext& ctx, const catalog_method& method,
                        std::string_view input, std::string& params) {
  // One string, appended to in place (the input is the bulk of it).
  params.clear();
  params.reserve(input.size() + method.key_json.size() + 64);
  params += R"({"key":)";
  params += method.key_json;
  if (method.kind != method_kind::bidi_streaming) {
    params += R"(,"input":)";
    params += input;
  }
  // Routing: a runtime (one replica), or a service (docs/API.md).
  static constexpr std::pair<const char*, const char*> routing[] = {
    {"runtime-id", "runtimeId"}, {"runtime-name", "runtimeName"}};
  for (auto [header, member] : routing) {
    auto value = metadata(&ctx, header);
    if (!value)
      continue;
    if (value->empty() || value->size() > max_runtime_id)
      return {grpc::StatusCode::INVALID_ARGUMENT,
              std::string{header} + " metadata must be 1 to 256 characters"};
    params += ",\"";
    params += member;
    params += "\":";
    params += json_string(*value);
  }
  if (auto context = metadata(&ctx, "genkit-context")) {
    // Boost.JSON's parser stops at depth 32: no deep recursion here.
    boost::system::error_code ec;
    auto v = context->size() <= max_context_bytes ? boost::json::parse(*context, ec)
                                                   : boost::json::value{};
    if (ec || !v.is_object())
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "genkit-context metadata must be one JSON object of at most 64 KiB"};
    params += R"(,"context":)";
    params += boost::json::serialize(v);
  }
  auto deadline = ctx.deadline();
  if (deadline < std::chrono::system_clock::now() + std::chrono::hours(24 * 365)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::system_clock::now());
    params += R"(,"timeoutMs":)";
    params += std::to_string(std::max<long long>(1, left.count()));
  }
  params += "}";
  return grpc::Status::OK;
}

} // namespace actor_host::grpc_door::detail
