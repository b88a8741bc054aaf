#include "actors/iii/engine_functions.hpp"

#include "actors/call/errors.hpp"
#include "actors/iii/channel.hpp"
#include "actors/iii/function_registry_ops.hpp"
#include "actors/iii/iii_cluster_view.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

#include <map>

namespace actor_host {

namespace iii = wire::iii;
namespace rpc = wire::jsonrpc;
using namespace registry_ops;

namespace {

/// One call of an engine function: its parsed params and the caller's view.
struct engine_request {
  self_ptr self;
  const caller_actor& caller;
  std::uint64_t tag;
  const invocation_request& req;
  rpc::object_members params;
  bool has_params = false;
  const registry::worker_access* access = nullptr; // null: sees everything

  function_registry_state& st() const { return self->state; }
  void ok(std::string raw) const { reply(self, caller, tag, req, succeeded(std::move(raw))); }
  void fail(call_error error) const { reply(self, caller, tag, req, failed(std::move(error))); }
  void fail_not_found(const std::string& what) const {
    fail(manager_errors::iii_error(iii::code::not_found, what + " not found"));
  }

  std::string text(std::string_view name) const {
    std::string s;
    if (auto* raw = params.find(name))
      rpc::string_value(*raw, s);
    return s;
  }
  bool flag(std::string_view name) const {
    bool b = false;
    if (auto* raw = params.find(name))
      rpc::is_bool(*raw, b);
    return b;
  }
  /// Raw JSON of a member, "" when absent or null.
  std::string raw(std::string_view name) const {
    auto* r = params.find(name);
    return r && *r != "null" ? *r : std::string{};
  }

  bool visible(const std::string& fid, const std::string* metadata) const {
    return registry::may_see(access, fid, metadata);
  }
};

std::string function_info(const registry::worker_function& f,
                          const registry::function_catalog& catalog) {
  auto out = R"({"function_id":)" + rpc::quote(f.id) + R"(,"worker_id":)" + rpc::quote(f.owner)
             + R"(,"worker_name":)" + rpc::quote(catalog.worker_name(f.owner));
  if (!f.description.empty())
    out += R"(,"description":)" + rpc::quote(f.description);
  for (auto [key, raw] : {std::pair{"metadata", &f.metadata},
                          std::pair{"request_format", &f.request_format},
                          std::pair{"response_format", &f.response_format}})
    if (!raw->empty())
      out += std::string{",\""} + key + "\":" + *raw;
  return out + "}";
}

/// `{id, trigger_type, function_id, worker_name, owner_worker_id, status,
/// config, metadata?}`: worker_name names the worker of the bound function
/// (null when it is not registered), owner_worker_id the binder (null for
/// engine::register_trigger bindings, which belong to no connection).
std::string binding_row(self_ptr self, const std::string& id, const binding& b) {
  auto& cat = self->state.catalog;
  auto* f = cat.find_function(b.function_id);
  auto out = R"({"id":)" + rpc::quote(id) + R"(,"trigger_type":)" + rpc::quote(b.trigger_type)
             + R"(,"function_id":)" + rpc::quote(b.function_id) + R"(,"worker_name":)"
             + (f ? rpc::quote(cat.worker_name(f->owner)) : std::string{"null"})
             + R"(,"owner_worker_id":)"
             + (b.binder.empty() ? std::string{"null"} : rpc::quote(b.binder))
             + R"(,"status":)" + (b.active ? R"("active")" : R"("pending")") + R"(,"config":)"
             + (b.config.empty() ? std::string{"null"} : b.config);
  if (!b.metadata.empty())
    out += R"(,"metadata":)" + b.metadata;
  return out + "}";
}

std::string trigger_type_info(self_ptr self, const registry::trigger_type_entry& t) {
  std::size_t instances = 0;
  for (auto& [id, b] : self->state.triggers)
    instances += b.trigger_type == t.id;
  auto row = self->state.catalog.trigger_type_row(t);
  row.pop_back();
  return row + R"(,"instance_count":)" + std::to_string(instances) + "}";
}

/// Rows in key order, comma-separated.
std::string join(const std::map<std::string, std::string>& rows) {
  std::string out;
  for (auto& [k, row] : rows)
    out += (out.empty() ? "" : ",") + row;
  return out;
}

// --- the engine's functions -------------------------------------------------

void workers_register(const engine_request& c) {
  auto& st = c.st();
  // The worker is the calling connection, not anything in the payload.
  st.catalog.set_worker_metadata(c.req.caller_worker_id, c.req.data);
  if (auto* w = st.catalog.find_worker(c.req.caller_worker_id)) {
    spdlog::info("iii worker {} is {} ({} {})", w->id, w->name.empty() ? "?" : w->name,
                 w->runtime, w->version);
    tell_cluster(c.self);
    fire_worker_event(c.self, "worker_metadata_updated", w->id);
  }
  c.ok(R"({"success":true})");
}

void channels_create(const engine_request& c) {
  // The caller (a worker_connection) owns the channel.
  reply(c.self, c.caller, c.tag, c.req,
        create_channel(c.self, caf::actor_cast<caf::actor>(c.caller), c.req.data,
                       c.st().opts.channels));
}

void functions_list(const engine_request& c);

void workers_list(const engine_request& c) {
  c.ok(iii_cluster::workers_json(c.self));
}

void functions_info(const engine_request& c) {
  auto fid = c.text("function_id");
  if (fid.empty())
    return c.fail(invalid("engine::functions::info needs {function_id}"));
  const registry::function_catalog* cat = &c.st().catalog;
  auto* f = cat->find_function(fid);
  std::string node = c.st().node_name;
  if (!f) // another node's, listed by engine::functions::list too
    f = iii_cluster::remote_function(c.st(), fid, &cat, &node);
  if (!c.visible(fid, f ? &f->metadata : nullptr))
    return c.fail(manager_errors::iii_error(iii::code::forbidden,
                                    "function '" + fid + "' not visible to this session"));
  if (!f)
    return c.fail_not_found("Function " + fid);
  auto row = function_info(*f, *cat);
  c.ok(node.empty() ? row : iii_cluster::with_node(std::move(row), node));
}

void workers_info(const engine_request& c) {
  auto& st = c.st();
  auto name = c.text("name");
  if (name.empty())
    return c.fail(invalid("engine::workers::info needs {name}"));
  auto* w = st.catalog.find_worker_by_name(name);
  if (!w) {
    // Another node's worker: its functions and types (its bindings stay there).
    for (auto& [node, cat] : st.node_catalogs)
      if (auto* rw = cat.find_worker_by_name(name)) {
        std::map<std::string, std::string> fns, types;
        for (auto& [fid, f] : cat.functions())
          if (f.owner == rw->id && c.visible(fid, &f.metadata))
            fns[fid] = iii_cluster::with_node(cat.function_row(f), node);
        for (auto& [tid, t] : cat.trigger_types())
          if (t.owner == rw->id)
            types[tid] = iii_cluster::with_node(cat.trigger_type_row(t), node);
        return c.ok(R"({"worker":)" + iii_cluster::with_node(cat.worker_row(*rw, 0), node)
                    + R"(,"functions":[)" + join(fns) + R"(],"trigger_types":[)" + join(types)
                    + R"(],"registered_triggers":[]})");
      }
    return c.fail_not_found("Worker " + name);
  }
  std::map<std::string, std::string> fns, types, bound;
  for (auto& [fid, f] : st.catalog.functions())
    if (f.owner == w->id && c.visible(fid, &f.metadata))
      fns[fid] = st.catalog.function_row(f);
  for (auto& [tid, t] : st.catalog.trigger_types())
    if (t.owner == w->id)
      types[tid] = st.catalog.trigger_type_row(t);
  for (auto& [bid, b] : st.triggers)
    if (b.binder == w->id)
      bound[bid] = binding_row(c.self, bid, b);
  c.ok(R"({"worker":)" + st.catalog.worker_row(*w, 0) + R"(,"functions":[)" + join(fns)
       + R"(],"trigger_types":[)" + join(types) + R"(],"registered_triggers":[)" + join(bound)
       + "]}");
}

void triggers_list(const engine_request& c) {
  auto rows = iii_cluster::trigger_type_rows(c.self, c.text("prefix"), c.text("search"));
  c.ok(R"({"triggers":[)" + join(rows) + "]}");
}

void triggers_info(const engine_request& c) {
  auto tid = c.text("id");
  if (tid.empty())
    return c.fail(invalid("engine::triggers::info needs {id}"));
  auto* t = c.st().catalog.find_trigger_type(tid);
  if (!t)
    return c.fail_not_found("Trigger type " + tid);
  c.ok(trigger_type_info(c.self, *t));
}

void registered_triggers_list(const engine_request& c) {
  auto type = c.text("trigger_type");
  auto fid = c.text("function_id");
  auto search = c.text("search");
  bool pending = c.flag("include_pending");
  std::map<std::string, std::string> rows;
  for (auto& [bid, b] : c.st().triggers) {
    if ((!type.empty() && b.trigger_type != type) || (!fid.empty() && b.function_id != fid)
        || (!pending && !b.active))
      continue;
    if (!search.empty() && bid.find(search) == std::string::npos
        && b.trigger_type.find(search) == std::string::npos
        && b.function_id.find(search) == std::string::npos)
      continue;
    rows[bid] = binding_row(c.self, bid, b);
  }
  c.ok(R"({"registered_triggers":[)" + join(rows) + "]}");
}

void registered_triggers_info(const engine_request& c) {
  auto& st = c.st();
  auto bid = c.text("id");
  if (bid.empty())
    return c.fail(invalid("engine::registered-triggers::info needs {id}"));
  auto i = st.triggers.find(bid);
  if (i == st.triggers.end())
    return c.fail_not_found("Trigger " + bid);
  auto row = binding_row(c.self, bid, i->second);
  row.pop_back();
  auto* t = st.catalog.find_trigger_type(i->second.trigger_type);
  auto* f = st.catalog.find_function(i->second.function_id);
  c.ok(row + R"(,"trigger":)" + (t ? trigger_type_info(c.self, *t) : "null") + R"(,"function":)"
       + (f ? function_info(*f, st.catalog) : "null") + "}");
}

/// engine::register_trigger {trigger_type, function_id, config, metadata?}:
/// a binding of no connection. With a worker provider the answer waits for
/// its triggerregistrationresult (the binding answers); for an engine type,
/// or a type nobody provides yet (parked), `{id}` at once.
void register_trigger(const engine_request& c) {
  auto& st = c.st();
  trigger_binding_args a;
  a.trigger_type = c.text("trigger_type");
  a.function_id = c.text("function_id");
  if (!c.has_params || a.trigger_type.empty() || a.function_id.empty())
    return c.fail(invalid("engine::register_trigger needs {trigger_type, function_id, config}"));
  if (auto bind = may_bind(c.self, c.req.caller_worker_id, a.function_id); !bind)
    return c.fail(manager_errors::iii_error(iii::code::forbidden, bind.error()));
  if (auto* config = c.params.find("config"))
    a.config = *config;
  a.metadata = c.raw("metadata");
  a.id = iii::new_uuid();
  a.wait_timeout = register_trigger_timeout;
  auto* t = st.catalog.find_trigger_type(a.trigger_type);
  // Another node's provider answers through the gateways, as a local one.
  bool remote = !t && iii_cluster::offered_elsewhere(st, a.trigger_type);
  bool waits = ((t && !t->owner.empty() && st.workers.count(t->owner)) || remote)
               && c.req.wants_reply;
  if (waits) {
    a.waiter = caf::actor_cast<caf::actor>(c.caller);
    a.waiter_tag = c.tag;
  }
  auto id = a.id;
  auto& b = add_binding(c.self, {}, std::move(a));
  deliver(c.self, b);
  spdlog::info("trigger {} ({} -> {}) registered by {}{}", id, b.trigger_type, b.function_id,
               c.req.caller_worker_id.empty() ? "the engine" : c.req.caller_worker_id,
               t || remote ? "" : "; parked: trigger type not registered");
  if (!waits)
    c.ok(R"({"id":)" + rpc::quote(id) + "}");
}

void unregister_trigger(const engine_request& c) {
  auto& st = c.st();
  auto bid = c.text("id");
  if (bid.empty())
    return c.fail(invalid("engine::unregister_trigger needs {id}"));
  auto type = c.text("trigger_type");
  auto i = st.triggers.find(bid);
  bool removed = i != st.triggers.end() && (type.empty() || i->second.trigger_type == type);
  if (removed) {
    spdlog::info("trigger {} ({} -> {}) unregistered through engine::unregister_trigger", bid,
                 i->second.trigger_type, i->second.function_id);
    unbind(c.self, bid);
  }
  c.ok(std::string{R"({"removed":)"} + (removed ? "true" : "false") + "}");
}

struct engine_function {
  std::string_view id;
  void (*run)(const engine_request&);
};

// Sorted by id: engine::functions::list shows them in this order.
constexpr engine_function engine_functions[] = {
  {"engine::channels::create", channels_create},
  {"engine::functions::info", functions_info},
  {"engine::functions::list", functions_list},
  {"engine::register_trigger", register_trigger},
  {"engine::registered-triggers::info", registered_triggers_info},
  {"engine::registered-triggers::list", registered_triggers_list},
  {"engine::triggers::info", triggers_info},
  {"engine::triggers::list", triggers_list},
  {"engine::unregister_trigger", unregister_trigger},
  {"engine::workers::info", workers_info},
  {"engine::workers::list", workers_list},
  {"engine::workers::register", workers_register},
};

void functions_list(const engine_request& c) {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (auto& f : engine_functions)
      out.emplace_back(f.id);
    return out;
  }();
  std::function<bool(const std::string&, const std::string*)> visible;
  if (c.access)
    visible = [&c](const std::string& fid, const std::string* metadata) {
      return c.visible(fid, metadata);
    };
  c.ok(iii_cluster::functions_json(c.self, c.req.data, ids, visible));
}

} // namespace

void engine_call(self_ptr self, const caller_actor& caller, std::uint64_t tag,
                 const invocation_request& req) {
  engine_request c{self, caller, tag, req, {}, false, access_of(self, req)};
  if (auto params = rpc::split_object(req.data)) {
    c.params = std::move(*params);
    c.has_params = true;
  }
  for (auto& f : engine_functions)
    if (f.id == req.function_id)
      return f.run(c);
  c.fail(not_found(req.function_id));
}

} // namespace actor_host
