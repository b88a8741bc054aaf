#include "actions/action_list.hpp"

#include <boost/json.hpp>

namespace actor_host::actions {

namespace json = boost::json;

wire::expected<std::string> normalize_list_actions(std::string_view result) {
  json::error_code ec;
  auto v = json::parse(result, ec);
  if (ec || !v.is_object())
    return wire::unexpected{"the result is not a JSON object"};
  auto* actions = v.as_object().if_contains("actions");
  if (!actions || !actions->is_object())
    return wire::unexpected{"the result has no 'actions' object"};
  for (auto& [key, entry] : actions->as_object()) {
    if (!entry.is_object())
      return wire::unexpected{"action " + std::string{key} + " is not an object"};
    auto& o = entry.as_object();
    auto* name = o.if_contains("name");
    if (!name || !name->is_string())
      return wire::unexpected{"action " + std::string{key} + " has no string 'name'"};
    if (auto* md = o.if_contains("metadata"); md && md->is_null())
      o.erase("metadata");
    if (!o.contains("key"))
      o["key"] = key;
  }
  return json::serialize(v);
}

} // namespace actor_host::actions
