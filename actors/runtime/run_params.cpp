#include "actors/runtime/run_params.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host {

namespace rpc = wire::jsonrpc;

run_params_fault read_run_params(std::string_view params, const actions::action_catalog& catalog,
                                 run_params& out, std::string& message) {
  auto split = rpc::split_object(params); // "" is no object either
  if (!split) {
    message = "Invalid params: params must be a JSON object";
    return run_params_fault::invalid;
  }
  auto& p = *split;
  auto* raw_key = p.find("key");
  if (!raw_key || !rpc::string_value(*raw_key, out.key)) {
    message = "Invalid params: 'key' must be a string";
    return run_params_fault::invalid;
  }
  out.action = catalog.find(out.key);
  if (!out.action) {
    message = "action " + out.key + " not found";
    return run_params_fault::unknown_action;
  }
  auto* ctx = p.find("context");
  if (ctx && *ctx != "null" && ctx->front() != '{') {
    message = "Invalid params: 'context' must be a JSON object";
    return run_params_fault::invalid;
  }
  if (ctx && *ctx != "null")
    out.context = *ctx;
  if (auto* s = p.find("stream"))
    rpc::is_bool(*s, out.stream);
  if (auto* s = p.find("streamInput"))
    rpc::is_bool(*s, out.stream_input);
  if (auto* x = p.find("input"))
    out.input = *x;
  if (auto* x = p.find("init"))
    out.init = *x;
  return run_params_fault::none;
}

} // namespace actor_host
