#include "schema/json_schema.hpp"

#include "net/jsonrpc.hpp"

// valijson reports schema errors by throwing only with this set (else it
// prints and calls abort()).
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/constraint_builder.hpp>
#include <valijson/constraints/concrete_constraints.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <boost/json/parse.hpp>

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <cmath>
#include <cstdio>
#include <functional>
#include <locale>
#include <new>
#include <stdexcept>

namespace actor_host::schema {

namespace json = boost::json;

// -- JSON text as JavaScript writes it ----------------------------------------

namespace {

/// ECMAScript Number::toString(10); JSON.stringify writes null for what is
/// not finite (a number like 1e309 parses as infinity).
std::string js_number(double x) {
  if (!std::isfinite(x))
    return "null";
  if (x == 0)
    return "0"; // also -0
  char buf[40];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  if (ec != std::errc{})
    return "null";
  std::string_view s{buf, static_cast<size_t>(end - buf)};
  std::string out;
  if (s.front() == '-') {
    out += '-';
    s.remove_prefix(1);
  }
  // s = d[.ddd]e±XX: digits and decimal exponent.
  auto epos = s.find('e');
  std::string digits{s.substr(0, 1)};
  if (epos > 1)
    digits += s.substr(2, epos - 2);
  int exp = std::atoi(std::string{s.substr(epos + 1)}.c_str());
  int k = static_cast<int>(digits.size());
  int n = exp + 1; // position of the decimal point
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<size_t>(n));
    out += '.';
    out += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out += digits.substr(0, 1);
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

void write_json(std::string& out, const json::value& v, int step, std::string& indent) {
  auto newline = [&] {
    if (step > 0) {
      out += '\n';
      out += indent;
    }
  };
  switch (v.kind()) {
    case json::kind::null: out += "null"; break;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
    case json::kind::int64: out += std::to_string(v.get_int64()); break;
    case json::kind::uint64: out += std::to_string(v.get_uint64()); break;
    case json::kind::double_: out += js_number(v.get_double()); break;
    case json::kind::string: out += net::jsonrpc::quote(v.get_string()); break;
    case json::kind::array: {
      auto& a = v.get_array();
      if (a.empty()) {
        out += "[]";
        break;
      }
      out += '[';
      indent.append(static_cast<size_t>(step), ' ');
      for (size_t i = 0; i < a.size(); ++i) {
        if (i > 0)
          out += ',';
        newline();
        write_json(out, a[i], step, indent);
      }
      indent.resize(indent.size() - static_cast<size_t>(step));
      newline();
      out += ']';
      break;
    }
    case json::kind::object: {
      auto& o = v.get_object();
      if (o.empty()) {
        out += "{}";
        break;
      }
      out += '{';
      indent.append(static_cast<size_t>(step), ' ');
      bool first = true;
      for (auto& m : o) {
        if (!first)
          out += ',';
        first = false;
        newline();
        out += net::jsonrpc::quote(m.key());
        out += step > 0 ? ": " : ":";
        write_json(out, m.value(), step, indent);
      }
      indent.resize(indent.size() - static_cast<size_t>(step));
      newline();
      out += '}';
      break;
    }
  }
}

// -- schema walking ------------------------------------------------------------

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

// -- patterns through RE2 ---------------------------------------------------------
//
// valijson matches `pattern` with std::regex, whose executor recurses once
// per input character: a 100k-character string overflows the stack. RE2
// runs in linear time without recursion; it lacks lookaround and
// backreferences, which such schemas are then refused for (at compile).

/// valijson's keyword for our RE2 `pattern` (the schema's own `pattern` is
/// renamed to it before valijson sees the schema).
constexpr const char* re2_pattern_keyword = "x-actor-host-re2-pattern";

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

/// A `pattern` as valijson runs it, matched by RE2 (search, as ajv's
/// RegExp.test); reports valijson's own pattern message, which translate()
/// words as ajv does.
class re2_pattern final : public valijson::constraints::PolyConstraint {
public:
  explicit re2_pattern(std::shared_ptr<const re2::RE2> re) : re_(std::move(re)) {
  }

  bool validate(const valijson::adapters::Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString())
      return true;
    auto text = target.getString();
    if (re2::RE2::PartialMatch(re2::StringPiece{text.data(), text.size()}, *re_))
      return true;
    if (results)
      results->pushError(context, "Failed to match regex specified by 'pattern' constraint.");
    return false;
  }

private:
  valijson::constraints::Constraint* cloneInto(void* where) const override {
    return new (where) re2_pattern(*this);
  }
  size_t sizeOf() const override {
    return sizeof(re2_pattern);
  }

  std::shared_ptr<const re2::RE2> re_;
};

class re2_pattern_builder final : public valijson::ConstraintBuilder {
public:
  valijson::constraints::Constraint* make(const valijson::adapters::Adapter& value) const override {
    std::string why;
    auto re = value.isString() ? compile_re2(value.getString(), &why) : nullptr;
    if (!re) // prepare() compiled it already; cannot happen
      throw std::runtime_error(why.empty() ? "pattern must be a string" : why);
    return new re2_pattern(std::move(re));
  }
};

void check_pattern(std::string_view pattern, std::string& why) {
  compile_re2(pattern, &why);
}

/// Prepares a schema for valijson: removes the `format` keywords (checked by
/// check_formats instead: valijson reads them with asString(), which throws
/// for non-empty objects/arrays, and checks non-strings, which ajv ignores),
/// renames `pattern` to our RE2 keyword and checks that the patterns compile
/// (`patternProperties` stays valijson's: see max_pattern_key_length).
void prepare(json::value& s, std::string& why, bool& pattern_properties) {
  auto* o = s.if_object();
  if (!o)
    return;
  if (auto* f = o->if_contains("format"); f && f->is_string())
    o->erase("format");
  if (auto* p = o->if_contains("pattern"); p && p->is_string()) {
    check_pattern(p->get_string(), why);
    json::value text = *p;
    o->erase("pattern");
    (*o)[re2_pattern_keyword] = std::move(text);
  }
  if (o->contains("patternProperties"))
    pattern_properties = true;
  if (auto* m = o->if_contains("patternProperties"); m && m->is_object())
    for (auto& kv : m->get_object())
      check_pattern(kv.key(), why);
  for (auto* key : {"properties", "patternProperties", "definitions", "$defs", "dependencies"})
    if (auto* m = o->if_contains(key); m && m->is_object())
      for (auto& kv : m->get_object())
        prepare(kv.value(), why, pattern_properties);
  for (auto* key : {"items", "allOf", "anyOf", "oneOf"})
    if (auto* m = o->if_contains(key)) {
      if (m->is_array())
        for (auto& e : m->get_array())
          prepare(e, why, pattern_properties);
      else
        prepare(*m, why, pattern_properties);
    }
  for (auto* key : {"additionalItems", "additionalProperties", "contains", "propertyNames", "not",
                    "if", "then", "else"})
    if (auto* m = o->if_contains(key))
      prepare(*m, why, pattern_properties);
}

bool uses_format(const json::value& v) {
  if (auto* a = v.if_array())
    return std::any_of(a->begin(), a->end(), uses_format);
  if (auto* o = v.if_object())
    return std::any_of(o->begin(), o->end(), [](auto& kv) {
      return (kv.key() == "format" && kv.value().is_string()) || uses_format(kv.value());
    });
  return false;
}

/// Longest property name matched against `patternProperties` (which
/// valijson still runs through std::regex: its recursion stays bounded).
constexpr std::size_t max_pattern_key_length = 1024;

/// The first property name (anywhere in `v`) longer than the cap, or "".
std::string long_key(const json::value& v) {
  if (auto* a = v.if_array()) {
    for (auto& e : *a)
      if (auto k = long_key(e); !k.empty())
        return k;
  } else if (auto* o = v.if_object()) {
    for (auto& kv : *o) {
      if (kv.key().size() > max_pattern_key_length)
        return std::string{kv.key()};
      if (auto k = long_key(kv.value()); !k.empty())
        return k;
    }
  }
  return {};
}

bool uses_integer(const json::value& v) {
  if (auto* s = v.if_string())
    return *s == "integer";
  if (auto* a = v.if_array())
    return std::any_of(a->begin(), a->end(), uses_integer);
  if (auto* o = v.if_object())
    return std::any_of(o->begin(), o->end(), [](auto& kv) { return uses_integer(kv.value()); });
  return false;
}

bool is_integral_double(const json::value& v) {
  if (!v.is_double())
    return false;
  double d = v.get_double();
  return std::trunc(d) == d && std::fabs(d) <= 9007199254740992.0;
}

bool has_integral_doubles(const json::value& v) {
  if (auto* a = v.if_array())
    return std::any_of(a->begin(), a->end(), has_integral_doubles);
  if (auto* o = v.if_object())
    return std::any_of(o->begin(), o->end(),
                       [](auto& kv) { return has_integral_doubles(kv.value()); });
  return is_integral_double(v);
}

/// 2.0 → 2, so that valijson's "integer" (int64 only) accepts what JS does.
void integralize(json::value& v) {
  if (auto* a = v.if_array())
    for (auto& e : *a)
      integralize(e);
  else if (auto* o = v.if_object())
    for (auto& kv : *o)
      integralize(kv.value());
  else if (is_integral_double(v))
    v = static_cast<std::int64_t>(v.get_double());
}

// -- formats -----------------------------------------------------------------

/// ajv-formats' "full" checks for the formats zod emits most; others pass.
/// RE2 (linear, no recursion): these see untrusted strings of any length.
bool format_ok(std::string_view format, const std::string& s) {
  auto make = [](const char* pattern) {
    re2::RE2::Options o;
    o.set_case_sensitive(false);
    o.set_log_errors(false);
    return std::make_unique<const re2::RE2>(pattern, o);
  };
  re2::StringPiece text{s.data(), s.size()};
  if (format == "email") {
    static const auto re
      = make(R"([a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*)"
             R"(@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)");
    return re2::RE2::FullMatch(text, *re);
  }
  if (format == "uuid") {
    static const auto re = make(R"((?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})");
    return re2::RE2::FullMatch(text, *re);
  }
  if (format == "date" || format == "date-time") {
    static const auto date = make(R"((\d\d\d\d)-(\d\d)-(\d\d))");
    static const auto date_time
      = make(R"((\d\d\d\d)-(\d\d)-(\d\d)(?:t|\s)(\d\d):(\d\d):(\d\d)(?:\.\d+)?)"
             R"((?:z|[+-]\d\d(?::?\d\d)?))");
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    bool matched = format == "date" ? re2::RE2::FullMatch(text, *date, &y, &mo, &d)
                                    : re2::RE2::FullMatch(text, *date_time, &y, &mo, &d, &h, &mi, &se);
    if (!matched)
      return false;
    static constexpr int days[] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (mo < 1 || mo > 12 || d < 1 || d > (mo == 2 && !leap ? 28 : days[mo]))
      return false;
    if (format == "date-time")
      return h <= 23 && mi <= 59 && se <= 60;
    return true;
  }
  return true;
}

/// An error reported inside branch `index` of the `keyword` (anyOf/oneOf)
/// at depth `depth` of its instance path.
struct branch {
  size_t depth;
  std::string keyword;
  long index;
};

struct failure {
  std::vector<std::string> path{};
  std::string message{}; // valijson's description, then ajv's message
  int rank = 9; // ajv's keyword order at one node
  int self = -1; // its index in valijson's report (unique)
  int parent = -1; // `self` of the innermost failed anyOf/oneOf it is part of
  bool head = false; // it is such an anyOf/oneOf failure
  std::vector<branch> branches{}; // outermost first
  std::vector<long> key{};
};

/// Checks `format` keywords along properties / additionalProperties / items /
/// allOf (not inside anyOf/oneOf). Stops at the first failure if `out` is null.
bool check_formats(const json::value& root, const json::value* s, const json::value& v,
                   std::vector<std::string>& path, std::vector<failure>* out) {
  s = resolve(root, s);
  if (!s || !s->is_object())
    return true;
  bool ok = true;
  auto* f = member(s, "format");
  if (f && f->is_string() && v.is_string()
      && !format_ok(f->get_string(), std::string{v.get_string()})) {
    if (!out)
      return false;
    out->push_back({path, "must match format \"" + std::string{f->get_string()} + "\"", 3});
    ok = false;
  }
  // Checks a subschema; false = stop here (failed, and only the verdict is wanted).
  auto sub = [&](const json::value* ss, const json::value& vv, const std::string* seg) {
    if (seg)
      path.push_back(*seg);
    bool r = check_formats(root, ss, vv, path, out);
    if (seg)
      path.pop_back();
    ok = ok && r;
    return r || out != nullptr;
  };
  if (auto* all = member(s, "allOf"); all && all->is_array())
    for (auto& ss : all->get_array())
      if (!sub(&ss, v, nullptr))
        return false;
  if (auto* o = v.if_object()) {
    auto* props = member(s, "properties");
    auto* extra = member(s, "additionalProperties");
    for (auto& kv : *o) {
      auto* ss = member(props, kv.key());
      if (!ss && !member(s, "patternProperties"))
        ss = extra;
      std::string seg{kv.key()};
      if (ss && !sub(ss, kv.value(), &seg))
        return false;
    }
  } else if (auto* a = v.if_array()) {
    auto* items = member(s, "items");
    for (size_t i = 0; items && i < a->size(); ++i) {
      auto* ss = items->is_array() ? (i < items->get_array().size() ? &items->get_array()[i]
                                                                     : member(s, "additionalItems"))
                                   : items;
      auto seg = std::to_string(i);
      if (ss && !sub(ss, (*a)[i], &seg))
        return false;
    }
  }
  return ok;
}

// -- ajv-like error reports ----------------------------------------------------

/// The property subschema `seg` of `s`, looked up through allOf/anyOf/oneOf
/// branches if `s` itself has none; `ord` = its position in `properties`.
const json::value* property(const json::value& root, const json::value* s, const std::string& seg,
                            long& ord, int depth = 0) {
  if (auto* props = member(s, "properties"); props && props->is_object()) {
    long i = 0;
    for (auto& kv : props->get_object()) {
      if (kv.key() == seg) {
        ord = i;
        return &kv.value();
      }
      ++i;
    }
  }
  if (depth < 4)
    for (auto* keyword : {"allOf", "anyOf", "oneOf"})
      if (auto* list = member(s, keyword); list && list->is_array())
        for (auto& b : list->get_array())
          if (auto* found = property(root, resolve(root, &b), seg, ord, depth + 1))
            return found;
  return nullptr;
}

/// Schema node and sort key (ajv's evaluation order) for an instance path;
/// `branches` (outermost first) say which anyOf/oneOf branch to follow.
const json::value* locate(const json::value& root, const json::value& instance,
                          const std::vector<std::string>& path, const std::vector<branch>& branches,
                          std::vector<long>& key) {
  const json::value* s = resolve(root, &root);
  const json::value* v = &instance;
  auto enter_branches = [&](size_t depth) {
    for (auto& b : branches)
      if (b.depth == depth) {
        auto* list = member(s, b.keyword);
        if (!list || !list->is_array() || b.index < 0
            || static_cast<size_t>(b.index) >= list->get_array().size())
          return;
        s = resolve(root, &list->get_array()[static_cast<size_t>(b.index)]);
      }
  };
  for (size_t depth = 0; depth < path.size(); ++depth) {
    enter_branches(depth);
    auto& seg = path[depth];
    long ord = 1'000'000;
    const json::value* next_s = nullptr;
    const json::value* next_v = nullptr;
    if (auto* o = v ? v->if_object() : nullptr) {
      next_v = o->if_contains(seg);
      next_s = property(root, s, seg, ord);
      if (auto* patterns = member(s, "patternProperties"); !next_s && patterns && patterns->is_object())
        for (auto& kv : patterns->get_object())
          if (auto re = compile_re2(kv.key(), nullptr);
              re && re2::RE2::PartialMatch(re2::StringPiece{seg.data(), seg.size()}, *re)) {
            next_s = &kv.value();
            break;
          }
      if (!next_s) {
        if (auto* extra = member(s, "additionalProperties"); extra && extra->is_object())
          next_s = extra;
        long i = 0;
        for (auto& kv : *o) {
          if (kv.key() == seg)
            ord = 100'000 + i;
          ++i;
        }
      }
    } else if (auto* a = v ? v->if_array() : nullptr) {
      size_t i = std::strtoul(seg.c_str(), nullptr, 10);
      ord = static_cast<long>(i);
      next_v = i < a->size() ? &(*a)[i] : nullptr;
      if (auto* items = member(s, "items")) {
        if (items->is_object())
          next_s = items;
        else if (items->is_array() && i < items->get_array().size())
          next_s = &items->get_array()[i];
      }
    }
    key.push_back(ord);
    s = resolve(root, next_s);
    v = next_v;
  }
  enter_branches(path.size());
  return s;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

/// The number in valijson's text after `prefix` (std::to_string form).
std::string number_in(std::string_view d, std::string_view prefix) {
  auto rest = std::string{d.substr(prefix.size())};
  char* end = nullptr;
  double x = std::strtod(rest.c_str(), &end);
  return end == rest.c_str() ? rest : js_number(x);
}

std::string limit(const json::value* s, const char* keyword, std::string_view d,
                  std::string_view prefix) {
  auto* k = member(s, keyword);
  if (k && k->is_number())
    return json_stringify(*k);
  return number_in(d, prefix);
}

std::string count_in(std::string_view d, std::string_view prefix) {
  auto rest = d.substr(prefix.size());
  return std::string{rest.substr(0, rest.find(' '))};
}

enum : int { r_type = 0, r_any = 1, r_number = 2, r_string = 3, r_array = 4, r_object = 5 };

/// valijson's description → ajv's message and keyword rank; false = a
/// summary of nested errors ajv does not have (dropped).
bool translate(std::string_view d, const json::value* s, std::string& msg, int& rank) {
  auto set = [&](std::string m, int r) {
    msg = std::move(m);
    rank = r;
    return true;
  };
  for (auto* wrapper : {"Failed to validate item #", "Failed to validate against schema associated",
                        "Failed to validate against additional properties schema",
                        "Failed to validate against child schema #",
                        "Failed to validate against dependent schema"})
    if (starts_with(d, wrapper))
      return false;
  constexpr std::string_view required = "Missing required property '";
  if (starts_with(d, required)) {
    auto name = d.substr(required.size());
    name = name.substr(0, name.rfind('\''));
    return set("must have required property '" + std::string{name} + "'", r_object);
  }
  if (starts_with(d, "Value type not permitted")) {
    auto* t = member(s, "type");
    if (t && t->is_string())
      return set("must be " + std::string{t->get_string()}, r_type);
    if (t && t->is_array()) {
      std::string types;
      for (auto& e : t->get_array())
        if (e.is_string())
          types += (types.empty() ? "" : ",") + std::string{e.get_string()};
      return set("must be " + types, r_type);
    }
    return set("must be of an allowed type", r_type);
  }
  struct counted {
    std::string_view prefix, ajv_prefix, noun;
    int rank;
  };
  for (auto& c : {counted{"String should be no fewer than ", "must NOT have fewer than ", "characters",
                          r_string},
                  counted{"String should be no more than ", "must NOT have more than ", "characters",
                          r_string},
                  counted{"Array should contain no fewer than ", "must NOT have fewer than ", "items",
                          r_array},
                  counted{"Array should contain no more than ", "must NOT have more than ", "items",
                          r_array},
                  counted{"Object should have no fewer than ", "must NOT have fewer than ",
                          "properties", r_object},
                  counted{"Object should have no more than ", "must NOT have more than ", "properties",
                          r_object}})
    if (starts_with(d, c.prefix))
      return set(std::string{c.ajv_prefix} + count_in(d, c.prefix) + " " + std::string{c.noun},
                 c.rank);
  if (starts_with(d, "Failed to match regex")) {
    auto* p = member(s, "pattern");
    return set(p && p->is_string() ? "must match pattern \"" + std::string{p->get_string()} + "\""
                                   : std::string{"must match pattern"},
               r_string);
  }
  if (starts_with(d, "Failed to match against any enum values"))
    return set("must be equal to one of the allowed values", r_any);
  if (starts_with(d, "Failed to match expected value set by 'const'")
      || starts_with(d, "Target value and comparison value are not equal"))
    return set("must be equal to constant", r_any);
  // Longer prefixes first: "greater than or equal to" before "greater than".
  constexpr std::string_view ge = "Expected number greater than or equal to ";
  constexpr std::string_view gt = "Expected number greater than ";
  constexpr std::string_view le = "Expected number less than or equal to ";
  constexpr std::string_view lt = "Expected number less than ";
  if (starts_with(d, ge))
    return set("must be >= " + limit(s, "minimum", d, ge), r_number);
  if (starts_with(d, gt)) {
    auto* x = member(s, "exclusiveMinimum");
    return set("must be > " + limit(s, x && x->is_number() ? "exclusiveMinimum" : "minimum", d, gt),
               r_number);
  }
  if (starts_with(d, le))
    return set("must be <= " + limit(s, "maximum", d, le), r_number);
  if (starts_with(d, lt)) {
    auto* x = member(s, "exclusiveMaximum");
    return set("must be < " + limit(s, x && x->is_number() ? "exclusiveMaximum" : "maximum", d, lt),
               r_number);
  }
  if (starts_with(d, "Value should be a multiple of") || starts_with(d, "Value could not be converted"))
    return set("must be multiple of " + limit(s, "multipleOf", d, "Value should be a multiple of "),
               r_number);
  if (starts_with(d, "Failed to validate against any schemas allowed by anyOf"))
    return set("must match a schema in anyOf", r_any);
  if (starts_with(d, "Failed to validate against any child schemas allowed by oneOf")
      || starts_with(d, "Failed to validate against exactly one child schema"))
    return set("must match exactly one schema in oneOf", r_any);
  if (starts_with(d, "Target should not validate against schema specified in 'not'"))
    return set("must NOT be valid", r_any);
  if (starts_with(d, "Failed to validate against a conditional schema"))
    return set("must match \"then\" or \"else\" schema", r_any);
  if (starts_with(d, "Object contains a property that could not be validated"))
    return set("must NOT have additional properties", r_object);
  if (starts_with(d, "Array contains more items than allowed")
      || starts_with(d, "Cannot validate item #")) {
    auto* items = member(s, "items");
    auto n = items && items->is_array() ? std::to_string(items->get_array().size()) : std::string{"?"};
    return set("must NOT have more than " + n + " items", r_array);
  }
  constexpr std::string_view duplicates = "Elements at indexes #";
  if (starts_with(d, duplicates)) {
    auto i = std::strtol(d.data() + duplicates.size(), nullptr, 10);
    auto hash = d.find('#', duplicates.size());
    auto j = hash == d.npos ? i : std::strtol(d.data() + hash + 1, nullptr, 10);
    return set("must NOT have duplicate items (items ## " + std::to_string(std::min(i, j)) + " and "
                 + std::to_string(std::max(i, j)) + " are identical)",
               r_array);
  }
  if (starts_with(d, "Failed to any values against subschema in 'contains'"))
    return set("must contain at least 1 valid item(s)", r_array);
  constexpr std::string_view dependency = "Missing dependency '";
  if (starts_with(d, dependency)) {
    auto name = d.substr(dependency.size());
    name = name.substr(0, name.rfind('\''));
    return set("must have property " + std::string{name} + " when a dependent property is present",
               r_object);
  }
  return set(std::string{d}, 9);
}

constexpr std::string_view child_failed = "Failed to validate against child schema #";

/// "anyOf" / "oneOf" if `d` is valijson's report of that keyword failing
/// after its branches' errors; empty otherwise.
std::string combinator_failure(std::string_view d) {
  if (starts_with(d, "Failed to validate against any schemas allowed by anyOf"))
    return "anyOf";
  if (starts_with(d, "Failed to validate against any child schemas allowed by oneOf"))
    return "oneOf";
  return {};
}

std::string dotted(const std::vector<std::string>& path) {
  if (path.empty())
    return "(root)";
  std::string out;
  for (auto& seg : path) {
    if (!out.empty())
      out += '.';
    // ajv's instancePath is a JSON pointer: '~' and '/' are escaped.
    for (char c : seg)
      out += c == '~' ? std::string{"~0"} : c == '/' ? std::string{"~1"} : std::string(1, c);
  }
  return out;
}

/// valijson's report, in its order: paths without "<root>", descriptions
/// untranslated, and for errors inside a failed anyOf/oneOf the branch.
std::vector<failure> read_report(valijson::ValidationResults& results) {
  std::vector<failure> raw;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    failure f;
    f.self = static_cast<int>(raw.size());
    f.path.assign(e.context.size() > 1 ? e.context.begin() + 1 : e.context.end(), e.context.end());
    for (auto& seg : f.path)
      if (seg.size() >= 2 && seg.front() == '[' && seg.back() == ']')
        seg = seg.substr(1, seg.size() - 2);
    f.message = std::move(e.description);
    if (auto keyword = combinator_failure(f.message); !keyword.empty()) {
      // valijson pushed each failed branch's errors followed by "Failed to
      // validate against child schema #i.", then this.
      f.head = true;
      long index = -1;
      for (auto j = raw.size(); j-- > 0;) {
        auto& g = raw[j];
        if (g.path.size() < f.path.size()
            || !std::equal(f.path.begin(), f.path.end(), g.path.begin()))
          break;
        if (g.parent < 0 && g.path.size() == f.path.size() && starts_with(g.message, child_failed))
          index = std::strtol(g.message.c_str() + child_failed.size(), nullptr, 10);
        if (g.parent < 0)
          g.parent = f.self;
        g.branches.insert(g.branches.begin(), branch{f.path.size(), keyword, index});
      }
    }
    raw.push_back(std::move(f));
  }
  return raw;
}

/// Sorts into ajv's order: depth-first, a node's own keywords (by rank)
/// before its children, children in `properties` order, a failed anyOf after
/// its branches' errors (by branch). Unless `all`, keeps what ajv reports with
/// allErrors off (as Genkit runs it): the first failure only, and inside a
/// failed anyOf/oneOf only the first failure of each branch.
void order_like_ajv(std::vector<failure>& found, bool all, const json::value& doc,
                    const json::value& instance) {
  std::map<int, size_t> at; // self -> index in found
  auto index = [&] {
    at.clear();
    for (size_t i = 0; i < found.size(); ++i)
      at[found[i].self] = i;
  };
  index();
  for (auto& f : found) {
    locate(doc, instance, f.path, f.branches, f.key);
    f.key.push_back(-100 + f.rank);
  }
  auto parent_of = [&](const failure& f) -> const failure* {
    auto i = f.parent >= 0 ? at.find(f.parent) : at.end();
    return i == at.end() ? nullptr : &found[i->second];
  };
  auto branch_of = [](const failure& f) { return f.branches.empty() ? -1L : f.branches.back().index; };
  std::function<std::vector<long>(const failure&)> key_of = [&](const failure& f) {
    std::vector<long> k;
    if (auto* head = parent_of(f)) {
      k = key_of(*head);
      k.back() = 0; // before the head's own 1
      k.push_back(branch_of(f));
    }
    k.insert(k.end(), f.key.begin(), f.key.end());
    if (f.head)
      k.push_back(1);
    return k;
  };
  std::vector<std::vector<long>> keys;
  for (auto& f : found)
    keys.push_back(key_of(f));
  for (size_t i = 0; i < found.size(); ++i)
    found[i].key = std::move(keys[i]);
  std::stable_sort(found.begin(), found.end(),
                   [](const failure& a, const failure& b) { return a.key < b.key; });
  if (all)
    return;
  index();
  auto top = [&](const failure& f) {
    auto* c = &f;
    while (auto* head = parent_of(*c))
      c = head;
    return c->self;
  };
  auto first = top(found.front());
  std::map<std::pair<int, long>, int> chosen; // (anyOf, branch) -> its reported failure
  std::vector<failure> kept;
  for (auto& f : found) {
    if (top(f) != first)
      continue;
    bool keep = true;
    std::vector<std::pair<std::pair<int, long>, int>> picks;
    for (const failure* c = &f; auto* head = parent_of(*c); c = head) {
      std::pair<int, long> slot{head->self, branch_of(*c)};
      if (auto i = chosen.find(slot); i != chosen.end() && i->second != c->self)
        keep = false;
      picks.emplace_back(slot, c->self);
    }
    if (!keep)
      continue;
    for (auto& [slot, r] : picks)
      chosen.emplace(slot, r);
    kept.push_back(f);
  }
  found = std::move(kept);
}

} // namespace

std::string json_stringify(const json::value& v, int indent) {
  std::string out;
  std::string ind;
  write_json(out, v, std::max(indent, 0), ind);
  return out;
}

// -- json_schema -----------------------------------------------------------------

struct json_schema::impl {
  std::string text;
  json::value doc; // as given, for messages
  json::value compiled_doc; // without `format`; what valijson compiled
  valijson::Schema schema;
  bool integers = false; // it uses type "integer"
  bool formats = false; // it has `format` keywords
  bool pattern_properties = false; // valijson matches keys with std::regex
};

json_schema::json_schema(std::unique_ptr<impl> p) : impl_(std::move(p)) {
}

json_schema::~json_schema() = default;

const std::string& json_schema::text() const {
  return impl_->text;
}

std::shared_ptr<const json_schema> json_schema::compile(std::string_view schema_json,
                                                        std::string& why) {
  auto p = std::make_unique<impl>();
  p->text = std::string{schema_json};
  boost::system::error_code ec;
  p->doc = json::parse(p->text, ec);
  if (ec) {
    why = "schema is not valid JSON: " + ec.message();
    return nullptr;
  }
  if (!p->doc.is_object() && !p->doc.is_bool()) {
    why = "schema must be an object or a boolean";
    return nullptr;
  }
  // libstdc++ fills ctype<char>::narrow()'s cache lazily, a benign race
  // ThreadSanitizer reports when valijson compiles patterns on several
  // threads at once; fill it up front.
  static const bool narrow_cache_filled = [] {
    auto& ctype = std::use_facet<std::ctype<char>>(std::locale{});
    for (int c = 1; c < 256; ++c)
      ctype.narrow(static_cast<char>(c), '\0');
    return true;
  }();
  (void) narrow_cache_filled;
  p->compiled_doc = p->doc;
  std::string bad;
  bool pattern_properties = false;
  prepare(p->compiled_doc, bad, pattern_properties);
  p->pattern_properties = pattern_properties;
  if (!bad.empty()) {
    why = std::move(bad);
    return nullptr;
  }
  p->integers = uses_integer(p->compiled_doc);
  p->formats = uses_format(p->doc);
  try {
    valijson::SchemaParser parser{valijson::SchemaParser::kDraft7};
    // The parser owns (and deletes) its builders.
    parser.addConstraintBuilder(re2_pattern_keyword, new re2_pattern_builder);
    valijson::adapters::BoostJsonAdapter adapter{p->compiled_doc};
    parser.populateSchema(adapter, p->schema);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
  return std::shared_ptr<const json_schema>(new json_schema(std::move(p)));
}

bool json_schema::validate(const json::value& input, std::vector<std::string>& errors,
                           bool all_errors) const {
  auto& p = *impl_;
  // JS has no separate integer type: 2.0 is an integer there.
  json::value normalized;
  const json::value* v = &input;
  if (p.integers && has_integral_doubles(input)) {
    normalized = input;
    integralize(normalized);
    v = &normalized;
  }
  if (p.pattern_properties) {
    if (auto key = long_key(*v); !key.empty()) {
      errors.push_back("(root): property name \"" + key.substr(0, 32)
                       + "...\" is longer than " + std::to_string(max_pattern_key_length)
                       + " characters (the schema has patternProperties)");
      return false;
    }
  }
  valijson::adapters::BoostJsonAdapter target{*v};
  std::vector<std::string> path{};
  try {
    // The validator caches compiled patterns: one per call keeps this const
    // function thread-safe.
    valijson::Validator fast;
    if (fast.validate(p.schema, target, nullptr)
        && (!p.formats || check_formats(p.doc, &p.doc, *v, path, nullptr)))
      return true;

    // Invalid: collect everything, then report in ajv's order.
    valijson::Validator slow;
    valijson::ValidationResults results;
    slow.validate(p.schema, target, &results);
    std::vector<failure> found;
    for (auto& f : read_report(results)) {
      std::vector<long> ignored;
      auto* node = locate(p.doc, *v, f.path, f.branches, ignored);
      auto description = std::move(f.message);
      if (translate(description, node, f.message, f.rank))
        found.push_back(std::move(f));
    }
    auto formats_from = found.size();
    if (p.formats)
      check_formats(p.doc, &p.doc, *v, path, &found);
    if (found.empty()) // cannot happen; keep the verdict explainable anyway
      found.push_back({.message = "must match the schema"});
    for (auto i = formats_from; i < found.size(); ++i)
      found[i].self = -2 - static_cast<int>(i);
    order_like_ajv(found, all_errors, p.doc, *v);
    for (auto& f : found)
      errors.push_back(dotted(f.path) + ": " + f.message);
  } catch (const std::exception& ex) {
    errors.push_back(std::string{"(root): schema validation failed: "} + ex.what());
  }
  return false;
}

std::string schema_error_message(const std::vector<std::string>& errors, const json::value& input,
                                 std::string_view schema) {
  std::string out = "Schema validation failed. Parse Errors:\n\n";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0)
      out += '\n';
    out += "- " + errors[i];
  }
  out += "\n\nProvided data:\n\n";
  out += json_stringify(input, 2);
  out += "\n\nRequired JSON schema:\n\n";
  boost::system::error_code ec;
  auto doc = json::parse(schema, ec);
  if (ec)
    out += schema;
  else
    out += json_stringify(doc, 2);
  return out;
}

} // namespace actor_host::schema
