#include "actors/iii/iii_cluster_view.hpp"

#include "actors/iii/function_registry_ops.hpp"
#include "wire/jsonrpc.hpp"

#include <set>

namespace actor_host::iii_cluster {

namespace rpc = wire::jsonrpc;

namespace {

registry::function_catalog catalog_of(const iii_node_set& set) {
  registry::function_catalog cat;
  for (auto& w : set.workers) {
    registry::worker_record r;
    r.id = w.id;
    r.ip = w.ip;
    r.connected_at_ms = w.connected_at_ms;
    r.name = w.name;
    r.description = w.description;
    r.runtime = w.runtime;
    r.version = w.version;
    r.os = w.os;
    r.pid = w.pid;
    r.isolation = w.isolation;
    cat.add_worker(std::move(r));
  }
  for (auto& f : set.functions)
    cat.put_function({f.id, f.owner, f.description, f.metadata, f.request_format,
                      f.response_format});
  for (auto& t : set.types)
    cat.put_trigger_type({t.id, t.owner, t.description});
  return cat;
}

/// What engine::workers::register changes: a difference is a
/// worker_metadata_updated event.
std::string metadata_key(const registry::worker_record& w) {
  return w.name + '\0' + w.description + '\0' + w.runtime + '\0' + w.version + '\0' + w.os + '\0'
         + w.pid + '\0' + w.isolation;
}

/// Fires workers-available for the differences between a node's old and
/// new workers.
void fire_worker_changes(self_ptr self, const registry::function_catalog* before,
                         const registry::function_catalog* after) {
  static const std::map<std::string, registry::worker_record> none;
  auto& old_ws = before ? before->workers() : none;
  auto& new_ws = after ? after->workers() : none;
  for (auto& [id, w] : new_ws) {
    auto o = old_ws.find(id);
    if (o == old_ws.end())
      registry_ops::fire_worker_event(self, "worker_connected", id);
    else if (metadata_key(o->second) != metadata_key(w))
      registry_ops::fire_worker_event(self, "worker_metadata_updated", id);
  }
  for (auto& [id, w] : old_ws)
    if (!new_ws.count(id))
      registry_ops::fire_worker_event(self, "worker_disconnected", id);
}

std::string join(const std::map<std::string, std::string>& rows) {
  std::string out;
  for (auto& [k, row] : rows)
    out += (out.empty() ? "" : ",") + row;
  return out;
}

} // namespace

iii_node_set local_set(const function_registry_state& st) {
  iii_node_set set;
  for (auto& [id, f] : st.catalog.functions())
    if (auto w = st.workers.find(f.owner); w != st.workers.end())
      set.functions.push_back({id, f.metadata, caf::actor_cast<caf::actor>(w->second.conn),
                               f.owner, f.description, f.request_format, f.response_format});
  for (auto& [id, w] : st.catalog.workers())
    set.workers.push_back({w.id, w.ip, w.connected_at_ms, w.name, w.description, w.runtime,
                           w.version, w.os, w.pid, w.isolation});
  for (auto& [id, t] : st.catalog.trigger_types())
    if (!t.owner.empty()) // the engine's own types are every node's
      set.types.push_back({t.id, t.owner, t.description});
  return set;
}

void apply_node_set(self_ptr self, const std::string& node, iii_node_set set) {
  auto& st = self->state;
  auto& rf = st.remote_functions;
  std::erase_if(rf, [&](auto& kv) { return kv.second.node == node; });
  for (auto& f : set.functions)
    rf[f.id] = {node, f.conn, f.metadata};
  auto cat = catalog_of(set);
  auto old = st.node_catalogs.find(node);
  fire_worker_changes(self, old == st.node_catalogs.end() ? nullptr : &old->second, &cat);
  st.node_catalogs[node] = std::move(cat);
  reoffer(self);
  registry_ops::check_functions(self);
}

void forget_node(self_ptr self, const std::string& node) {
  auto& st = self->state;
  std::erase_if(st.remote_functions, [&](auto& kv) { return kv.second.node == node; });
  drop_bindings_of(self, node);
  auto old = st.node_catalogs.find(node);
  if (old == st.node_catalogs.end())
    return;
  auto gone = std::move(old->second);
  st.node_catalogs.erase(old);
  fire_worker_changes(self, &gone, nullptr);
  reoffer(self);
  registry_ops::check_functions(self);
}

std::string with_node(std::string row, const std::string& node) {
  if (row.empty() || row.back() != '}')
    return row;
  row.pop_back();
  return row + R"(,"node":)" + rpc::quote(node) + "}";
}

std::map<std::string, std::string> function_rows(self_ptr self, const std::string& params,
                                                 const std::vector<std::string>& engine_ids,
                                                 const visible_fn& visible) {
  auto& st = self->state;
  auto rows = st.catalog.functions_list_rows(params, engine_ids, visible);
  if (st.node_name.empty())
    return rows;
  for (auto& [id, row] : rows)
    row = with_node(std::move(row), st.node_name);
  for (auto& [node, cat] : st.node_catalogs)
    for (auto& [id, row] : cat.functions_list_rows(params, {}, visible)) {
      auto r = st.remote_functions.find(id);
      if (r != st.remote_functions.end() && r->second.node == node && !rows.count(id))
        rows.emplace(id, with_node(std::move(row), node));
    }
  return rows;
}

std::string functions_json(self_ptr self, const std::string& params,
                           const std::vector<std::string>& engine_ids, const visible_fn& visible) {
  return R"({"functions":[)" + join(function_rows(self, params, engine_ids, visible)) + "]}";
}

std::string workers_json(self_ptr self) {
  auto& st = self->state;
  // By id, then node: a worker id is a UUID, but a peer could repeat one.
  std::map<std::string, std::string> rows;
  auto add = [&](const registry::function_catalog& cat, const std::string& node) {
    for (auto& [id, w] : cat.workers()) {
      auto row = cat.worker_row(w, 0);
      rows.emplace(id + '\0' + node, node.empty() ? row : with_node(std::move(row), node));
    }
  };
  add(st.catalog, st.node_name);
  for (auto& [node, cat] : st.node_catalogs)
    add(cat, node);
  return R"({"workers":[)" + join(rows) + "]}";
}

std::map<std::string, std::string> trigger_type_rows(self_ptr self, const std::string& prefix,
                                                     const std::string& search) {
  auto& st = self->state;
  std::map<std::string, std::string> rows;
  auto add = [&](const registry::function_catalog& cat, const std::string& node) {
    for (auto& [tid, t] : cat.trigger_types())
      if (tid.starts_with(prefix)
          && (search.empty() || tid.find(search) != std::string::npos
              || t.description.find(search) != std::string::npos)
          && !rows.count(tid)) {
        auto row = cat.trigger_type_row(t);
        rows.emplace(tid, node.empty() ? row : with_node(std::move(row), node));
      }
  };
  add(st.catalog, st.node_name); // this node's type of an id wins
  for (auto& [node, cat] : st.node_catalogs)
    add(cat, node);
  return rows;
}

const registry::worker_function* remote_function(const function_registry_state& st,
                                                 const std::string& id,
                                                 const registry::function_catalog** catalog,
                                                 std::string* node) {
  auto r = st.remote_functions.find(id);
  if (r == st.remote_functions.end())
    return nullptr;
  auto c = st.node_catalogs.find(r->second.node);
  if (c == st.node_catalogs.end())
    return nullptr;
  *catalog = &c->second;
  *node = r->second.node;
  return c->second.find_function(id);
}

} // namespace actor_host::iii_cluster
