#include "wire/iii_protocol.hpp"
#include "wire/secure_random.hpp"
#include "wire/status.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <vector>

namespace actor_host::wire::iii {

namespace rpc = jsonrpc;

namespace {

// Appends `,"name":raw` when `raw` is set.
void member(std::string& out, std::string_view name, std::string_view raw) {
  if (raw.empty())
    return;
  out += ",\"";
  out += name;
  out += "\":";
  out += raw;
}

void string_member(std::string& out, std::string_view name, std::string_view text) {
  if (!text.empty())
    member(out, name, rpc::quote(text));
}

std::string head(std::string_view type) {
  std::string out = R"({"type":")";
  out += type;
  out += '"';
  return out;
}

// A member of a raw object, as raw JSON ("" when absent or not an object).
std::string raw_member(std::string_view object, std::string_view name) {
  auto o = rpc::split_object(object);
  if (!o)
    return {};
  auto* v = o->find(name);
  return v ? *v : std::string{};
}

std::string string_of(std::string_view raw) {
  std::string s;
  rpc::string_value(raw, s);
  return s;
}

} // namespace

std::string frame::text(std::string_view name) const {
  auto* raw = members.find(name);
  return raw ? string_of(*raw) : std::string{};
}

wire::expected<frame> decode(std::string_view text) {
  // Members are relayed as raw text: `NaN` or `tru` in one would reach the
  // other worker as is. split_object only checks the structure.
  if (std::string why; !rpc::validate(text, &why))
    return wire::unexpected{"not valid JSON: " + why};
  auto members = rpc::split_object(text);
  if (!members)
    return wire::unexpected{std::move(members).error()};
  frame f;
  f.members = std::move(*members);
  auto* type = f.members.find("type");
  if (!type || !rpc::string_value(*type, f.type) || f.type.empty())
    return wire::unexpected{"no string 'type'"};
  return f;
}

std::string error_object(std::string_view code, std::string_view message,
                         std::string_view stacktrace) {
  std::string out = R"({"code":)" + rpc::quote(code) + R"(,"message":)" + rpc::quote(message);
  string_member(out, "stacktrace", stacktrace);
  out += '}';
  return out;
}

std::string worker_registered(std::string_view worker_id, std::string_view reattach_token) {
  auto out = head("workerregistered");
  string_member(out, "worker_id", worker_id);
  string_member(out, "reattach_token", reattach_token);
  return out + '}';
}

std::string invoke_function(std::string_view invocation_id, std::string_view function_id,
                            std::string_view data, std::string_view metadata,
                            std::string_view traceparent, std::string_view baggage) {
  auto out = head("invokefunction");
  out.reserve(out.size() + data.size() + metadata.size() + 160);
  string_member(out, "invocation_id", invocation_id);
  member(out, "function_id", rpc::quote(function_id));
  member(out, "data", data.empty() ? std::string_view{"null"} : data);
  if (metadata != "null")
    member(out, "metadata", metadata);
  string_member(out, "traceparent", traceparent);
  string_member(out, "baggage", baggage);
  return out + '}';
}

std::string invocation_result(std::string_view invocation_id, std::string_view function_id,
                              bool ok, std::string_view raw, std::string_view traceparent,
                              std::string_view baggage) {
  auto out = head("invocationresult");
  out.reserve(out.size() + raw.size() + 128);
  member(out, "invocation_id", rpc::quote(invocation_id));
  member(out, "function_id", rpc::quote(function_id));
  member(out, ok ? "result" : "error", raw);
  string_member(out, "traceparent", traceparent);
  string_member(out, "baggage", baggage);
  return out + '}';
}

std::string register_trigger(std::string_view id, std::string_view trigger_type,
                             std::string_view function_id, std::string_view config,
                             std::string_view metadata) {
  auto out = head("registertrigger");
  member(out, "id", rpc::quote(id));
  member(out, "trigger_type", rpc::quote(trigger_type));
  member(out, "function_id", rpc::quote(function_id));
  member(out, "config", config.empty() ? std::string_view{"null"} : config);
  if (metadata != "null")
    member(out, "metadata", metadata);
  return out + '}';
}

std::string unregister_trigger(std::string_view id, std::string_view trigger_type) {
  auto out = head("unregistertrigger");
  member(out, "id", rpc::quote(id));
  member(out, "trigger_type", rpc::quote(trigger_type));
  return out + '}';
}

std::string trigger_registration_result(std::string_view id, std::string_view trigger_type,
                                        std::string_view function_id, std::string_view error) {
  auto out = head("triggerregistrationresult");
  member(out, "id", rpc::quote(id));
  member(out, "trigger_type", rpc::quote(trigger_type));
  member(out, "function_id", rpc::quote(function_id));
  member(out, "error", error);
  return out + '}';
}

std::string auth_error_frame(std::string_view message) {
  return head("error") + R"(,"error":)" + error_object(code::auth_error, message) + "}";
}

std::string new_uuid() {
  std::array<unsigned char, 16> b;
  secure_random_bytes(b.data(), b.size());
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40); // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80); // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof(out),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

bool is_uuid(std::string_view s) {
  if (s.size() != 36)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-')
        return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

std::string with_caller_worker_id(const std::string& data, std::string_view worker_id) {
  auto o = rpc::split_object(data);
  if (!o)
    return data;
  std::string out;
  out.reserve(data.size() + worker_id.size() + 32);
  out += '{';
  for (auto& [k, v] : o->members) {
    if (k == "_caller_worker_id")
      continue;
    out += rpc::quote(k);
    out += ':';
    out += v;
    out += ',';
  }
  out += R"("_caller_worker_id":)";
  out += rpc::quote(worker_id);
  out += '}';
  return out;
}

std::string query_params_json(std::string_view target) {
  auto q = target.find('?');
  std::vector<std::pair<std::string, std::vector<std::string>>> params;
  if (q != std::string_view::npos) {
    auto rest = target.substr(q + 1);
    while (!rest.empty()) {
      auto amp = rest.find('&');
      auto pair = rest.substr(0, amp);
      rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
      if (pair.empty())
        continue;
      auto eq = pair.find('=');
      std::string key{pair.substr(0, eq)};
      std::string value{eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1)};
      auto i = std::find_if(params.begin(), params.end(), [&](auto& p) { return p.first == key; });
      if (i == params.end())
        params.push_back({std::move(key), {std::move(value)}});
      else
        i->second.push_back(std::move(value));
    }
  }
  std::string out = "{";
  for (auto& [k, vs] : params) {
    if (out.size() > 1)
      out += ',';
    out += rpc::quote(k) + ":[";
    for (std::size_t i = 0; i < vs.size(); ++i)
      out += (i ? "," : "") + rpc::quote(vs[i]);
    out += ']';
  }
  return out + '}';
}

std::string headers_json(const std::map<std::string, std::string>& headers) {
  std::string out = "{";
  for (auto& [k, v] : headers) {
    if (out.size() > 1)
      out += ',';
    out += rpc::quote(k) + ':' + rpc::quote(v);
  }
  return out + '}';
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with one backtrack point: linear enough for ids.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (pi < p.size() && p[pi] == t[ti]) {
      ++pi;
      ++ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*')
    ++pi;
  return pi == p.size();
}

wire::expected<genkit_target> parse_genkit_function_id(std::string_view id) {
  if (!id.starts_with(genkit_prefix))
    return wire::unexpected{"not a genkit:: function id"};
  auto rest = id.substr(genkit_prefix.size());
  genkit_target t;
  if (!rest.starts_with('/')) {
    auto sep = rest.find("::");
    if (sep == std::string_view::npos || sep == 0)
      return wire::unexpected{
        "expected genkit::<runtimeId>::<action key> or genkit::<action key>"};
    t.runtime_id = std::string{rest.substr(0, sep)};
    rest = rest.substr(sep + 2);
  }
  if (!rest.starts_with('/') || rest.size() < 2)
    return wire::unexpected{"the action key must start with '/', e.g. /flow/echo"};
  t.key = std::string{rest};
  return t;
}

std::string genkit_result_to_iii(const std::string& run_result) {
  return raw_member(run_result, "result");
}

std::string genkit_error_to_iii(const std::string& error) {
  std::string message;
  int status = 0;
  double rpc_code = 0;
  std::string stack;
  if (auto e = rpc::split_object(error)) {
    if (auto* m = e->find("message"))
      message = string_of(*m);
    if (auto* c = e->find("code"))
      rpc::number_value(*c, rpc_code);
    if (auto* d = e->find("data"))
      if (auto data = rpc::split_object(*d)) {
        double n = 0;
        if (auto* c = data->find("code"); c && rpc::number_value(*c, n))
          if (auto code = wire::status_from_json_number(n))
            status = static_cast<int>(*code);
        if (auto* m = data->find("message"); m && !string_of(*m).empty())
          message = string_of(*m);
        if (auto* det = data->find("details"))
          if (auto details = rpc::split_object(*det))
            if (auto* s = details->find("stack"))
              stack = string_of(*s);
      }
  }
  if (message.empty())
    message = "Genkit action failed";
  // Runtimes answer an unknown action key without a Status (-32602 in Genkit
  // JS, "action /flow/x not found").
  if (status == 0 && (rpc_code == rpc::code::method_not_found
                      || (rpc_code == rpc::code::invalid_params
                          && message.find("not found") != std::string::npos)))
    status = 5;
  std::string_view c = code::invocation_failed;
  switch (status) {
    case 4: c = code::timeout; break;
    case 5: c = code::function_not_found; break;
    case 7: c = code::forbidden; break;
    case 14: c = code::invocation_stopped; break;
    default: break;
  }
  return error_object(c, message, stack);
}

std::string iii_result_to_genkit(const std::string& result, std::string_view trace_id) {
  return R"({"result":)" + (result.empty() ? std::string{"null"} : result)
         + R"(,"telemetry":{"traceId":)" + rpc::quote(trace_id) + "}}";
}

int genkit_status_of(std::string_view c) {
  if (c == code::function_not_found)
    return 5; // NOT_FOUND
  if (c == code::invocation_stopped)
    return 14; // UNAVAILABLE
  if (c == code::timeout)
    return 4; // DEADLINE_EXCEEDED
  if (c == code::forbidden)
    return 7; // PERMISSION_DENIED
  return 13; // INTERNAL: the function threw
}

std::string iii_error_to_genkit(std::string_view c, std::string_view message,
                                std::string_view stack) {
  if (message.empty())
    message = "iii function failed";
  std::string details = R"({"iiiCode":)" + rpc::quote(c);
  string_member(details, "stack", stack);
  details += '}';
  auto data = R"({"code":)" + std::to_string(genkit_status_of(c)) + R"(,"message":)"
              + rpc::quote(message) + R"(,"details":)" + details + "}";
  return rpc::error_object(rpc::code::server_error, message, data);
}

std::string iii_error_to_genkit(const std::string& error) {
  std::string c, message, stack;
  if (auto e = rpc::split_object(error)) {
    if (auto* x = e->find("code"))
      c = string_of(*x);
    if (auto* x = e->find("message"))
      message = string_of(*x);
    if (auto* x = e->find("stacktrace"))
      stack = string_of(*x);
  }
  return iii_error_to_genkit(c, message, stack);
}

} // namespace actor_host::wire::iii
