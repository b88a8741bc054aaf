#include "actors/iii/function_registry.hpp"

#include "actors/call/errors.hpp"
#include "actors/cluster/cluster_types.hpp"
#include "actors/iii/channel.hpp"
#include "actors/iii/engine_functions.hpp"
#include "actors/iii/function_registry_ops.hpp"
#include "actors/iii/iii_cluster_view.hpp"
#include "obs/metrics.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/secure_random.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace actor_host {

namespace iii = wire::iii;
namespace rpc = wire::jsonrpc;

const std::string* function_registry_state::worker_of(const caf::actor_addr& conn) const {
  for (auto& [id, w] : workers)
    if (w.conn.address() == conn)
      return &id;
  return nullptr;
}

namespace registry_ops {

/// True (with a log line and a count) when `id` belongs to another worker
/// that is still connected: ids are not taken over, only given up.
template <class Entry>
bool held_by_other_live_worker(const function_registry_state& st, const Entry* old,
                               const std::string& claimant, const char* what,
                               const std::string& id) {
  if (!old || old->owner == claimant || !st.workers.count(old->owner))
    return false;
  obs::global().iii_registrations_refused.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("iii worker {}: {} {} belongs to live worker {}; registration refused", claimant,
               what, id, old->owner);
  return true;
}

void reply(self_ptr self, const caller_actor& caller, std::uint64_t tag,
           const invocation_request& req, call_end end) {
  if (req.wants_reply)
    self->send(caller, done_atom_v, tag, std::move(end));
}

call_error not_found(const std::string& function_id) {
  return manager_errors::iii_error(iii::code::function_not_found,
                                   "Function " + function_id + " not found");
}

call_error invalid(const std::string& message) {
  return manager_errors::iii_error(iii::code::invalid_arguments, message);
}

/// The calling worker's RBAC view (null: no RBAC, or not a worker).
const registry::worker_access* access_of(self_ptr self, const invocation_request& req) {
  auto w = self->state.workers.find(req.caller_worker_id);
  return w == self->state.workers.end() ? nullptr : w->second.access.get();
}

/// A call on behalf of the engine or a worker: the owning worker's
/// connection sends the frame and spawns the invocation.
bool route(self_ptr self, const caller_actor& caller, std::uint64_t tag, invocation_request& req) {
  auto& st = self->state;
  auto* f = st.catalog.find_function(req.function_id);
  auto w = f ? st.workers.find(f->owner) : st.workers.end();
  if (w == st.workers.end()) {
    // Another node's function: this node's gateway stands for that node.
    auto r = st.remote_functions.find(req.function_id);
    if (r == st.remote_functions.end() || !st.gateway)
      return false;
    self->send(st.gateway, execute_atom_v, r->second.node, r->second.conn, caller, tag,
               std::move(req));
    return true;
  }
  self->send(w->second.conn, execute_atom_v, caller, tag, std::move(req));
  return true;
}

/// Fires an engine trigger type: every active binding's function is called
/// (void) with the binding's metadata, without `_caller_worker_id`.
void fire(self_ptr self, std::string_view type, const std::string& data) {
  for (auto& [id, b] : self->state.triggers) {
    if (b.trigger_type != type || !b.active)
      continue;
    invocation_request req;
    req.function_id = b.function_id;
    req.data = data;
    req.metadata = b.metadata;
    req.wants_reply = false;
    req.timeout = engine_fire_timeout;
    if (!route(self, caller_actor{}, 0, req)) // a void call: no caller
      spdlog::info("trigger {} ({}): function {} is not registered; not fired", id, type,
                   b.function_id);
  }
}

// The bindings, the cluster node and the listeners are dynamically typed
// actors: the (typed) registry reaches them with anon_send.

void tell_listeners(self_ptr self) {
  for (auto& l : self->state.listeners)
    caf::anon_send(l, changed_atom_v, std::string{"workers"});
}

void fire_worker_event(self_ptr self, std::string_view event, const std::string& worker_id) {
  tell_listeners(self);
  fire(self, workers_available_type,
       R"({"event":")" + std::string{event} + R"(","worker_id":)" + rpc::quote(worker_id) + "}");
}

bool has_bindings(self_ptr self, std::string_view type) {
  auto& ts = self->state.triggers;
  return std::any_of(ts.begin(), ts.end(), [&](auto& kv) { return kv.second.trigger_type == type; });
}

/// The metadata RBAC filters read: a local function's, else another node's.
const std::string* metadata_of(const function_registry_state& st, const std::string& id) {
  if (auto* f = st.catalog.find_function(id))
    return &f->metadata;
  if (auto r = st.remote_functions.find(id); r != st.remote_functions.end())
    return &r->second.metadata;
  return nullptr;
}

void tell_cluster(self_ptr self) {
  auto& st = self->state;
  if (!st.cluster)
    return;
  caf::anon_send(st.cluster, local_fns_atom_v, iii_cluster::local_set(st));
}

/// One check after the window, however many changes come meanwhile.
/// Nothing is scheduled while nobody listens.
void check_functions(self_ptr self) {
  auto& st = self->state;
  tell_listeners(self);
  if (st.flush_due || !has_bindings(self, functions_available_type))
    return;
  st.flush_due = true;
  self->delayed_send(self, functions_changed_window, flush_atom_v);
}

/// This node's function set changed.
void functions_changed(self_ptr self) {
  tell_cluster(self);
  check_functions(self);
}

/// The default engine::functions::list answer (of the whole cluster), the
/// set functions-available compares and sends.
std::string functions_now(self_ptr self) {
  return iii_cluster::functions_json(self, "{}", {}, {});
}

void deliver(self_ptr self, binding& b) {
  auto& st = self->state;
  auto* t = st.catalog.find_trigger_type(b.trigger_type);
  if (!t)
    return (void) iii_cluster::offer(self, b); // another node's type, if any
  if (t->owner.empty()) {
    // The engine's own type: fired from here, nothing to tell.
    b.active = true;
    return;
  }
  if (auto w = st.workers.find(t->owner); w != st.workers.end()) {
    iii_cluster::withdraw(self, b); // from another node's provider
    b.active = true;
    caf::anon_send(b.actor, provider_atom_v, w->second.transport);
  }
}

void unbind(self_ptr self, const std::string& trigger_id) {
  auto& ts = self->state.triggers;
  if (auto i = ts.find(trigger_id); i != ts.end()) {
    iii_cluster::withdraw(self, i->second);
    caf::anon_send(i->second.actor, retire_atom_v);
    ts.erase(i);
    tell_listeners(self);
  }
}

/// Stores a new binding; the newest binding of an id wins.
binding& add_binding(self_ptr self, std::string binder, trigger_binding_args args) {
  auto& st = self->state;
  unbind(self, args.id);
  auto id = args.id;
  binding b;
  b.trigger_type = args.trigger_type;
  b.function_id = args.function_id;
  b.config = args.config;
  b.metadata = args.metadata;
  b.binder = std::move(binder);
  b.id = id;
  b.actor = self->spawn<caf::linked>(trigger_binding, std::move(args));
  if (b.trigger_type == functions_available_type)
    st.functions_seen = functions_now(self); // events report changes from now on
  tell_listeners(self);
  return st.triggers[id] = std::move(b);
}

/// May the worker `binder` (under RBAC) have `function_id` called by a
/// trigger? The same rule as its own calls: a binding fires the function on
/// the engine's behalf, so it must not reach what the session cannot call.
wire::expected<void> may_bind(self_ptr self, const std::string& binder,
                                  const std::string& function_id) {
  auto& st = self->state;
  auto w = st.workers.find(binder);
  if (w == st.workers.end() || !w->second.access || !w->second.access->config)
    return {};
  auto& a = *w->second.access;
  auto* f = st.catalog.find_function(function_id);
  auto d = registry::check_invoke(*a.config, a.session, function_id, f ? &f->metadata : nullptr);
  if (d == registry::invoke_decision::allow)
    return {};
  obs::global().iii_bindings_refused.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("iii worker {}: binding to {} refused: the session may not call it", binder,
               function_id);
  return wire::unexpected{"trigger on " + registry::forbidden_message(d, function_id)};
}

void on_invoke(self_ptr self, const caller_actor& caller, std::uint64_t tag,
               invocation_request& req) {
  // RBAC sessions: the decision with the function's metadata (the
  // connection could only check ids; it lets calls through here when a
  // metadata filter might allow them). Calls the manager makes on a
  // worker's behalf (auth, hooks, middleware) carry no worker id.
  if (auto* a = access_of(self, req); a && a->config) {
    auto d = registry::check_invoke(*a->config, a->session, req.function_id,
                                    metadata_of(self->state, req.function_id));
    if (d != registry::invoke_decision::allow) {
      spdlog::info("iii worker {}: call of {} denied", req.caller_worker_id, req.function_id);
      obs::global().record_invocation(iii::code::forbidden, {});
      return reply(self, caller, tag, req,
                   failed(manager_errors::iii_error(
                     iii::code::forbidden, registry::forbidden_message(d, req.function_id))));
    }
  }
  if (req.function_id.starts_with("engine::"))
    return engine_call(self, caller, tag, req);
  auto function_id = req.function_id;
  if (!route(self, caller, tag, req))
    reply(self, caller, tag, req, failed(not_found(function_id)));
}

/// Everything a connection registered goes away with it, except what a newer
/// connection has taken over in the meantime (ownership by worker id).
/// Bindings made by engine::register_trigger stay (parked if it provided
/// their type).
void cleanup(self_ptr self, const std::string& worker_id) {
  auto& st = self->state;
  auto fns = st.catalog.remove_functions_of(worker_id);
  auto types = st.catalog.remove_trigger_types_of(worker_id);
  std::vector<std::string> bound;
  for (auto& [id, b] : st.triggers) {
    if (b.binder == worker_id
        || (!b.origin.empty() && std::find(types.begin(), types.end(), b.trigger_type) != types.end())) {
      bound.push_back(id); // another node's binding goes: that node offers it again
    } else if (std::find(types.begin(), types.end(), b.trigger_type) != types.end()) {
      b.active = false;
      caf::anon_send(b.actor, park_atom_v);
    }
  }
  for (auto& id : bound)
    unbind(self, id);
  st.catalog.remove_worker(worker_id);
  st.workers.erase(worker_id);
  iii_cluster::reoffer(self); // parked ones to another node's provider of their type
  spdlog::info("iii worker {} gone: removed {} function(s), {} trigger type(s), {} trigger(s)",
               worker_id, fns.size(), types.size(), bound.size());
  if (!fns.empty())
    functions_changed(self);
  else
    tell_cluster(self);
  fire_worker_event(self, "worker_disconnected", worker_id);
}

} // namespace registry_ops

using namespace registry_ops;

function_registry_actor::behavior_type
function_registry(function_registry_actor::stateful_pointer<function_registry_state> self) {
  // The engine's own trigger types (owner "" = the engine).
  self->state.catalog.put_trigger_type(
    {std::string{workers_available_type}, {},
     "Fires {event, worker_id} when a worker connects, disconnects or updates its metadata"});
  self->state.catalog.put_trigger_type(
    {std::string{functions_available_type}, {},
     "Fires {event: \"functions_changed\", functions} when the set of functions changed"});
  self->set_down_handler([self](caf::down_msg& dm) {
    if (auto* id = self->state.worker_of(dm.source)) {
      auto copy = *id;
      cleanup(self, copy);
    }
  });
  // Bindings are linked so they die with the registry on shutdown; one that
  // ends on its own (engine::register_trigger refused or unanswered) is
  // forgotten.
  self->set_exit_handler([self](caf::exit_msg& em) {
    auto& ts = self->state.triggers;
    for (auto i = ts.begin(); i != ts.end(); ++i) {
      if (i->second.actor.address() == em.source) {
        iii_cluster::withdraw(self, i->second);
        ts.erase(i);
        return;
      }
    }
    if (em.reason != caf::exit_reason::normal)
      self->quit(em.reason);
  });
  return {
    [self](worker_atom, std::string& id, std::string& token, worker_connection_actor& conn,
           net::transport_ptr& transport, std::string& ip, registry::worker_access_ptr& access) {
      auto& st = self->state;
      self->monitor(conn);
      registry::worker_record rec;
      rec.id = id;
      rec.ip = std::move(ip);
      rec.connected_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      st.catalog.add_worker(std::move(rec));
      st.workers[id] = {std::move(conn), std::move(transport), std::move(token),
                        std::move(access)};
      tell_cluster(self);
      fire_worker_event(self, "worker_connected", id);
    },
    [self](reattach_atom, const std::string& id, const std::string& previous,
           const std::string& token) {
      auto& st = self->state;
      auto w = st.workers.find(previous);
      if (previous == id || w == st.workers.end() || !wire::secrets_equal(w->second.token, token)) {
        spdlog::debug("reattach of {} to {}: nothing to retire", id, previous);
        return;
      }
      spdlog::info("iii worker {} reattached as {}: retiring the old connection", previous, id);
      // Clean up before the new connection's replay (already queued behind
      // this message) lands; the old socket fails its invocations itself.
      auto conn = w->second.conn;
      self->demonitor(conn.address());
      cleanup(self, previous);
      self->send(conn, replaced_atom_v);
    },
    [self](fn_add_atom, registry::worker_function& f) {
      auto& st = self->state;
      if (!st.workers.count(f.owner))
        return; // the connection is already gone
      // Newest-wins would hand the next caller's payload (and context) to
      // whoever registers a live worker's id.
      if (held_by_other_live_worker(st, st.catalog.find_function(f.id), f.owner, "function", f.id))
        return;
      st.catalog.put_function(std::move(f));
      functions_changed(self);
    },
    [self](fn_remove_atom, const std::string& worker_id, const std::string& function_id) {
      if (self->state.catalog.remove_function(function_id, worker_id))
        functions_changed(self);
    },
    [self](flush_atom) {
      auto& st = self->state;
      st.flush_due = false;
      auto now = functions_now(self);
      if (now == st.functions_seen)
        return; // changed and changed back within the window
      st.functions_seen = now;
      fire(self, functions_available_type, R"({"event":"functions_changed",)" + now.substr(1));
    },
    [self](type_add_atom, registry::trigger_type_entry& t) {
      auto& st = self->state;
      if (!st.workers.count(t.owner))
        return;
      if (t.id.starts_with("engine::")) {
        spdlog::warn("iii worker {}: trigger type {} is the engine's; registration dropped",
                     t.owner, t.id);
        return;
      }
      if (held_by_other_live_worker(st, st.catalog.find_trigger_type(t.id), t.owner,
                                    "trigger type", t.id))
        return;
      auto id = t.id;
      st.catalog.put_trigger_type(std::move(t));
      // Parked bindings of this type come alive; live ones are re-sent to
      // the (possibly new) provider.
      for (auto& [tid, b] : st.triggers)
        if (b.trigger_type == id)
          deliver(self, b);
      tell_cluster(self);
      tell_listeners(self);
    },
    [self](bind_atom, const std::string& worker_id, trigger_binding_args& args) {
      auto& st = self->state;
      if (!st.workers.count(worker_id))
        return;
      if (!may_bind(self, worker_id, args.function_id))
        return; // refused, logged and counted by may_bind
      auto id = args.id;
      auto& b = add_binding(self, worker_id, std::move(args));
      if (st.catalog.find_trigger_type(b.trigger_type))
        deliver(self, b);
      else if (!iii_cluster::offer(self, b))
        spdlog::info("trigger {} parked: trigger type {} is not registered", id, b.trigger_type);
    },
    [self](unbind_atom, const std::string& worker_id, const std::string& trigger_id) {
      auto& ts = self->state.triggers;
      if (auto i = ts.find(trigger_id); i != ts.end() && i->second.binder == worker_id)
        unbind(self, trigger_id);
    },
    [self](bind_result_atom, const std::string& worker_id, const std::string& trigger_id,
           std::string& error) {
      auto& st = self->state;
      auto i = st.triggers.find(trigger_id);
      if (i == st.triggers.end())
        return;
      // Only the provider of the binding's type is listened to.
      auto* t = st.catalog.find_trigger_type(i->second.trigger_type);
      if (!t || t->owner != worker_id)
        return;
      if (!error.empty())
        i->second.active = false;
      iii_cluster::forward_result(self, i->second, error); // for another node's binding
      caf::anon_send(i->second.actor, bind_answer_atom_v, std::move(error));
    },
    [self](invoke_atom, const caller_actor& caller, std::uint64_t tag, invocation_request& req) {
      on_invoke(self, caller, tag, req);
    },
    // Invocations the engine fires are void; nothing comes back.
    [](done_atom, std::uint64_t, const call_end&) {},
    [self](route_iii_atom, const std::string& function_id)
      -> caf::result<worker_connection_actor, std::string, std::string> {
      auto& st = self->state;
      auto* f = st.catalog.find_function(function_id);
      auto w = f ? st.workers.find(f->owner) : st.workers.end();
      auto r = st.remote_functions.find(function_id);
      bool remote = w == st.workers.end() && r != st.remote_functions.end();
      if (w == st.workers.end() && !remote)
        return call_refusal(manager_errors::make_error(
          wire::status_code::not_found, "iii function " + function_id + " not found"));
      if (!registry::may_see(st.opts.front_door.get(), function_id,
                             metadata_of(st, function_id))) {
        obs::global().record_invocation(iii::code::forbidden, {});
        spdlog::info("front door: call of iii function {} denied by the RBAC policy",
                     function_id);
        return call_refusal(manager_errors::make_error(
          wire::status_code::permission_denied,
          "iii function " + function_id
            + " is not exposed to the front door (add it to worker_expose_functions)"));
      }
      if (remote)
        return {caf::actor_cast<worker_connection_actor>(r->second.conn), function_id,
                r->second.node};
      return {w->second.conn, function_id, std::string{}};
    },
    [self](cluster_atom, caf::actor& cluster, caf::actor& gateway, const std::string& node) {
      self->state.cluster = std::move(cluster);
      self->state.gateway = caf::actor_cast<gateway_actor>(std::move(gateway));
      self->state.node_name = node;
      iii_cluster::join(self);
      tell_cluster(self);
    },
    [self](fn_set_atom, const std::string& node, iii_node_set& set) {
      iii_cluster::apply_node_set(self, node, std::move(set));
    },
    [self](node_lost_atom, const std::string& node) { iii_cluster::forget_node(self, node); },
    [self](list_iii_atom) -> std::string {
      // The front door lists what it may call (a copy: listings are rare).
      auto& st = self->state;
      if (!st.opts.front_door)
        return st.catalog.genkit_actions_json();
      auto visible = st.catalog;
      for (auto& [id, f] : st.catalog.functions())
        if (!registry::may_see(st.opts.front_door.get(), id, &f.metadata))
          visible.remove_function(id, f.owner);
      return visible.genkit_actions_json();
    },
    [self](iii_options_atom, function_registry_options& opts) { self->state.opts = std::move(opts); },
    [self](subscribe_atom, caf::actor& listener) {
      self->state.listeners.push_back(std::move(listener));
    },
    [self](snapshot_atom) -> std::string { return dashboard_json(self); },
    // From this node's gateway: iii_cluster_triggers.cpp.
    [self](bind_atom, const std::string& node, iii_wire& w) { iii_cluster::on_wire(self, node, w); },
    [self](attach_atom, std::uint64_t tag, const std::string& id, const std::string& key,
           bool writer, const std::string& node) {
      return iii_cluster::on_attach(self, tag, id, key, writer, node);
    },
  };
}

} // namespace actor_host
