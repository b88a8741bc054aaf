#include "schema/schema_walk.hpp"

#include "schema/ref_closure.hpp"

#include <re2/re2.h>

#include <unordered_map>
#include <vector>

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

// Refuses the `$ref`s valijson would recurse on without end: a ref that is
// not local ("string": valijson resolves it to the same document again), one
// that names nothing, and a cycle that never moves into the instance (a
// schema that applies itself to the same value: {"$ref":"#"},
// {"allOf":[{"$ref":"#"}]}, A -> B -> A through definitions). Recursion
// through `properties`/`items` (a tree type) is fine: each step validates a
// smaller part of the instance. Walks with work lists, never recursion.
wire::expected<void> check_refs(const json::value& root) {
  // Subschemas that apply to the same instance as their parent.
  auto in_place = [&](const json::value& s, std::vector<const json::value*>& out) {
    auto* o = s.if_object();
    if (!o)
      return;
    if (auto* r = o->if_contains("$ref"); r && r->is_string())
      if (auto* target = json_pointer(root, r->get_string()))
        out.push_back(target);
    for (auto* key : {"allOf", "anyOf", "oneOf"})
      if (auto* m = o->if_contains(key); m && m->is_array())
        for (auto& e : m->get_array())
          out.push_back(&e);
    for (auto* key : {"not", "if", "then", "else"})
      if (auto* m = o->if_contains(key))
        out.push_back(m);
    if (auto* d = o->if_contains("dependencies"); d && d->is_object())
      for (auto& kv : d->get_object())
        out.push_back(&kv.value());
  };

  // Every object in the document; each `$ref` local and resolvable.
  std::vector<const json::value*> nodes;
  std::vector<const json::value*> work{&root};
  while (!work.empty()) {
    auto* v = work.back();
    work.pop_back();
    if (auto* a = v->if_array()) {
      for (auto& e : *a)
        work.push_back(&e);
      continue;
    }
    auto* o = v->if_object();
    if (!o)
      continue;
    nodes.push_back(v);
    if (auto* r = o->if_contains("$ref"); r && r->is_string()) {
      std::string_view ref = r->get_string();
      if (ref.empty() || ref.front() != '#')
        return wire::unexpected{
          "$ref \"" + std::string{ref.substr(0, 200)}
          + "\" is not a local reference (\"#\" or \"#/...\"): remote schemas are not fetched"};
      if (!json_pointer(root, ref))
        return wire::unexpected{"$ref \"" + std::string{ref.substr(0, 200)}
                                    + "\" names nothing in the schema"};
    }
    for (auto& kv : *o)
      if (kv.key() != "enum" && kv.key() != "const" && kv.key() != "default"
          && kv.key() != "examples") // values, not schemas
        work.push_back(&kv.value());
  }

  // Depth-first over the in-place edges, iteratively: a back edge is a cycle.
  enum class mark : char { open, done };
  std::unordered_map<const json::value*, mark> seen;
  struct frame {
    const json::value* node;
    std::vector<const json::value*> next;
    std::size_t i = 0;
  };
  for (auto* start : nodes) {
    if (seen.count(start))
      continue;
    std::vector<frame> stack;
    stack.push_back({start, {}});
    in_place(*start, stack.back().next);
    seen[start] = mark::open;
    while (!stack.empty()) {
      auto& top = stack.back();
      if (top.i == top.next.size()) {
        seen[top.node] = mark::done;
        stack.pop_back();
        continue;
      }
      auto* n = top.next[top.i++];
      auto it = seen.find(n);
      if (it != seen.end()) {
        if (it->second == mark::open)
          return wire::unexpected{
            "$ref cycle: the schema applies itself to the same value without end (a "
            "recursive schema must step into properties or items before it refers back)"};
        continue;
      }
      seen[n] = mark::open;
      stack.push_back({n, {}});
      in_place(*n, stack.back().next);
    }
  }
  return {};
}

} // namespace actor_host::schema::detail
