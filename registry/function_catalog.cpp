#include "registry/function_catalog.hpp"

#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"

namespace actor_host::registry {

namespace rpc = wire::jsonrpc;

namespace {

std::string string_of(const rpc::object_members& o, std::string_view key) {
  std::string s;
  if (auto* raw = o.find(key))
    rpc::string_value(*raw, s);
  return s;
}

std::string json_string_or_null(const std::string& s) {
  return s.empty() ? std::string{"null"} : rpc::quote(s);
}

bool internal_metadata(const std::string& metadata) {
  if (metadata.empty())
    return false;
  auto m = rpc::split_object(metadata);
  bool b = false;
  auto* v = m ? m->find("internal") : nullptr;
  return v && rpc::is_bool(*v, b) && b;
}

// Functions, trigger types and workers are three tables of one shape (id ->
// entry); these are the operations they share.

/// Adds or replaces the entry; returns the previous owner ("" if new).
template <class Map, class Entry>
std::string put_owned(Map& m, Entry e) {
  auto& slot = m[e.id];
  auto previous = std::move(slot.owner);
  slot = std::move(e);
  return previous;
}

template <class Map>
auto* find_in(Map& m, const std::string& id) {
  auto i = m.find(id);
  return i == m.end() ? nullptr : &i->second;
}

template <class Map>
std::vector<std::string> remove_owned(Map& m, std::string_view owner) {
  std::vector<std::string> ids;
  for (auto i = m.begin(); i != m.end();) {
    if (i->second.owner == owner) {
      ids.push_back(i->first);
      i = m.erase(i);
    } else {
      ++i;
    }
  }
  return ids;
}

} // namespace

std::string function_catalog::put_function(worker_function f) {
  return put_owned(functions_, std::move(f));
}

bool function_catalog::remove_function(const std::string& id, std::string_view owner) {
  auto i = functions_.find(id);
  if (i == functions_.end() || i->second.owner != owner)
    return false;
  functions_.erase(i);
  return true;
}

const worker_function* function_catalog::find_function(const std::string& id) const {
  return find_in(functions_, id);
}

std::vector<std::string> function_catalog::remove_functions_of(std::string_view owner) {
  return remove_owned(functions_, owner);
}

std::size_t function_catalog::function_count(std::string_view owner) const {
  std::size_t n = 0;
  for (auto& [id, f] : functions_)
    n += f.owner == owner;
  return n;
}

std::string function_catalog::put_trigger_type(trigger_type_entry t) {
  return put_owned(trigger_types_, std::move(t));
}

const trigger_type_entry* function_catalog::find_trigger_type(const std::string& id) const {
  return find_in(trigger_types_, id);
}

std::vector<std::string> function_catalog::remove_trigger_types_of(std::string_view owner) {
  return remove_owned(trigger_types_, owner);
}

void function_catalog::add_worker(worker_record w) {
  auto id = w.id;
  workers_[id] = std::move(w);
}

void function_catalog::remove_worker(const std::string& id) {
  workers_.erase(id);
}

worker_record* function_catalog::find_worker(const std::string& id) {
  return find_in(workers_, id);
}

void function_catalog::set_worker_metadata(const std::string& id, const std::string& payload) {
  auto* w = find_worker(id);
  if (!w)
    return;
  auto split = rpc::split_object(payload);
  if (!split)
    return;
  auto& p = *split;
  w->name = string_of(p, "name");
  w->description = string_of(p, "description");
  w->runtime = string_of(p, "runtime");
  w->version = string_of(p, "version");
  w->os = string_of(p, "os");
  if (auto* v = p.find("pid"))
    w->pid = *v;
  if (auto* v = p.find("isolation"))
    w->isolation = *v;
}

std::string function_catalog::worker_name(const std::string& worker_id) const {
  if (worker_id.empty())
    return "engine";
  auto* w = find_in(workers_, worker_id);
  return w && !w->name.empty() ? w->name : worker_id;
}

std::string function_catalog::function_row(const worker_function& f) const {
  auto row = R"({"function_id":)" + rpc::quote(f.id) + R"(,"worker_name":)"
             + rpc::quote(worker_name(f.owner));
  if (!f.description.empty())
    row += R"(,"description":)" + rpc::quote(f.description);
  if (!f.metadata.empty())
    row += R"(,"metadata":)" + f.metadata;
  return row + "}";
}

std::string function_catalog::genkit_actions_json() const {
  std::map<std::string, const worker_function*> sorted;
  for (auto& [id, f] : functions_)
    if (!internal_metadata(f.metadata))
      sorted.emplace(id, &f);
  std::string out = R"({"actions":{)";
  bool first = true;
  for (auto& [id, f] : sorted) {
    auto key = rpc::quote(std::string{wire::iii::iii_key_prefix} + id);
    if (!first)
      out += ',';
    first = false;
    out += key + R"(:{"key":)" + key + R"(,"name":)" + rpc::quote(id);
    if (!f->description.empty())
      out += R"(,"description":)" + rpc::quote(f->description);
    out += R"(,"metadata":{"iii":{"function_id":)" + rpc::quote(id) + R"(,"worker_name":)"
           + rpc::quote(worker_name(f->owner));
    for (auto [name, raw] : {std::pair{"metadata", &f->metadata},
                             std::pair{"request_format", &f->request_format},
                             std::pair{"response_format", &f->response_format}})
      if (!raw->empty())
        out += std::string{",\""} + name + "\":" + *raw;
    out += "}}}";
  }
  return out + "}}";
}

std::string function_catalog::functions_list_json(
  const std::string& params, const std::vector<std::string>& engine_functions,
  const std::function<bool(const std::string&, const std::string*)>& visible) const {
  auto rows = functions_list_rows(params, engine_functions, visible);
  std::string out = R"({"functions":[)";
  bool first = true;
  for (auto& [id, row] : rows) {
    if (!first)
      out += ',';
    first = false;
    out += row;
  }
  return out + "]}";
}

std::map<std::string, std::string> function_catalog::functions_list_rows(
  const std::string& params, const std::vector<std::string>& engine_functions,
  const std::function<bool(const std::string&, const std::string*)>& visible) const {
  bool include_internal = false;
  std::string prefix, search;
  if (auto p = rpc::split_object(params)) {
    if (auto* v = p->find("include_internal"))
      rpc::is_bool(*v, include_internal);
    prefix = string_of(*p, "prefix");
    search = string_of(*p, "search");
  }
  std::map<std::string, std::string> rows; // sorted by id
  auto keep = [&](const std::string& id, const std::string* metadata) {
    return id.starts_with(prefix) && (search.empty() || id.find(search) != std::string::npos)
           && (!visible || visible(id, metadata));
  };
  for (auto& [id, f] : functions_) {
    if (!keep(id, &f.metadata) || (!include_internal && internal_metadata(f.metadata)))
      continue;
    rows[id] = function_row(f);
  }
  if (include_internal)
    for (auto& id : engine_functions)
      if (keep(id, nullptr))
        rows[id] = R"({"function_id":)" + rpc::quote(id) + R"(,"worker_name":"engine"})";
  return rows;
}

std::string function_catalog::worker_row(const worker_record& w, std::int64_t active) const {
  return R"({"id":)" + rpc::quote(w.id) + R"(,"name":)" + json_string_or_null(w.name)
         + R"(,"description":)" + json_string_or_null(w.description) + R"(,"version":)"
         + json_string_or_null(w.version) + R"(,"runtime":)" + json_string_or_null(w.runtime)
         + R"(,"os":)" + json_string_or_null(w.os) + R"(,"status":"connected")"
         + R"(,"function_count":)" + std::to_string(function_count(w.id))
         + R"(,"connected_at_ms":)" + std::to_string(w.connected_at_ms)
         + R"(,"active_invocations":)" + std::to_string(active) + R"(,"isolation":)"
         + w.isolation + R"(,"pid":)" + w.pid + R"(,"ip_address":)" + json_string_or_null(w.ip)
         + "}";
}

const worker_record* function_catalog::find_worker_by_name(const std::string& name) const {
  for (auto& [id, w] : workers_)
    if (w.name == name)
      return &w;
  return find_in(workers_, name);
}

std::string function_catalog::trigger_type_row(const trigger_type_entry& t) const {
  return R"({"id":)" + rpc::quote(t.id) + R"(,"worker_name":)" + rpc::quote(worker_name(t.owner))
         + R"(,"description":)" + rpc::quote(t.description) + "}";
}

std::string function_catalog::workers_list_json(
  const std::map<std::string, std::int64_t>& active) const {
  std::string out = R"({"workers":[)";
  bool first = true;
  for (auto& [id, w] : workers_) {
    if (!first)
      out += ',';
    first = false;
    auto a = active.find(id);
    out += worker_row(w, a == active.end() ? 0 : a->second);
  }
  return out + "]}";
}

} // namespace actor_host::registry
