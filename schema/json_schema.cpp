#include "schema/json_schema.hpp"

#include "schema/ajv_wording.hpp"
#include "schema/schema_walk.hpp"

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
#include <cmath>
#include <locale>
#include <new>
#include <stdexcept>
#include <vector>

namespace actor_host::schema {

namespace json = boost::json;

namespace {

using ajv::failure;
using detail::compile_re2;
using detail::check_refs;
using detail::member;
using detail::resolve;

// -- patterns through RE2 ---------------------------------------------------------
//
// valijson matches `pattern` with std::regex, whose executor recurses once
// per input character: a 100k-character string overflows the stack. RE2
// runs in linear time without recursion; it lacks lookaround and
// backreferences, which such schemas are then refused for (at compile).

/// valijson's keyword for our RE2 `pattern` (the schema's own `pattern` is
/// renamed to it before valijson sees the schema).
constexpr const char* re2_pattern_keyword = "x-actor-host-re2-pattern";

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

wire::expected<void> check_pattern(std::string_view pattern) {
  if (std::string why; !compile_re2(pattern, &why))
    return wire::unexpected{std::move(why)};
  return {};
}

/// Prepares a schema for valijson: removes the `format` keywords (checked by
/// check_formats instead: valijson reads them with asString(), which throws
/// for non-empty objects/arrays, and checks non-strings, which ajv ignores),
/// renames `pattern` to our RE2 keyword and checks that the patterns compile
/// (`patternProperties` stays valijson's: see max_pattern_key_length).
/// Stops at the first problem in document order and returns its reason.
wire::expected<void> prepare(json::value& s, bool& pattern_properties) {
  auto* o = s.if_object();
  if (!o)
    return {};
  if (auto* f = o->if_contains("format"); f && f->is_string())
    o->erase("format");
  if (auto* p = o->if_contains("pattern"); p && p->is_string()) {
    if (auto r = check_pattern(p->get_string()); !r)
      return r;
    json::value text = *p;
    o->erase("pattern");
    (*o)[re2_pattern_keyword] = std::move(text);
  }
  // valijson divides by it (as an integer when it is one, whatever its JSON
  // type: "0" became a division by zero); the spec wants a number > 0.
  if (auto* m = o->if_contains("multipleOf");
      m && (!m->is_number() || !(m->to_number<double>() > 0) || !std::isfinite(m->to_number<double>())))
    return wire::unexpected{"multipleOf must be a number greater than 0"};
  if (o->contains("patternProperties"))
    pattern_properties = true;
  if (auto* m = o->if_contains("patternProperties"); m && m->is_object())
    for (auto& kv : m->get_object())
      if (auto r = check_pattern(kv.key()); !r)
        return r;
  for (auto* key : {"properties", "patternProperties", "definitions", "$defs", "dependencies"})
    if (auto* m = o->if_contains(key); m && m->is_object())
      for (auto& kv : m->get_object())
        if (auto r = prepare(kv.value(), pattern_properties); !r)
          return r;
  for (auto* key : {"items", "allOf", "anyOf", "oneOf"})
    if (auto* m = o->if_contains(key)) {
      if (m->is_array()) {
        for (auto& e : m->get_array())
          if (auto r = prepare(e, pattern_properties); !r)
            return r;
      } else if (auto r = prepare(*m, pattern_properties); !r) {
        return r;
      }
    }
  for (auto* key : {"additionalItems", "additionalProperties", "contains", "propertyNames", "not",
                    "if", "then", "else"})
    if (auto* m = o->if_contains(key))
      if (auto r = prepare(*m, pattern_properties); !r)
        return r;
  return {};
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
    out->push_back(
      {path, "must match format \"" + std::string{f->get_string()} + "\"", ajv::r_string});
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

} // namespace

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

wire::expected<std::shared_ptr<const json_schema>>
json_schema::compile(std::string_view schema_json) {
  auto p = std::make_unique<impl>();
  p->text = std::string{schema_json};
  boost::system::error_code ec;
  p->doc = json::parse(p->text, ec);
  if (ec)
    return wire::unexpected{"schema is not valid JSON: " + ec.message()};
  if (!p->doc.is_object() && !p->doc.is_bool())
    return wire::unexpected{"schema must be an object or a boolean"};
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
  if (auto r = check_refs(p->doc); !r)
    return wire::unexpected{std::move(r).error()};
  if (auto r = prepare(p->compiled_doc, p->pattern_properties); !r)
    return wire::unexpected{std::move(r).error()};
  p->integers = uses_integer(p->compiled_doc);
  p->formats = uses_format(p->doc);
  try {
    valijson::SchemaParser parser{valijson::SchemaParser::kDraft7};
    // The parser owns (and deletes) its builders.
    parser.addConstraintBuilder(re2_pattern_keyword, new re2_pattern_builder);
    valijson::adapters::BoostJsonAdapter adapter{p->compiled_doc};
    parser.populateSchema(adapter, p->schema);
  } catch (const std::exception& e) {
    return wire::unexpected{e.what()};
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
    for (auto& f : ajv::read_report(results)) {
      std::vector<long> ignored;
      auto* node = ajv::locate(p.doc, *v, f.path, f.branches, ignored);
      auto description = std::move(f.message);
      if (ajv::translate(description, node, f.message, f.rank))
        found.push_back(std::move(f));
    }
    auto formats_from = found.size();
    if (p.formats)
      check_formats(p.doc, &p.doc, *v, path, &found);
    if (found.empty()) // cannot happen; keep the verdict explainable anyway
      found.push_back({.message = "must match the schema"});
    for (auto i = formats_from; i < found.size(); ++i)
      found[i].self = -2 - static_cast<int>(i);
    ajv::order_like_ajv(found, all_errors, p.doc, *v);
    for (auto& f : found)
      errors.push_back(ajv::dotted(f.path) + ": " + f.message);
  } catch (const std::exception& ex) {
    errors.push_back(std::string{"(root): schema validation failed: "} + ex.what());
  }
  return false;
}

} // namespace actor_host::schema
