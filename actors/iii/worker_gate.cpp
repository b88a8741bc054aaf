#include "actors/iii/worker_connection_ops.hpp"

#include "actors/iii/function_registry.hpp"
#include "actors/iii/invocation.hpp"

#include "obs/metrics.hpp"
#include "registry/runtime_info.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

// The RBAC gate of an iii worker's connection (iii spec 8): the auth
// function decides who the worker is (its session), the registration hooks
// may rewrite or refuse what it registers, and the session's rules limit
// what it may register at all.

namespace actor_host::worker_ops {

namespace iii = wire::iii;
namespace rpc = wire::jsonrpc;

namespace {

/// Calls a function of the catalog for the manager itself (auth, hooks).
/// Frames read meanwhile wait: registrations are order-sensitive.
void internal_call(self_ptr self, call_kind kind, const std::string& function_id,
                   std::string data, std::string frame = {}) {
  auto& st = self->state;
  auto tag = st.next_tag++;
  st.calls[tag] = {kind, {}, function_id, std::move(frame)};
  invocation_request req;
  req.function_id = function_id;
  req.data = std::move(data);
  // The manager calls, not the worker: no RBAC check of the worker's session.
  req.timeout = st.opts.invocation_timeout;
  tell_registry(self, invoke_atom_v, caller_actor{self}, tag, std::move(req));
}

void set_member(iii::frame& f, const std::string& name, std::string raw) {
  for (auto& [k, v] : f.members.members)
    if (k == name) {
      v = std::move(raw);
      return;
    }
  f.members.members.emplace_back(name, std::move(raw));
}

/// A hook's answer replaces the registration's fields (`from` -> `to`).
/// False when the hook refused (error, or not an object).
bool apply_hook(iii::frame& f, bool ok, const std::string& result,
                std::initializer_list<std::pair<const char*, const char*>> fields) {
  if (!ok)
    return false;
  auto o = rpc::split_object(result);
  if (!o)
    return false;
  for (auto [from, to] : fields)
    if (auto* v = o->find(from); v && *v != "null")
      set_member(f, to, *v);
  return true;
}

std::string hook_input(std::initializer_list<std::pair<const char*, std::string>> fields,
                       const std::string& context) {
  std::string out = "{";
  for (auto& [k, raw] : fields)
    if (!raw.empty())
      out += rpc::quote(k) + ":" + raw + ",";
  return out + R"("context":)" + context + "}";
}

std::string quoted_or_empty(const std::string& s) {
  return s.empty() ? std::string{} : rpc::quote(s);
}

/// A registration goes to the listener's hook; the frames behind it wait
/// for the answer.
void hook_call(self_ptr self, call_kind kind, const std::string& hook, std::string input,
               std::string frame) {
  internal_call(self, kind, hook, std::move(input), std::move(frame));
  self->become(awaiting_hook(self));
}

std::string frame_text(const iii::frame& f) {
  std::string out;
  for (auto& [k, v] : f.members.members)
    out += (out.empty() ? "{" : ",") + rpc::quote(k) + ":" + v;
  return out + "}";
}

/// Authenticated (or no auth needed): the worker exists from now on.
void welcome(self_ptr self) {
  auto& st = self->state;
  registry::worker_access_ptr access;
  if (st.opts.rbac)
    access = std::make_shared<const registry::worker_access>(
      registry::worker_access{st.opts.rbac, st.session});
  tell_registry(self, worker_atom_v, st.worker_id, st.token, worker_connection_actor{self},
                st.transport,
             ip_of(st.transport->peer()), std::move(access));
  // The SDK does not wait for this frame: its registrations are already on
  // the way and are read (in order) after it.
  st.transport->send_text(iii::worker_registered(st.worker_id, st.token));
  spdlog::info("iii worker {} connected from {}", st.worker_id, st.transport->peer());
}

void on_auth_result(self_ptr self, bool ok, const std::string& raw) {
  auto& st = self->state;
  std::string why;
  if (!ok) {
    why = "the auth function failed: " + raw;
  } else if (auto session = registry::parse_auth_result(raw)) {
    st.session = std::move(*session);
    welcome(self);
    return become_ready(self);
  } else {
    why = std::move(session).error();
  }
  spdlog::warn("iii worker from {} refused: {}", st.transport->peer(), why);
  st.transport->send_text(iii::auth_error_frame("authentication failed"));
  self->quit();
}

} // namespace

void on_register_function(self_ptr self, const iii::frame& f, bool hooked) {
  auto& st = self->state;
  auto& rbac = st.opts.rbac;
  registry::worker_function fn;
  fn.id = f.text("id");
  if (fn.id.empty())
    return spdlog::warn("iii worker {}: registerfunction without an id dropped", st.worker_id);
  // Listed to every worker and caller, and written into log lines: capped
  // and checked like runtime ids.
  if (auto p = registry::peer_text_problem(fn.id, registry::max_peer_text_bytes); !p.empty()) {
    obs::global().iii_registrations_refused.fetch_add(1, std::memory_order_relaxed);
    return spdlog::warn("iii worker {}: function id {}; registration refused", st.worker_id, p);
  }
  if (f.find("invocation")) {
    // HTTP-invoked functions need the engine's http-functions worker.
    return spdlog::warn("iii worker {}: HTTP-invoked function {} is not supported; dropped",
                        st.worker_id, fn.id);
  }
  if (rbac && !st.session.allow_function_registration)
    return spdlog::info("iii worker {}: function registration not allowed; {} dropped",
                        st.worker_id, fn.id);
  fn.description = f.text("description");
  fn.metadata = raw_or_empty(f, "metadata");
  if (rbac && !rbac->on_function_registration.empty() && !hooked)
    return hook_call(self, call_kind::function_hook, rbac->on_function_registration,
                         hook_input({{"function_id", rpc::quote(fn.id)},
                                     {"description", quoted_or_empty(fn.description)},
                                     {"metadata", fn.metadata}},
                                    st.session.context),
                         frame_text(f));
  fn.id = registry::with_prefix(st.session, fn.id);
  if (rbac && registry::is_reserved_function(*rbac, fn.id)) {
    obs::global().iii_registrations_refused.fetch_add(1, std::memory_order_relaxed);
    return spdlog::warn("iii worker {}: function id {} is reserved (auth, hook, middleware or "
                        "engine::); registration refused",
                        st.worker_id, fn.id);
  }
  fn.owner = st.worker_id;
  fn.request_format = raw_or_empty(f, "request_format");
  fn.response_format = raw_or_empty(f, "response_format");
  tell_registry(self, fn_add_atom_v, std::move(fn));
}

void on_register_trigger_type(self_ptr self, const iii::frame& f, bool hooked) {
  auto& st = self->state;
  auto& rbac = st.opts.rbac;
  registry::trigger_type_entry e{f.text("id"), st.worker_id, f.text("description")};
  if (e.id.empty())
    return spdlog::warn("iii worker {}: registertriggertype without an id dropped",
                        st.worker_id);
  if (auto p = registry::peer_text_problem(e.id, registry::max_peer_text_bytes); !p.empty()) {
    obs::global().iii_registrations_refused.fetch_add(1, std::memory_order_relaxed);
    return spdlog::warn("iii worker {}: trigger type id {}; registration refused", st.worker_id,
                        p);
  }
  if (rbac && !st.session.allow_trigger_type_registration)
    return spdlog::info("iii worker {}: trigger type registration not allowed; {} dropped",
                        st.worker_id, e.id);
  if (rbac && !rbac->on_trigger_type_registration.empty() && !hooked)
    return hook_call(self, call_kind::trigger_type_hook, rbac->on_trigger_type_registration,
                         hook_input({{"trigger_type_id", rpc::quote(e.id)},
                                     {"description", quoted_or_empty(e.description)}},
                                    st.session.context),
                         frame_text(f));
  tell_registry(self, type_add_atom_v, std::move(e));
}

void on_register_trigger(self_ptr self, const iii::frame& f, bool hooked) {
  auto& st = self->state;
  auto& rbac = st.opts.rbac;
  trigger_binding_args a;
  a.id = f.text("id");
  a.trigger_type = f.text("trigger_type");
  a.function_id = f.text("function_id");
  if (a.id.empty() || a.trigger_type.empty() || a.function_id.empty())
    return spdlog::warn("iii worker {}: registertrigger without id/trigger_type/function_id "
                        "dropped",
                        st.worker_id);
  auto* config = f.find("config");
  a.config = config ? *config : std::string{"null"};
  a.metadata = raw_or_empty(f, "metadata");
  if (rbac) {
    auto& allowed = st.session.allowed_trigger_types;
    if (allowed && std::find(allowed->begin(), allowed->end(), a.trigger_type) == allowed->end())
      return spdlog::info("iii worker {}: trigger type {} not allowed; trigger {} dropped",
                          st.worker_id, a.trigger_type, a.id);
    if (!rbac->on_trigger_registration.empty() && !hooked)
      return hook_call(self, call_kind::trigger_hook, rbac->on_trigger_registration,
                           hook_input({{"trigger_id", rpc::quote(a.id)},
                                       {"trigger_type", rpc::quote(a.trigger_type)},
                                       {"function_id", rpc::quote(a.function_id)},
                                       {"config", a.config}},
                                      st.session.context),
                           frame_text(f));
  }
  a.function_id = registry::with_prefix(st.session, a.function_id);
  a.binder = st.transport;
  tell_registry(self, bind_atom_v, st.worker_id, std::move(a));
}

namespace {

void on_hook_result(self_ptr self, const worker_connection_state::call& c, bool ok,
                    const std::string& raw) {
  auto& st = self->state;
  auto decoded = iii::decode(c.frame);
  if (!decoded)
    return;
  auto& f = *decoded;
  bool accepted = false;
  switch (c.kind) {
    case call_kind::function_hook:
      accepted = apply_hook(f, ok, raw,
                            {{"function_id", "id"}, {"description", "description"},
                             {"metadata", "metadata"}});
      if (accepted)
        on_register_function(self, f, true);
      break;
    case call_kind::trigger_type_hook:
      accepted = apply_hook(f, ok, raw,
                            {{"trigger_type_id", "id"}, {"description", "description"}});
      if (accepted)
        on_register_trigger_type(self, f, true);
      break;
    default:
      accepted = apply_hook(f, ok, raw,
                            {{"trigger_id", "id"}, {"trigger_type", "trigger_type"},
                             {"function_id", "function_id"}, {"config", "config"}});
      if (accepted)
        on_register_trigger(self, f, true);
      break;
  }
  if (!accepted)
    spdlog::info("iii worker {}: registration hook {} refused {} {}", st.worker_id,
                 c.function_id, f.type, f.text("id"));
}


} // namespace

behavior open_gate(self_ptr self) {
  auto& st = self->state;
  if (!st.opts.rbac || st.opts.rbac->auth_function.empty()) {
    welcome(self);
    return ready(self);
  }
  // Frames the SDK sends meanwhile are held until the session exists.
  auto& up = st.transport->upgrade();
  auto input = R"({"headers":)" + iii::headers_json(up.headers) + R"(,"query_params":)"
               + iii::query_params_json(up.target) + R"(,"ip_address":)"
               + rpc::quote(ip_of(st.transport->peer())) + "}";
  internal_call(self, call_kind::auth, st.opts.rbac->auth_function, std::move(input));
  return authenticating(self);
}

void on_gate_answer(self_ptr self, const worker_connection_state::call& c, bool ok,
                    const std::string& raw) {
  if (c.kind == call_kind::auth)
    return on_auth_result(self, ok, raw);
  on_hook_result(self, c, ok, raw);
  become_ready(self);
}

} // namespace actor_host::worker_ops
