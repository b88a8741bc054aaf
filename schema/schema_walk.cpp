#include "schema/schema_walk.hpp"

#include <re2/re2.h>

namespace actor_host::schema::detail {

namespace json = boost::json;

const json::value* member(const json::value* v, std::string_view key) {
  if (!v)
    return nullptr;
  auto* o = v->if_object();
  return o ? o->if_contains(key) : nullptr;
}

/// Follows local "$ref"s ("#/..."); nullptr for a ref it cannot resolve.
const json::value* resolve(const json::value& root, const json::value* s) {
  for (int hops = 0; s && hops < 32; ++hops) {
    auto* ref = member(s, "$ref");
    if (!ref || !ref->is_string())
      return s;
    std::string_view r = ref->get_string();
    if (r.empty() || r.front() != '#')
      return nullptr;
    r.remove_prefix(1);
    if (r.empty()) {
      s = &root;
      continue;
    }
    boost::system::error_code ec;
    s = root.find_pointer(r, ec);
  }
  return nullptr;
}

std::shared_ptr<const re2::RE2> compile_re2(std::string_view pattern, std::string* why) {
  re2::RE2::Options o;
  o.set_log_errors(false);
  // ajv compiles with the "u" flag: patterns and inputs are Unicode.
  o.set_encoding(re2::RE2::Options::EncodingUTF8);
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece{pattern.data(), pattern.size()}, o);
  if (!re->ok()) {
    if (why && why->empty())
      *why = "invalid pattern \"" + std::string{pattern} + "\": " + re->error()
             + " (patterns are matched with RE2: no lookaround or backreferences)";
    return nullptr;
  }
  return re;
}

} // namespace actor_host::schema::detail
