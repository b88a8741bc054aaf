#include "actors/manager/function_registry.hpp"

#include "actors/manager/channel.hpp"
#include "actors/manager/errors.hpp"
#include "net/iii_protocol.hpp"
#include "net/secure_random.hpp"
#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace actor_host {

namespace iii = net::iii;
namespace rpc = net::jsonrpc;

const std::string* function_registry_state::worker_of(const caf::actor_addr& conn) const {
  for (auto& [id, w] : workers)
    if (w.conn.address() == conn)
      return &id;
  return nullptr;
}

const std::vector<std::string>& engine_function_ids() {
  static const std::vector<std::string> ids{
    "engine::channels::create",         "engine::functions::info",
    "engine::functions::list",          "engine::register_trigger",
    "engine::registered-triggers::info", "engine::registered-triggers::list",
    "engine::triggers::info",           "engine::triggers::list",
    "engine::unregister_trigger",       "engine::workers::info",
    "engine::workers::list",            "engine::workers::register"};
  return ids;
}

namespace {

using self_ptr = caf::stateful_actor<function_registry_state>*;
using binding = function_registry_state::binding;

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

void reply(self_ptr self, std::uint64_t tag, const invocation_request& req, bool ok,
           std::string raw) {
  if (!req.wants_reply)
    return;
  self->send(caf::actor_cast<caf::actor>(self->current_sender()), done_atom_v, tag, ok,
             std::move(raw));
}

std::string not_found(const std::string& function_id) {
  return iii::error_object(iii::code::function_not_found, "Function " + function_id + " not found");
}

std::string invalid(const std::string& message) {
  return iii::error_object(iii::code::invalid_arguments, message);
}

std::string string_param(const rpc::object_members& p, std::string_view name) {
  std::string s;
  if (auto* raw = p.find(name))
    rpc::string_value(*raw, s);
  return s;
}

bool bool_param(const rpc::object_members& p, std::string_view name) {
  bool b = false;
  if (auto* raw = p.find(name))
    rpc::is_bool(*raw, b);
  return b;
}

std::string raw_param(const rpc::object_members& p, std::string_view name) {
  auto* raw = p.find(name);
  return raw && *raw != "null" ? *raw : std::string{};
}

/// The calling worker's RBAC view (null: no RBAC, or not a worker).
const registry::worker_access* access_of(self_ptr self, const invocation_request& req) {
  auto w = self->state.workers.find(req.caller_worker_id);
  return w == self->state.workers.end() ? nullptr : w->second.access.get();
}

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

std::size_t instance_count(self_ptr self, const std::string& type) {
  std::size_t n = 0;
  for (auto& [id, b] : self->state.triggers)
    n += b.trigger_type == type;
  return n;
}

std::string trigger_type_info(self_ptr self, const registry::trigger_type_entry& t) {
  auto row = self->state.catalog.trigger_type_row(t);
  row.pop_back();
  return row + R"(,"instance_count":)" + std::to_string(instance_count(self, t.id)) + "}";
}

std::string join(const std::map<std::string, std::string>& rows) {
  std::string out;
  for (auto& [k, row] : rows)
    out += (out.empty() ? "" : ",") + row;
  return out;
}

/// A call on behalf of the engine or a worker: the owning worker's
/// connection sends the frame and spawns the invocation.
bool route(self_ptr self, const caf::actor& caller, std::uint64_t tag, invocation_request& req) {
  auto& st = self->state;
  auto* f = st.catalog.find_function(req.function_id);
  auto w = f ? st.workers.find(f->owner) : st.workers.end();
  if (w == st.workers.end())
    return false;
  self->send(w->second.conn, invoke_atom_v, caller, tag, std::move(req));
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
    if (!route(self, caf::actor{self}, 0, req))
      spdlog::info("trigger {} ({}): function {} is not registered; not fired", id, type,
                   b.function_id);
  }
}

void fire_worker_event(self_ptr self, std::string_view event, const std::string& worker_id) {
  fire(self, workers_available_type,
       R"({"event":")" + std::string{event} + R"(","worker_id":)" + rpc::quote(worker_id) + "}");
}

bool has_bindings(self_ptr self, std::string_view type) {
  auto& ts = self->state.triggers;
  return std::any_of(ts.begin(), ts.end(), [&](auto& kv) { return kv.second.trigger_type == type; });
}

/// The function set changed: one check after the window, however many
/// changes come meanwhile. Nothing is scheduled while nobody listens.
void functions_changed(self_ptr self) {
  auto& st = self->state;
  if (st.flush_due || !has_bindings(self, functions_available_type))
    return;
  st.flush_due = true;
  self->delayed_send(self, functions_changed_window, flush_atom_v);
}

/// The default engine::functions::list answer, the set functions-available
/// compares and sends.
std::string functions_now(self_ptr self) {
  return self->state.catalog.functions_list_json("{}", {});
}

void deliver(self_ptr self, binding& b) {
  auto& st = self->state;
  auto* t = st.catalog.find_trigger_type(b.trigger_type);
  if (!t)
    return;
  if (t->owner.empty()) {
    // The engine's own type: fired from here, nothing to tell.
    b.active = true;
    return;
  }
  if (auto w = st.workers.find(t->owner); w != st.workers.end()) {
    b.active = true;
    self->send(b.actor, provider_atom_v, w->second.transport);
  }
}

void unbind(self_ptr self, const std::string& trigger_id) {
  auto& ts = self->state.triggers;
  if (auto i = ts.find(trigger_id); i != ts.end()) {
    self->send(i->second.actor, unbind_atom_v);
    ts.erase(i);
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
  b.actor = self->spawn<caf::linked>(trigger_binding, std::move(args));
  if (b.trigger_type == functions_available_type)
    st.functions_seen = functions_now(self); // events report changes from now on
  return st.triggers[id] = std::move(b);
}

/// May the worker `binder` (under RBAC) have `function_id` called by a
/// trigger? The same rule as its own calls: a binding fires the function on
/// the engine's behalf, so it must not reach what the session cannot call.
bool may_bind(self_ptr self, const std::string& binder, const std::string& function_id,
              std::string& why) {
  auto& st = self->state;
  auto w = st.workers.find(binder);
  if (w == st.workers.end() || !w->second.access || !w->second.access->config)
    return true;
  auto& a = *w->second.access;
  auto* f = st.catalog.find_function(function_id);
  auto d = registry::check_invoke(*a.config, a.session, function_id, f ? &f->metadata : nullptr);
  if (d == registry::invoke_decision::allow)
    return true;
  why = "trigger on " + registry::forbidden_message(d, function_id);
  obs::global().iii_bindings_refused.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("iii worker {}: binding to {} refused: the session may not call it", binder,
               function_id);
  return false;
}

/// engine::register_trigger {trigger_type, function_id, config, metadata?}:
/// a binding of no connection. With a worker provider the answer waits for
/// its triggerregistrationresult (the binding answers); for an engine type,
/// or a type nobody provides yet (parked), `{id}` at once.
void register_trigger(self_ptr self, std::uint64_t tag, const invocation_request& req,
                      const rpc::object_members& p) {
  auto& st = self->state;
  trigger_binding_args a;
  a.trigger_type = string_param(p, "trigger_type");
  a.function_id = string_param(p, "function_id");
  if (a.trigger_type.empty() || a.function_id.empty())
    return reply(self, tag, req, false,
                 invalid("engine::register_trigger needs {trigger_type, function_id, config}"));
  if (std::string why; !may_bind(self, req.caller_worker_id, a.function_id, why))
    return reply(self, tag, req, false, iii::error_object(iii::code::forbidden, why));
  if (auto* config = p.find("config"))
    a.config = *config;
  a.metadata = raw_param(p, "metadata");
  a.id = iii::new_uuid();
  a.wait_timeout = register_trigger_timeout;
  auto* t = st.catalog.find_trigger_type(a.trigger_type);
  bool waits = t && !t->owner.empty() && st.workers.count(t->owner) && req.wants_reply;
  if (waits) {
    a.waiter = caf::actor_cast<caf::actor>(self->current_sender());
    a.waiter_tag = tag;
  }
  auto id = a.id;
  auto& b = add_binding(self, {}, std::move(a));
  deliver(self, b);
  spdlog::info("trigger {} ({} -> {}) registered by {}{}", id, b.trigger_type, b.function_id,
               req.caller_worker_id.empty() ? "the engine" : req.caller_worker_id,
               t ? "" : "; parked: trigger type not registered");
  if (!waits)
    reply(self, tag, req, true, R"({"id":)" + rpc::quote(id) + "}");
}

// The engine's own functions, answered in-process.
void engine_call(self_ptr self, std::uint64_t tag, const invocation_request& req) {
  auto& st = self->state;
  auto& id = req.function_id;
  rpc::object_members p;
  std::string why;
  bool has_params = rpc::split_object(req.data, p, why);
  auto* access = access_of(self, req);
  auto visible = [access](const std::string& fid, const std::string* metadata) {
    return registry::may_see(access, fid, metadata);
  };
  auto visible_function = [&](const std::string& fid) {
    auto* f = st.catalog.find_function(fid);
    return visible(fid, f ? &f->metadata : nullptr);
  };
  if (id == "engine::workers::register") {
    // The worker is the calling connection, not anything in the payload.
    st.catalog.set_worker_metadata(req.caller_worker_id, req.data);
    if (auto* w = st.catalog.find_worker(req.caller_worker_id)) {
      spdlog::info("iii worker {} is {} ({} {})", w->id, w->name.empty() ? "?" : w->name,
                   w->runtime, w->version);
      fire_worker_event(self, "worker_metadata_updated", w->id);
    }
    return reply(self, tag, req, true, R"({"success":true})");
  }
  if (id == "engine::channels::create") {
    // The caller (a worker_connection) owns the channel.
    auto [ok, raw] = create_channel(self, caf::actor_cast<caf::actor>(self->current_sender()),
                                    req.data, st.opts.channels);
    return reply(self, tag, req, ok, std::move(raw));
  }
  if (id == "engine::functions::list")
    return reply(self, tag, req, true,
                 st.catalog.functions_list_json(req.data, engine_function_ids(),
                                                access ? std::function<bool(const std::string&, const std::string*)>{visible}
                                                       : nullptr));
  if (id == "engine::workers::list")
    return reply(self, tag, req, true, st.catalog.workers_list_json({}));
  if (id == "engine::functions::info") {
    auto fid = string_param(p, "function_id");
    if (fid.empty())
      return reply(self, tag, req, false, invalid("engine::functions::info needs {function_id}"));
    if (!visible_function(fid))
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::forbidden,
                                     "function '" + fid + "' not visible to this session"));
    auto* f = st.catalog.find_function(fid);
    if (!f)
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::not_found, "Function " + fid + " not found"));
    return reply(self, tag, req, true, function_info(*f, st.catalog));
  }
  if (id == "engine::workers::info") {
    auto name = string_param(p, "name");
    if (name.empty())
      return reply(self, tag, req, false, invalid("engine::workers::info needs {name}"));
    auto* w = st.catalog.find_worker_by_name(name);
    if (!w)
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::not_found, "Worker " + name + " not found"));
    std::map<std::string, std::string> fns, types, bound;
    for (auto& [fid, f] : st.catalog.functions())
      if (f.owner == w->id && visible(fid, &f.metadata))
        fns[fid] = st.catalog.function_row(f);
    for (auto& [tid, t] : st.catalog.trigger_types())
      if (t.owner == w->id)
        types[tid] = st.catalog.trigger_type_row(t);
    for (auto& [bid, b] : st.triggers)
      if (b.binder == w->id)
        bound[bid] = binding_row(self, bid, b);
    return reply(self, tag, req, true,
                 R"({"worker":)" + st.catalog.worker_row(*w, 0) + R"(,"functions":[)" + join(fns)
                   + R"(],"trigger_types":[)" + join(types) + R"(],"registered_triggers":[)"
                   + join(bound) + "]}");
  }
  if (id == "engine::triggers::list") {
    auto prefix = string_param(p, "prefix");
    auto search = string_param(p, "search");
    std::map<std::string, std::string> rows;
    for (auto& [tid, t] : st.catalog.trigger_types())
      if (tid.starts_with(prefix)
          && (search.empty() || tid.find(search) != std::string::npos
              || t.description.find(search) != std::string::npos))
        rows[tid] = st.catalog.trigger_type_row(t);
    return reply(self, tag, req, true, R"({"triggers":[)" + join(rows) + "]}");
  }
  if (id == "engine::triggers::info") {
    auto tid = string_param(p, "id");
    if (tid.empty())
      return reply(self, tag, req, false, invalid("engine::triggers::info needs {id}"));
    auto* t = st.catalog.find_trigger_type(tid);
    if (!t)
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::not_found, "Trigger type " + tid + " not found"));
    return reply(self, tag, req, true, trigger_type_info(self, *t));
  }
  if (id == "engine::registered-triggers::list") {
    auto type = string_param(p, "trigger_type");
    auto fid = string_param(p, "function_id");
    auto search = string_param(p, "search");
    bool pending = bool_param(p, "include_pending");
    std::map<std::string, std::string> rows;
    for (auto& [bid, b] : st.triggers) {
      if ((!type.empty() && b.trigger_type != type) || (!fid.empty() && b.function_id != fid)
          || (!pending && !b.active))
        continue;
      if (!search.empty() && bid.find(search) == std::string::npos
          && b.trigger_type.find(search) == std::string::npos
          && b.function_id.find(search) == std::string::npos)
        continue;
      rows[bid] = binding_row(self, bid, b);
    }
    return reply(self, tag, req, true, R"({"registered_triggers":[)" + join(rows) + "]}");
  }
  if (id == "engine::registered-triggers::info") {
    auto bid = string_param(p, "id");
    if (bid.empty())
      return reply(self, tag, req, false,
                   invalid("engine::registered-triggers::info needs {id}"));
    auto i = st.triggers.find(bid);
    if (i == st.triggers.end())
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::not_found, "Trigger " + bid + " not found"));
    auto row = binding_row(self, bid, i->second);
    row.pop_back();
    auto* t = st.catalog.find_trigger_type(i->second.trigger_type);
    auto* f = st.catalog.find_function(i->second.function_id);
    return reply(self, tag, req, true,
                 row + R"(,"trigger":)" + (t ? trigger_type_info(self, *t) : "null")
                   + R"(,"function":)" + (f ? function_info(*f, st.catalog) : "null") + "}");
  }
  if (id == "engine::register_trigger") {
    if (!has_params)
      return reply(self, tag, req, false,
                   invalid("engine::register_trigger needs {trigger_type, function_id, config}"));
    return register_trigger(self, tag, req, p);
  }
  if (id == "engine::unregister_trigger") {
    auto bid = string_param(p, "id");
    if (bid.empty())
      return reply(self, tag, req, false, invalid("engine::unregister_trigger needs {id}"));
    auto type = string_param(p, "trigger_type");
    auto i = st.triggers.find(bid);
    bool removed = i != st.triggers.end() && (type.empty() || i->second.trigger_type == type);
    if (removed) {
      spdlog::info("trigger {} ({} -> {}) unregistered through engine::unregister_trigger", bid,
                   i->second.trigger_type, i->second.function_id);
      unbind(self, bid);
    }
    return reply(self, tag, req, true,
                 std::string{R"({"removed":)"} + (removed ? "true" : "false") + "}");
  }
  reply(self, tag, req, false, not_found(id));
}

void on_invoke(self_ptr self, std::uint64_t tag, invocation_request& req) {
  // RBAC sessions: the decision with the function's metadata (the
  // connection could only check ids; it lets calls through here when a
  // metadata filter might allow them). Calls the manager makes on a
  // worker's behalf (auth, hooks, middleware) carry no worker id.
  if (auto* a = access_of(self, req); a && a->config) {
    auto* f = self->state.catalog.find_function(req.function_id);
    auto d = registry::check_invoke(*a->config, a->session, req.function_id,
                                    f ? &f->metadata : nullptr);
    if (d != registry::invoke_decision::allow) {
      spdlog::info("iii worker {}: call of {} denied", req.caller_worker_id, req.function_id);
      obs::global().record_invocation(iii::code::forbidden, {});
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::forbidden,
                                     registry::forbidden_message(d, req.function_id)));
    }
  }
  if (req.function_id.starts_with("engine::"))
    return engine_call(self, tag, req);
  auto caller = caf::actor_cast<caf::actor>(self->current_sender());
  auto function_id = req.function_id;
  if (!route(self, caller, tag, req))
    reply(self, tag, req, false, not_found(function_id));
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
    if (b.binder == worker_id) {
      bound.push_back(id);
    } else if (std::find(types.begin(), types.end(), b.trigger_type) != types.end()) {
      b.active = false;
      self->send(b.actor, park_atom_v);
    }
  }
  for (auto& id : bound)
    unbind(self, id);
  st.catalog.remove_worker(worker_id);
  st.workers.erase(worker_id);
  spdlog::info("iii worker {} gone: removed {} function(s), {} trigger type(s), {} trigger(s)",
               worker_id, fns.size(), types.size(), bound.size());
  if (!fns.empty())
    functions_changed(self);
  fire_worker_event(self, "worker_disconnected", worker_id);
}

} // namespace

caf::behavior function_registry(caf::stateful_actor<function_registry_state>* self) {
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
        ts.erase(i);
        return;
      }
    }
    if (em.reason != caf::exit_reason::normal)
      self->quit(em.reason);
  });
  return {
    [self](worker_atom, std::string& id, std::string& token, caf::actor& conn,
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
      fire_worker_event(self, "worker_connected", id);
    },
    [self](reattach_atom, const std::string& id, const std::string& previous,
           const std::string& token) {
      auto& st = self->state;
      auto w = st.workers.find(previous);
      if (previous == id || w == st.workers.end() || !net::secrets_equal(w->second.token, token)) {
        spdlog::debug("reattach of {} to {}: nothing to retire", id, previous);
        return;
      }
      spdlog::info("iii worker {} reattached as {}: retiring the old connection", previous, id);
      // Clean up before the new connection's replay (already queued behind
      // this message) lands; the old socket fails its invocations itself.
      auto conn = w->second.conn;
      self->demonitor(conn);
      cleanup(self, previous);
      self->send(conn, reattach_atom_v);
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
    },
    [self](bind_atom, const std::string& worker_id, trigger_binding_args& args) {
      auto& st = self->state;
      if (!st.workers.count(worker_id))
        return;
      if (std::string why; !may_bind(self, worker_id, args.function_id, why))
        return;
      auto id = args.id;
      auto& b = add_binding(self, worker_id, std::move(args));
      if (st.catalog.find_trigger_type(b.trigger_type))
        deliver(self, b);
      else
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
      self->send(i->second.actor, bind_result_atom_v, std::move(error));
    },
    [self](invoke_atom, std::uint64_t tag, invocation_request& req) { on_invoke(self, tag, req); },
    // Invocations the engine fires are void; nothing comes back.
    [](done_atom, std::uint64_t, bool, const std::string&) {},
    [self](route_atom, iii_atom,
           const std::string& function_id) -> caf::result<bool, caf::actor, std::string> {
      auto& st = self->state;
      auto* f = st.catalog.find_function(function_id);
      auto w = f ? st.workers.find(f->owner) : st.workers.end();
      if (w == st.workers.end())
        return {false, caf::actor{},
                manager_errors::status_error(registry::status_code::not_found,
                                             "iii function " + function_id + " not found")};
      if (!registry::may_see(st.opts.front_door.get(), function_id, &f->metadata)) {
        obs::global().record_invocation(iii::code::forbidden, {});
        spdlog::info("front door: call of iii function {} denied by the RBAC policy",
                     function_id);
        return {false, caf::actor{},
                manager_errors::status_error(
                  registry::status_code::permission_denied,
                  "iii function " + function_id
                    + " is not exposed to the front door (add it to worker_expose_functions)")};
      }
      return {true, w->second.conn, function_id};
    },
    [self](list_atom, iii_atom) -> std::string {
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
    [self](iii_atom, function_registry_options& opts) { self->state.opts = std::move(opts); },
  };
}

} // namespace actor_host
