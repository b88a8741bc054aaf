#include "wire/json_raw.hpp"

namespace actor_host::wire::json_raw {

namespace od = simdjson::ondemand;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r'
                        || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

simdjson::error_code raw_of(od::value v, std::string_view& out) {
  od::json_type t;
  if (auto e = v.type().get(t))
    return e;
  if (t == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o))
      return e;
    return o.raw_json().get(out);
  }
  if (t == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a))
      return e;
    return a.raw_json().get(out);
  }
  out = trim(v.raw_json_token());
  return simdjson::SUCCESS;
}

} // namespace actor_host::wire::json_raw
