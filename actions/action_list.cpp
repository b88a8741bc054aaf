#include "actions/action_list.hpp"

#include <boost/json.hpp>

namespace actor_host::actions {

namespace json = boost::json;

bool normalize_list_actions(std::string& result, std::string& why) {
  json::error_code ec;
  auto v = json::parse(result, ec);
  if (ec || !v.is_object()) {
    why = "the result is not a JSON object";
    return false;
  }
  auto* actions = v.as_object().if_contains("actions");
  if (!actions || !actions->is_object()) {
    why = "the result has no 'actions' object";
    return false;
  }
  for (auto& [key, entry] : actions->as_object()) {
    if (!entry.is_object()) {
      why = "action " + std::string{key} + " is not an object";
      return false;
    }
    auto& o = entry.as_object();
    auto* name = o.if_contains("name");
    if (!name || !name->is_string()) {
      why = "action " + std::string{key} + " has no string 'name'";
      return false;
    }
    if (auto* md = o.if_contains("metadata"); md && md->is_null())
      o.erase("metadata");
    if (!o.contains("key"))
      o["key"] = key;
  }
  result = json::serialize(v);
  return true;
}

} // namespace actor_host::actions
