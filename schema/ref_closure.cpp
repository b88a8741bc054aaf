#include "schema/ref_closure.hpp"

#include <boost/json.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

namespace actor_host::schema {

namespace json = boost::json;

namespace {

/// The refs being expanded above a node: a ref met again below itself is a
/// cycle.
struct ref_chain {
  std::string ref;
  std::shared_ptr<const ref_chain> up;
  bool contains(const std::string& r) const {
    for (const auto* c = this; c; c = c->up.get())
      if (c->ref == r)
        return true;
    return false;
  }
};

} // namespace

const json::value* json_pointer(const json::value& doc, std::string_view ref) {
  if (ref == "#")
    return &doc;
  if (ref.substr(0, 2) != "#/")
    return nullptr;
  const json::value* cur = &doc;
  std::size_t pos = 2;
  while (cur) {
    auto end = ref.find('/', pos);
    auto raw = ref.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    if (const auto* o = cur->if_object()) {
      auto it = o->find(token);
      cur = it == o->end() ? nullptr : &it->value();
    } else if (const auto* a = cur->if_array()) {
      char* stop = nullptr;
      auto i = std::strtoul(token.c_str(), &stop, 10);
      cur = !token.empty() && *stop == '\0' && i < a->size() ? &(*a)[i] : nullptr;
    } else {
      cur = nullptr;
    }
    if (end == std::string_view::npos)
      break;
    pos = end + 1;
  }
  return cur;
}

namespace {

struct frame {
  const json::value* src;
  json::value* dst;
  std::shared_ptr<const ref_chain> refs;
};

} // namespace

std::string resolve_refs(const json::value& schema, json::value& out, const ref_limits& limits) {
  std::map<std::string, json::value> defs;         // stable addresses while filling them
  std::map<std::string, std::string> def_names;    // ref -> its name in $defs
  std::vector<frame> work{{&schema, &out, nullptr}};
  std::size_t nodes = 0;
  std::size_t bytes = 0;
  while (!work.empty()) {
    auto f = work.back();
    work.pop_back();
    if (++nodes > limits.max_nodes)
      return "the schema with its references resolved is over "
             + std::to_string(limits.max_nodes) + " values";
    const auto* src = f.src;
    auto refs = f.refs;
    // Follow refs until a node that is no ref (or a cycle).
    while (const auto* o = src->if_object()) {
      auto it = o->find("$ref");
      if (it == o->end())
        break;
      if (!it->value().is_string())
        return "a $ref is not a string";
      std::string ref{it->value().get_string()};
      if (ref.empty() || ref[0] != '#')
        return "the $ref '" + ref + "' is not local (only refs into the schema itself resolve)";
      if (refs && refs->contains(ref)) {
        auto [d, fresh] = def_names.emplace(ref, std::string{});
        if (fresh) {
          auto slash = ref.rfind('/');
          auto base = slash == std::string::npos || slash + 1 == ref.size() ? std::string{"root"}
                                                                             : ref.substr(slash + 1);
          auto name = base;
          for (int n = 2; defs.count(name); ++n)
            name = base + "_" + std::to_string(n);
          d->second = name;
          auto& slot = defs[name];
          work.push_back({json_pointer(schema, ref), &slot, refs});
        }
        json::object o2;
        o2["$ref"] = "#/$defs/" + d->second;
        *f.dst = std::move(o2);
        src = nullptr;
        break;
      }
      const auto* target = json_pointer(schema, ref);
      if (!target)
        return "the $ref '" + ref + "' names nothing in the schema";
      refs = std::make_shared<const ref_chain>(ref_chain{ref, refs});
      src = target;
    }
    if (!src)
      continue;
    if (const auto* o = src->if_object()) {
      auto& dst = f.dst->emplace_object();
      // The root's definitions are inlined where they are used; the result
      // keeps none of them (a property named so deeper down stays).
      auto skip = [&](std::string_view k) {
        return src == &schema && (k == "definitions" || k == "$defs");
      };
      for (auto& kv : *o) {
        if (skip(kv.key()))
          continue;
        bytes += kv.key().size();
        dst[kv.key()] = nullptr;
      }
      // All keys are in: the object does not grow any more, the addresses hold.
      for (auto& kv : *o) {
        if (skip(kv.key()))
          continue;
        work.push_back({&kv.value(), &dst[kv.key()], refs});
      }
    } else if (const auto* a = src->if_array()) {
      auto& dst = f.dst->emplace_array();
      dst.resize(a->size());
      for (std::size_t i = 0; i < a->size(); ++i)
        work.push_back({&(*a)[i], &dst[i], refs});
    } else {
      if (const auto* s = src->if_string())
        bytes += s->size();
      *f.dst = *src;
    }
    if (bytes > limits.max_bytes)
      return "the schema with its references resolved is over "
             + std::to_string(limits.max_bytes) + " bytes";
  }
  if (!defs.empty()) {
    if (auto* o = out.if_object()) {
      auto& d = (*o)["$defs"].emplace_object();
      for (auto& [name, v] : defs)
        d[name] = std::move(v);
    }
  }
  return {};
}

} // namespace actor_host::schema
