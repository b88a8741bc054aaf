#include "actors/call/call_request.hpp"

#include "actors/call/errors.hpp"
#include "wire/jsonrpc.hpp"

namespace actor_host {

namespace rpc = wire::jsonrpc;

std::string_view method_name(call_method m) {
  switch (m) {
    case call_method::run_action:
      return "runAction";
    case call_method::list_actions:
      return "listActions";
    case call_method::list_values:
      return "listValues";
    case call_method::cancel_action:
      return "cancelAction";
  }
  return "runAction";
}

namespace {

call_error invalid(const std::string& detail) {
  return manager_errors::invalid_params(detail);
}

// A runAction flag: the door's, else the caller's boolean, else false.
bool read_flag(const rpc::object_members& p, const char* name, std::optional<bool> forced,
               bool& out, std::optional<call_error>& error) {
  if (forced) {
    out = *forced;
    return true;
  }
  out = false;
  auto* raw = p.find(name);
  if (!raw || rpc::is_bool(*raw, out))
    return true;
  error = invalid(std::string{"'"} + name + "' must be a boolean");
  return false;
}

} // namespace

std::optional<call_error> parse_run_action(std::string params, const call_policy& policy,
                                           run_flags forced, call_request& out) {
  if (params.empty())
    return invalid("runAction needs a JSON object {key, input?, ...}; 'key' is missing");
  // One full pass checks the JSON all the way down (the params reach the
  // runtime as written), a second splits the top level.
  // Both on the params themselves (padded once), not on copies.
  std::string why;
  if (!rpc::validate_in_place(params, &why))
    return manager_errors::rpc_error(rpc::code::parse_error, "Parse error: " + why);
  auto split = rpc::split_object_in_place(params);
  if (!split)
    return invalid("runAction params must be a JSON object {key, input?, ...}");
  auto& p = *split;
  auto* raw_key = p.find("key");
  if (!raw_key || !rpc::string_value(*raw_key, out.key) || out.key.empty())
    return invalid("'key' must be an action key such as \"/flow/echo\"");
  if (auto* raw = p.find("runtimeId"); raw && *raw != "null"
                                       && !rpc::string_value(*raw, out.runtime_id))
    return invalid("'runtimeId' must be a string");
  if (auto* raw = p.find("runtimeName"); raw && *raw != "null"
                                         && !rpc::string_value(*raw, out.runtime_name))
    return invalid("'runtimeName' must be a string (the name a service's runtimes registered with)");
  std::optional<call_error> error;
  if (!read_flag(p, "stream", forced.stream, out.stream, error)
      || !read_flag(p, "streamInput", forced.stream_input, out.stream_input, error))
    return error;
  if (!read_timeout(p.find("timeoutMs"), policy.run_timeout, out.timeout))
    return invalid("'timeoutMs' must be a non-negative number");
  out.method = call_method::run_action;
  if (!forced.stream && !forced.stream_input) {
    out.params = std::move(params);
    return {};
  }
  // As Genkit's manager does ({...request, stream, streamInput}): the
  // caller's members, with the flags this door decides.
  // Appended in place: a temporary per member was most of a call's
  // allocations here.
  out.params.clear();
  out.params.reserve(params.size() + 40);
  out.params += '{';
  for (auto& [k, v] : p.members) {
    if (k == "stream" || k == "streamInput")
      continue;
    rpc::append_quoted(out.params, k);
    out.params += ':';
    out.params += v;
    out.params += ',';
  }
  out.params += out.stream ? R"("stream":true,)" : R"("stream":false,)";
  out.params += out.stream_input ? R"("streamInput":true})" : R"("streamInput":false})";
  return {};
}

call_request list_actions_call(std::string runtime_id, const call_policy& policy) {
  call_request c;
  c.method = call_method::list_actions;
  c.runtime_id = std::move(runtime_id);
  c.timeout = policy.request_timeout;
  return c;
}

namespace {

// A call whose params are one string member, e.g. {"type":"defaultModel"}.
call_request one_member_call(call_method method, std::string runtime_id, const char* member,
                             std::string_view value, const call_policy& policy) {
  auto c = list_actions_call(std::move(runtime_id), policy);
  c.method = method;
  c.params = std::string{"{\""} + member + "\":" + rpc::quote(value) + "}";
  return c;
}

} // namespace

call_request list_values_call(std::string runtime_id, std::string_view type,
                              const call_policy& policy) {
  return one_member_call(call_method::list_values, std::move(runtime_id), "type", type, policy);
}

call_request cancel_action_call(std::string runtime_id, std::string_view trace_id,
                                const call_policy& policy) {
  return one_member_call(call_method::cancel_action, std::move(runtime_id), "traceId", trace_id,
                         policy);
}

bool read_timeout(const std::string* raw, caf::timespan fallback, caf::timespan& out) {
  out = fallback;
  if (!raw || *raw == "null")
    return true;
  double ms = 0;
  // Above the cap (JavaScript's setTimeout limit) the nanosecond count
  // overflows: 1e300 would mean no timeout at all.
  if (!wire::jsonrpc::number_value(*raw, ms) || !(ms >= 0) || ms > max_timeout_ms)
    return false;
  out = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double, std::milli>(ms));
  return true;
}

} // namespace actor_host
