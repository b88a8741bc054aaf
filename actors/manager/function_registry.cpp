#include "actors/manager/function_registry.hpp"

#include "actors/manager/channel.hpp"
#include "actors/manager/errors.hpp"
#include "net/iii_protocol.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

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
  static const std::vector<std::string> ids{"engine::channels::create",
                                            "engine::functions::info", "engine::functions::list",
                                            "engine::workers::list", "engine::workers::register"};
  return ids;
}

namespace {

using self_ptr = caf::stateful_actor<function_registry_state>*;

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

std::string function_info(const registry::worker_function& f,
                          const registry::function_catalog& catalog) {
  auto out = R"({"function_id":)" + rpc::quote(f.id) + R"(,"worker_id":)" + rpc::quote(f.owner);
  if (!f.description.empty())
    out += R"(,"description":)" + rpc::quote(f.description);
  for (auto [key, raw] : {std::pair{"metadata", &f.metadata},
                          std::pair{"request_format", &f.request_format},
                          std::pair{"response_format", &f.response_format}})
    if (!raw->empty())
      out += std::string{",\""} + key + "\":" + *raw;
  (void) catalog;
  return out + "}";
}

// The engine's own functions, answered in-process.
void engine_call(self_ptr self, std::uint64_t tag, const invocation_request& req) {
  auto& st = self->state;
  auto& id = req.function_id;
  if (id == "engine::workers::register") {
    // The worker is the calling connection, not anything in the payload.
    st.catalog.set_worker_metadata(req.caller_worker_id, req.data);
    if (auto* w = st.catalog.find_worker(req.caller_worker_id))
      spdlog::info("iii worker {} is {} ({} {})", w->id, w->name.empty() ? "?" : w->name,
                   w->runtime, w->version);
    return reply(self, tag, req, true, R"({"success":true})");
  }
  if (id == "engine::channels::create") {
    // The caller (a worker_connection) owns the channel.
    auto [ok, raw] = create_channel(self, caf::actor_cast<caf::actor>(self->current_sender()),
                                    req.data);
    return reply(self, tag, req, ok, std::move(raw));
  }
  if (id == "engine::functions::list")
    return reply(self, tag, req, true,
                 st.catalog.functions_list_json(req.data, engine_function_ids()));
  if (id == "engine::workers::list")
    return reply(self, tag, req, true, st.catalog.workers_list_json({}));
  if (id == "engine::functions::info") {
    rpc::object_members p;
    std::string why, fid;
    if (!rpc::split_object(req.data, p, why) || !p.find("function_id")
        || !rpc::string_value(*p.find("function_id"), fid))
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::invalid_arguments,
                                     "engine::functions::info needs {function_id}"));
    auto* f = st.catalog.find_function(fid);
    if (!f)
      return reply(self, tag, req, false,
                   iii::error_object(iii::code::not_found, "Function " + fid + " not found"));
    return reply(self, tag, req, true, function_info(*f, st.catalog));
  }
  reply(self, tag, req, false, not_found(id));
}

void on_invoke(self_ptr self, std::uint64_t tag, invocation_request& req) {
  auto& st = self->state;
  if (req.function_id.starts_with("engine::"))
    return engine_call(self, tag, req);
  auto* f = st.catalog.find_function(req.function_id);
  auto w = f ? st.workers.find(f->owner) : st.workers.end();
  if (w == st.workers.end())
    return reply(self, tag, req, false, not_found(req.function_id));
  // The executor's connection sends the frame and spawns the invocation, so
  // that it knows the id before any answer can arrive.
  self->send(w->second.conn, invoke_atom_v, caf::actor_cast<caf::actor>(self->current_sender()),
             tag, std::move(req));
}

void deliver(self_ptr self, const std::string& trigger_type, const caf::actor& binding) {
  auto* t = self->state.catalog.find_trigger_type(trigger_type);
  if (!t)
    return;
  if (auto w = self->state.workers.find(t->owner); w != self->state.workers.end())
    self->send(binding, provider_atom_v, w->second.transport);
}

void unbind(self_ptr self, const std::string& trigger_id) {
  auto& ts = self->state.triggers;
  if (auto i = ts.find(trigger_id); i != ts.end()) {
    self->send(i->second.actor, unbind_atom_v);
    ts.erase(i);
  }
}

/// Everything a connection registered goes away with it, except what a newer
/// connection has taken over in the meantime (ownership by worker id).
void cleanup(self_ptr self, const std::string& worker_id) {
  auto& st = self->state;
  auto fns = st.catalog.remove_functions_of(worker_id);
  auto types = st.catalog.remove_trigger_types_of(worker_id);
  std::vector<std::string> bound;
  for (auto& [id, b] : st.triggers) {
    if (b.binder == worker_id)
      bound.push_back(id);
    else if (std::find(types.begin(), types.end(), b.trigger_type) != types.end())
      self->send(b.actor, park_atom_v);
  }
  for (auto& id : bound)
    unbind(self, id);
  st.catalog.remove_worker(worker_id);
  st.workers.erase(worker_id);
  spdlog::info("iii worker {} gone: removed {} function(s), {} trigger type(s), {} trigger(s)",
               worker_id, fns.size(), types.size(), bound.size());
}

} // namespace

caf::behavior function_registry(caf::stateful_actor<function_registry_state>* self) {
  self->set_down_handler([self](caf::down_msg& dm) {
    if (auto* id = self->state.worker_of(dm.source)) {
      auto copy = *id;
      cleanup(self, copy);
    }
  });
  // Bindings are linked so they die with the registry on shutdown; one that
  // ends on its own is routine.
  self->set_exit_handler([self](caf::exit_msg& em) {
    if (em.reason == caf::exit_reason::normal)
      return;
    auto& ts = self->state.triggers;
    for (auto i = ts.begin(); i != ts.end(); ++i) {
      if (i->second.actor.address() == em.source) {
        ts.erase(i);
        return;
      }
    }
    self->quit(em.reason);
  });
  return {
    [self](worker_atom, std::string& id, std::string& token, caf::actor& conn,
           net::transport_ptr& transport, std::string& ip) {
      auto& st = self->state;
      self->monitor(conn);
      registry::worker_record rec;
      rec.id = id;
      rec.ip = std::move(ip);
      rec.connected_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      st.catalog.add_worker(std::move(rec));
      st.workers[id] = {std::move(conn), std::move(transport), std::move(token)};
    },
    [self](reattach_atom, const std::string& id, const std::string& previous,
           const std::string& token) {
      auto& st = self->state;
      auto w = st.workers.find(previous);
      if (previous == id || w == st.workers.end() || w->second.token != token) {
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
      auto id = f.id;
      auto owner = f.owner;
      auto previous = st.catalog.put_function(std::move(f));
      if (!previous.empty() && previous != owner)
        spdlog::warn("iii function {} re-registered by worker {} (was {}); the newest wins", id,
                     owner, previous);
    },
    [self](fn_remove_atom, const std::string& worker_id, const std::string& function_id) {
      self->state.catalog.remove_function(function_id, worker_id);
    },
    [self](type_add_atom, registry::trigger_type_entry& t) {
      auto& st = self->state;
      if (!st.workers.count(t.owner))
        return;
      auto id = t.id;
      st.catalog.put_trigger_type(std::move(t));
      // Parked bindings of this type come alive; live ones are re-sent to
      // the (possibly new) provider.
      for (auto& [tid, b] : st.triggers)
        if (b.trigger_type == id)
          deliver(self, id, b.actor);
    },
    [self](bind_atom, const std::string& worker_id, trigger_binding_args& args) {
      auto& st = self->state;
      if (!st.workers.count(worker_id))
        return;
      unbind(self, args.id); // same trigger id again: the newest binding wins
      auto id = args.id;
      auto type = args.trigger_type;
      auto b = self->spawn<caf::linked>(trigger_binding, std::move(args));
      st.triggers[id] = {b, type, worker_id};
      if (st.catalog.find_trigger_type(type))
        deliver(self, type, b);
      else
        spdlog::info("trigger {} parked: trigger type {} is not registered", id, type);
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
      if (i == st.triggers.end() || error.empty())
        return;
      // Only the provider of the binding's type is listened to.
      auto* t = st.catalog.find_trigger_type(i->second.trigger_type);
      if (!t || t->owner != worker_id)
        return;
      self->send(i->second.actor, bind_result_atom_v, std::move(error));
    },
    [self](invoke_atom, std::uint64_t tag, invocation_request& req) { on_invoke(self, tag, req); },
    [self](route_atom, iii_atom,
           const std::string& function_id) -> caf::result<bool, caf::actor, std::string> {
      auto& st = self->state;
      auto* f = st.catalog.find_function(function_id);
      auto w = f ? st.workers.find(f->owner) : st.workers.end();
      if (w == st.workers.end())
        return {false, caf::actor{},
                manager_errors::status_error(registry::status_code::not_found,
                                             "iii function " + function_id + " not found")};
      return {true, w->second.conn, function_id};
    },
  };
}

} // namespace actor_host
