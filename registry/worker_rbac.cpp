#include "registry/worker_rbac.hpp"

#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"

#include <algorithm>

namespace actor_host::registry {

namespace rpc = wire::jsonrpc;

namespace {

// The infrastructure every session may call (engine v0.22.1).
constexpr std::string_view always_allowed[] = {
  "engine::channels::create", "engine::workers::register", "engine::log::info",
  "engine::log::warn",        "engine::log::error",        "engine::log::debug",
  "engine::log::trace",       "engine::baggage::get",      "engine::baggage::set",
  "engine::baggage::get_all",
};

bool string_list(const std::string& raw, std::vector<std::string>& out) {
  out.clear();
  if (raw.size() < 2 || raw.front() != '[')
    return false;
  // An array of strings: split it through a wrapper object.
  if (!rpc::split_object("{\"a\":" + raw + "}"))
    return false;
  std::string_view rest{raw};
  rest.remove_prefix(1);
  // Walk the elements: each must be a JSON string literal.
  while (true) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ',' || rest.front() == '\n'
                             || rest.front() == '\t' || rest.front() == '\r'))
      rest.remove_prefix(1);
    if (rest.empty())
      return false;
    if (rest.front() == ']')
      return true;
    if (rest.front() != '"')
      return false;
    std::size_t i = 1;
    while (i < rest.size() && rest[i] != '"')
      i += rest[i] == '\\' ? 2 : 1;
    std::string s;
    if (i >= rest.size() || !rpc::string_value(rest.substr(0, i + 1), s))
      return false;
    out.push_back(std::move(s));
    rest.remove_prefix(i + 1);
  }
}

bool contains(const std::vector<std::string>& xs, std::string_view x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

constexpr std::string_view metadata_filter = "metadata:";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// `key=glob[&key=glob...]` against a function's metadata object.
bool metadata_matches(std::string_view filter, const std::string& metadata) {
  if (metadata.empty())
    return false;
  auto split = rpc::split_object(metadata);
  if (!split)
    return false;
  auto& m = *split;
  while (!filter.empty()) {
    auto amp = filter.find('&');
    auto term = filter.substr(0, amp);
    auto eq = term.find('=');
    if (eq == std::string_view::npos)
      return false;
    auto* raw = m.find(trimmed(term.substr(0, eq)));
    if (!raw)
      return false;
    auto want = trimmed(term.substr(eq + 1));
    std::string text;
    if (rpc::string_value(*raw, text) ? !wire::iii::glob_match(want, text)
                                      : trimmed(*raw) != want)
      return false;
    if (amp == std::string_view::npos)
      break;
    filter.remove_prefix(amp + 1);
  }
  return true;
}

} // namespace

std::vector<std::string> worker_rbac_config::parse_list(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    auto comma = s.find(',');
    auto item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (!item.empty())
      out.emplace_back(item);
    if (comma == std::string_view::npos)
      break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

wire::expected<worker_session> parse_auth_result(std::string_view raw) {
  auto o = rpc::split_object(raw);
  if (!o)
    return wire::unexpected{"the auth function did not return an object"};
  worker_session s;
  // With an auth function, registering trigger types must be granted.
  s.allow_trigger_type_registration = false;
  for (auto& [key, value] : o->members) {
    if (value == "null")
      continue;
    bool ok = true;
    if (key == "allowed_functions") {
      ok = string_list(value, s.allowed_functions);
    } else if (key == "forbidden_functions") {
      ok = string_list(value, s.forbidden_functions);
    } else if (key == "allowed_trigger_types") {
      std::vector<std::string> types;
      ok = string_list(value, types);
      s.allowed_trigger_types = std::move(types);
    } else if (key == "allow_trigger_type_registration") {
      ok = rpc::is_bool(value, s.allow_trigger_type_registration);
    } else if (key == "allow_function_registration") {
      ok = rpc::is_bool(value, s.allow_function_registration);
    } else if (key == "context") {
      ok = !value.empty() && value.front() == '{';
      s.context = value;
    } else if (key == "function_registration_prefix") {
      ok = rpc::string_value(value, s.prefix);
    }
    if (!ok)
      return wire::unexpected{"AuthResult field '" + key + "' has the wrong type"};
  }
  return s;
}

invoke_decision check_invoke(const worker_rbac_config& config, const worker_session& session,
                             std::string_view id, const std::string* metadata) {
  if (contains(session.forbidden_functions, id))
    return invoke_decision::forbidden_listed;
  if (contains(session.allowed_functions, id))
    return invoke_decision::allow;
  for (auto a : always_allowed)
    if (a == id)
      return invoke_decision::allow;
  for (auto& pattern : config.expose_functions) {
    if (std::string_view{pattern}.starts_with(metadata_filter)) {
      if (metadata
          && metadata_matches(std::string_view{pattern}.substr(metadata_filter.size()), *metadata))
        return invoke_decision::allow;
    } else if (wire::iii::glob_match(pattern, id)) {
      return invoke_decision::allow;
    }
  }
  return invoke_decision::not_exposed;
}

bool has_metadata_filters(const worker_rbac_config& config) {
  return std::any_of(config.expose_functions.begin(), config.expose_functions.end(),
                     [](auto& p) { return std::string_view{p}.starts_with(metadata_filter); });
}

bool may_see(const worker_access* access, std::string_view id, const std::string* metadata) {
  return !access || !access->config
         || check_invoke(*access->config, access->session, id, metadata)
              == invoke_decision::allow;
}

bool is_reserved_function(const worker_rbac_config& c, std::string_view id) {
  if (id.starts_with("engine::"))
    return true;
  for (auto* reserved : {&c.auth_function, &c.on_function_registration,
                         &c.on_trigger_type_registration, &c.on_trigger_registration,
                         &c.middleware})
    if (!reserved->empty() && *reserved == id)
      return true;
  return false;
}

std::string forbidden_message(invoke_decision d, std::string_view id) {
  return "function '" + std::string{id} + "' not allowed ("
         + (d == invoke_decision::forbidden_listed ? "remove from rbac.forbidden_functions"
                                                   : "add to rbac.expose_functions")
         + ")";
}

std::string with_prefix(const worker_session& s, std::string_view id) {
  return s.prefix.empty() ? std::string{id} : s.prefix + "::" + std::string{id};
}

std::string without_prefix(const worker_session& s, std::string_view id) {
  if (s.prefix.empty())
    return std::string{id};
  auto p = s.prefix + "::";
  return id.starts_with(p) ? std::string{id.substr(p.size())} : std::string{id};
}

} // namespace actor_host::registry
