#include "schema/ajv_wording.hpp"

#include "schema/js_stringify.hpp"
#include "schema/json_schema.hpp"
#include "schema/schema_walk.hpp"

// As in json_schema.cpp: every translation unit sees valijson alike.
#define VALIJSON_USE_EXCEPTIONS 1
#include <valijson/validation_results.hpp>

#include <boost/json/parse.hpp>

#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

namespace actor_host::schema {

namespace json = boost::json;

namespace ajv {

using detail::compile_re2;
using detail::member;
using detail::resolve;

namespace {

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

} // namespace

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

} // namespace ajv

// -- Genkit's ValidationError text -------------------------------------------

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
