#include "registry/runtime_info.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>

namespace actor_host::registry {

namespace json = boost::json;

std::string runtime_info::to_json() const {
  json::object o;
  o["id"] = id;
  o["pid"] = pid;
  if (name)
    o["name"] = *name;
  if (genkit_version)
    o["genkitVersion"] = *genkit_version;
  if (spec_version) {
    double v = *spec_version;
    if (v == std::floor(v))
      o["reflectionApiSpecVersion"] = static_cast<std::int64_t>(v);
    else
      o["reflectionApiSpecVersion"] = v;
  }
  o["reflectionServerUrl"] = reflection_server_url;
  o["timestamp"] = timestamp;
  if (!protocol.empty())
    o["protocol"] = protocol;
  return json::serialize(o);
}

std::string peer_text_problem(std::string_view s, std::size_t max_bytes) {
  if (s.size() > max_bytes)
    return "is " + std::to_string(s.size()) + " bytes long (at most " + std::to_string(max_bytes)
           + ")";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return "contains a control character";
  }
  return {};
}

bool valid_trace_id(std::string_view s) {
  return !s.empty() && s.size() <= max_trace_id_bytes
         && std::all_of(s.begin(), s.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'
                     || c == '.';
            });
}

wire::expected<runtime_info> parse_register_params(std::string_view params) {
  if (params.empty())
    return wire::unexpected{"register needs params {id, pid}"};
  json::error_code ec;
  auto v = json::parse(params, ec);
  if (ec || !v.is_object())
    return wire::unexpected{"register params must be a JSON object"};
  auto& o = v.as_object();
  auto* id = o.if_contains("id");
  if (!id || !id->is_string() || id->as_string().empty())
    return wire::unexpected{"'id' must be a non-empty string"};
  auto* pid = o.if_contains("pid");
  if (!pid || !pid->is_number())
    return wire::unexpected{"'pid' must be a number"};
  auto view = [](const json::string& x) { return std::string_view{x.data(), x.size()}; };
  if (auto p = peer_text_problem(view(id->as_string()), max_peer_text_bytes); !p.empty())
    return wire::unexpected{"'id' " + p};
  // Converting a double outside int64's range is undefined ({"pid":1e300},
  // UBSan in fuzz_reflection_v2): take only integral values that fit.
  auto integral_double = [](const json::value& v) {
    return v.is_double() && v.as_double() >= -0x1p63 && v.as_double() < 0x1p63
           && v.as_double() == std::trunc(v.as_double());
  };
  runtime_info out;
  if (pid->is_int64())
    out.pid = pid->as_int64();
  else if (integral_double(*pid))
    out.pid = static_cast<std::int64_t>(pid->as_double());
  else
    return wire::unexpected{"'pid' must be a 64-bit integer"};
  out.id = std::string{id->as_string()};
  auto opt_string = [&](const char* key, std::optional<std::string>& dst) -> wire::expected<void> {
    auto* x = o.if_contains(key);
    if (!x || x->is_null())
      return {};
    if (!x->is_string())
      return wire::unexpected{std::string{"'"} + key + "' must be a string"};
    if (auto p = peer_text_problem(view(x->as_string()), max_peer_text_bytes); !p.empty())
      return wire::unexpected{std::string{"'"} + key + "' " + p};
    dst = std::string{x->as_string()};
    return {};
  };
  if (auto r = opt_string("name", out.name); !r)
    return wire::unexpected{std::move(r).error()};
  if (auto r = opt_string("genkitVersion", out.genkit_version); !r)
    return wire::unexpected{std::move(r).error()};
  if (auto* x = o.if_contains("reflectionApiSpecVersion"); x && !x->is_null()) {
    if (!x->is_number())
      return wire::unexpected{"'reflectionApiSpecVersion' must be a number"};
    out.spec_version = x->to_number<double>();
  }
  if (auto* x = o.if_contains("envs"); x && !x->is_null()) {
    bool ok = x->is_array();
    if (ok)
      for (auto& e : x->as_array())
        ok = ok && e.is_string();
    if (!ok)
      return wire::unexpected{"'envs' must be an array of strings"};
  }
  return out;
}

std::string iso_timestamp_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto t = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  auto n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03lldZ", static_cast<long long>(ms));
  return buf;
}

} // namespace actor_host::registry
