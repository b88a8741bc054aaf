#include "actors/iii/worker_connection.hpp"

#include "actors/iii/worker_connection_ops.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/iii/function_registry.hpp"
#include "actors/iii/invocation.hpp"
#include "obs/metrics.hpp"
#include "wire/iii_protocol.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace actor_host {

namespace iii = wire::iii;
namespace rpc = wire::jsonrpc;

namespace worker_ops {

std::string ip_of(const std::string& peer) {
  auto colon = peer.rfind(':');
  auto ip = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (ip.size() > 2 && ip.front() == '[' && ip.back() == ']')
    ip = ip.substr(1, ip.size() - 2);
  return ip;
}

std::string raw_or_empty(const iii::frame& f, std::string_view name) {
  auto* raw = f.find(name);
  return raw && *raw != "null" ? *raw : std::string{};
}

} // namespace worker_ops

namespace {

using namespace worker_ops;

void answer(self_ptr self, const std::string& invocation_id, const std::string& function_id,
            bool ok, const std::string& raw) {
  if (invocation_id.empty())
    return; // void call: nobody waits
  self->state.transport->send_text(iii::invocation_result(invocation_id, function_id, ok, raw));
}

/// The answer to one of this worker's own calls (a function of another
/// worker, a Genkit action, the gate's auth and hook calls).
/// This door's wire shape of an error is the error object, in iii's shape.
void on_call_done(self_ptr self, std::uint64_t tag, const call_end& end) {
  auto ok = end.ok;
  auto& raw = end.text();
  auto& st = self->state;
  auto i = st.calls.find(tag);
  if (i == st.calls.end())
    return; // a void call
  auto c = std::move(i->second);
  st.calls.erase(i);
  switch (c.kind) {
    case call_kind::worker:
      return answer(self, c.invocation_id, c.function_id, ok, raw);
    case call_kind::genkit:
      return answer(self, c.invocation_id, c.function_id, ok,
                    ok ? iii::genkit_result_to_iii(raw) : iii::genkit_error_to_iii(raw));
    default: // auth, hooks
      return on_gate_answer(self, c, ok, raw);
  }
}

/// A call of a Genkit action (`genkit::<runtimeId>::<key>`): a runAction
/// through the runtime directory, answered in iii shapes.
void call_genkit(self_ptr self, const std::string& invocation_id, const std::string& function_id,
                 const std::string& data) {
  auto& st = self->state;
  auto target = iii::parse_genkit_function_id(function_id);
  if (!target)
    return answer(self, invocation_id, function_id, false,
                  iii::error_object(iii::code::function_not_found,
                                    "Function " + function_id + " not found: " + target.error()));
  auto& [runtime_id, key] = *target;
  auto tag = st.next_tag++;
  if (!invocation_id.empty())
    st.calls[tag] = {call_kind::genkit, invocation_id, function_id, {}};
  call_request req;
  req.tag = tag;
  req.runtime_id = std::move(runtime_id);
  req.params = R"({"key":)" + rpc::quote(key) + R"(,"input":)" + data + "}";
  req.key = std::move(key);
  req.timeout = st.opts.invocation_timeout;
  // The run's events come as messages; an early end (no route) is answered
  // here like its final answer.
  // This worker takes a caller's events like the other callers do
  // (common_handlers), so it may stand in as a caller_actor.
  start_call(
    self, st.door, std::move(req), caf::actor_cast<caller_actor>(self), [](call_handle) {},
    [self, tag](call_end end) { on_call_done(self, tag, end); });
}

/// Spec 8.3: the listener's middleware gets the call instead,
/// `{function_id, payload, action, context}` plus the call's metadata; its
/// answer is the call's answer (under the called function's id). A void call
/// stays void: the middleware runs, nobody is answered.
void call_middleware(self_ptr self, const std::string& invocation_id,
                     const std::string& function_id, const std::string& payload,
                     const std::string& action, std::string metadata) {
  auto& st = self->state;
  invocation_request req;
  req.function_id = st.opts.rbac->middleware;
  req.data = R"({"function_id":)" + rpc::quote(function_id) + R"(,"payload":)" + payload
             + R"(,"action":)" + action + R"(,"context":)" + st.session.context + "}";
  req.metadata = std::move(metadata);
  // The engine calls its listener's middleware: no RBAC check of the session.
  req.wants_reply = !invocation_id.empty();
  req.timeout = st.opts.invocation_timeout;
  auto tag = st.next_tag++;
  if (req.wants_reply)
    st.calls[tag] = {call_kind::worker, invocation_id, function_id, {}};
  spdlog::debug("iii worker {}: call of {} goes to the middleware {}", st.worker_id, function_id,
                req.function_id);
  tell_registry(self, invoke_atom_v, caller_actor{self}, tag, std::move(req));
}

void on_invoke_function(self_ptr self, const iii::frame& f) {
  auto& st = self->state;
  auto invocation_id = f.text("invocation_id");
  auto function_id = f.text("function_id");
  std::string action_type;
  auto* action = f.find("action");
  if (action) {
    if (auto a = rpc::split_object(*action))
      if (auto* t = a->find("type"))
        rpc::string_value(*t, action_type);
  }
  // Void calls get no answer, not even an error.
  if (action_type == "void")
    invocation_id.clear();
  if (function_id.empty())
    return answer(self, invocation_id, function_id, false,
                  iii::error_object(iii::code::function_not_found, "Function  not found"));
  auto& rbac = st.opts.rbac;
  if (rbac) {
    auto d = registry::check_invoke(*rbac, st.session, function_id);
    // Metadata filters need the function's metadata, which the registry has:
    // a plain call that only they could allow is decided there.
    bool registry_decides = d == registry::invoke_decision::not_exposed
                            && registry::has_metadata_filters(*rbac) && rbac->middleware.empty()
                            && !function_id.starts_with(iii::genkit_prefix);
    if (d != registry::invoke_decision::allow && !registry_decides) {
      spdlog::info("iii worker {}: call of {} denied", st.worker_id, function_id);
      obs::global().record_invocation(iii::code::forbidden, {});
      return answer(self, invocation_id, function_id, false,
                    iii::error_object(iii::code::forbidden,
                                      registry::forbidden_message(d, function_id)));
    }
  }
  // The engine treats a missing payload as null (the SDK omits `undefined`).
  auto* data = f.find("data");
  std::string payload = data ? *data : std::string{"null"};
  if (rbac && !rbac->middleware.empty() && !function_id.starts_with("engine::"))
    return call_middleware(self, invocation_id, function_id, payload,
                           action ? *action : std::string{"null"}, raw_or_empty(f, "metadata"));
  if (action_type == "enqueue")
    return answer(self, invocation_id, function_id, false,
                  iii::error_object("enqueue_error", "No queue provider is installed"));
  if (function_id.starts_with(iii::genkit_prefix))
    return call_genkit(self, invocation_id, function_id, payload);
  invocation_request req;
  req.function_id = function_id;
  req.data = iii::with_caller_worker_id(payload, st.worker_id);
  req.metadata = raw_or_empty(f, "metadata");
  req.traceparent = f.text("traceparent");
  req.baggage = f.text("baggage");
  req.caller_worker_id = st.worker_id;
  req.wants_reply = !invocation_id.empty();
  req.timeout = st.opts.invocation_timeout;
  auto tag = st.next_tag++;
  if (req.wants_reply)
    st.calls[tag] = {call_kind::worker, invocation_id, function_id, {}};
  tell_registry(self, invoke_atom_v, caller_actor{self}, tag, std::move(req));
}

void on_invocation_result(self_ptr self, const iii::frame& f) {
  auto& st = self->state;
  auto id = f.text("invocation_id");
  auto inv = st.executing.take(id);
  if (!inv) {
    // A late answer (timed out, or the caller left), or one for an
    // invocation sent to another connection: dropped.
    spdlog::debug("iii worker {}: invocationresult for unknown id {} dropped", st.worker_id, id);
    return;
  }
  if (auto* error = f.find("error"); error && *error != "null")
    self->send(inv, response_atom_v, false, *error);
  else
    self->send(inv, response_atom_v, true, raw_or_empty(f, "result"));
}

/// A frame that is not valid JSON (`NaN`, `tru` in a member) but whose
/// structure splits: a call gets an error answer, a result fails its
/// invocation; neither is relayed.
void refuse_invalid(self_ptr self, const std::string& text, const std::string& reason) {
  auto& st = self->state;
  auto m = rpc::split_object(text);
  if (!m)
    return;
  std::string type, id;
  auto read = [&](std::string_view name, std::string& out) {
    if (auto* raw = m->find(name))
      rpc::string_value(*raw, out);
  };
  read("type", type);
  read("invocation_id", id);
  if (id.empty())
    return;
  auto message = "the " + type + " frame is not valid JSON (" + reason + "); not relayed";
  if (type == "invokefunction") {
    std::string function_id;
    read("function_id", function_id);
    return answer(self, id, function_id, false,
                  iii::error_object(iii::code::invalid_arguments, message));
  }
  if (type == "invocationresult") {
    if (auto inv = st.executing.take(id))
      self->send(inv, response_atom_v, false,
                 iii::error_object(iii::code::invocation_failed, message));
  }
}

void dispatch(self_ptr self, const std::string& text) {
  auto& st = self->state;
  auto decoded = iii::decode(text);
  if (!decoded) {
    // As the engine does: undecodable frames are logged and dropped; one
    // whose ids can still be read is answered, so nobody waits for it.
    spdlog::warn("iii worker {}: bad frame dropped: {}", st.worker_id, decoded.error());
    obs::global().iii_invalid_frames.fetch_add(1, std::memory_order_relaxed);
    return refuse_invalid(self, text, decoded.error());
  }
  auto& f = *decoded;
  auto& t = f.type;
  if (t == "invokefunction")
    return on_invoke_function(self, f);
  if (t == "invocationresult")
    return on_invocation_result(self, f);
  if (t == "registerfunction")
    return on_register_function(self, f);
  if (t == "unregisterfunction")
    return tell_registry(self, fn_remove_atom_v, st.worker_id,
                         registry::with_prefix(st.session, f.text("id")));
  if (t == "registertriggertype")
    return on_register_trigger_type(self, f);
  if (t == "registertrigger")
    return on_register_trigger(self, f);
  if (t == "unregistertrigger")
    return tell_registry(self, unbind_atom_v, st.worker_id, f.text("id"));
  if (t == "triggerregistrationresult")
    // Successes too: engine::register_trigger waits for them.
    return tell_registry(self, bind_result_atom_v, st.worker_id, f.text("id"),
                         raw_or_empty(f, "error"));
  if (t == "reattach")
    return tell_registry(self, reattach_atom_v, st.worker_id, f.text("previous_worker_id"),
                         f.text("reattach_token"));
  if (t == "ping")
    return st.transport->send_text(R"({"type":"pong"})");
  if (t == "pong" || t == "registerservice")
    return;
  // e.g. unregistertriggertype, which engine v0.22.1 cannot decode either.
  spdlog::debug("iii worker {}: unhandled message type {} dropped", st.worker_id, t);
}

/// Runs a call here: the frame goes out after the invocation is known, so
/// its answer always finds it.
invocation_actor start_invocation(self_ptr self, caller_actor caller, std::uint64_t tag,
                            invocation_request req) {
  auto& st = self->state;
  invocation_args a;
  a.conn = self;
  a.transport = st.transport;
  a.caller = std::move(caller);
  a.tag = tag;
  a.invocation_id = iii::new_uuid();
  a.worker_id = st.worker_id;
  // The worker registered the id without the session's prefix.
  auto frame = iii::invoke_function(a.invocation_id,
                                    registry::without_prefix(st.session, req.function_id),
                                    req.data, req.metadata, req.traceparent, req.baggage);
  a.req = std::move(req);
  auto id = a.invocation_id;
  auto timeout = a.req.timeout;
  auto inv = self->spawn(invocation, std::move(a));
  add_call(self, &worker_connection_state::executing, std::move(id), inv, timeout);
  st.transport->send_text(std::move(frame));
  return inv;
}

/// A phase of the gate: `on_frame` decides what a frame read now does and
/// `on_flush` what a held one does; the rest (the socket's end, calls to run
/// here, answers to this worker's calls) every phase handles alike.
template <class OnFrame, class OnFlush>
behavior phase(self_ptr self, OnFrame on_frame, OnFlush on_flush) {
  return {
    std::move(on_frame),
    std::move(on_flush),
    [self](closed_atom, const std::string& reason) {
      auto& st = self->state;
      spdlog::info("iii worker {} closed ({}), stopping {} invocation(s)", st.worker_id, reason,
                   st.executing.size());
      for (auto& inv : st.executing.take_all())
        self->send(inv, conn_lost_atom_v, reason);
      self->quit();
    },
    [self](replaced_atom) {
      // Retired by a reattach: the peer is gone, its socket only half-open,
      // so no close handshake; its invocations stop.
      auto& st = self->state;
      spdlog::info("iii worker {} retired (reattached elsewhere), stopping {} invocation(s)",
                   st.worker_id, st.executing.size());
      for (auto& inv : st.executing.take_all())
        self->send(inv, conn_lost_atom_v, std::string{"replaced by a reattached connection"});
      st.transport->drop();
      self->quit();
    },
    [self](execute_atom, caller_actor& caller, std::uint64_t tag, invocation_request& req) {
      start_invocation(self, std::move(caller), tag, std::move(req));
    },
    [self](call_atom, call_request& c, caller_actor& caller) -> caf::result<call_handle> {
      // A front-door runAction of `/iii/<function_id>`: Genkit shapes back.
      if (c.method != call_method::run_action || !c.key.starts_with(iii::iii_key_prefix))
        return caf::make_error(caf::sec::unexpected_message);
      invocation_request req;
      req.function_id = c.key.substr(iii::iii_key_prefix.size());
      // The door checked the params; only the two members iii needs are read.
      std::string_view m[2]; // input, context
      rpc::find_members(c.params, {"input", "context"}, m);
      if (!m[0].empty())
        req.data = std::string{m[0]};
      // Genkit's context is what iii calls metadata: both are the caller's
      // side data next to the input.
      if (!m[1].empty() && m[1] != "null")
        req.metadata = std::string{m[1]};
      req.format = reply_format::genkit;
      req.timeout = c.timeout.count() > 0 ? c.timeout : self->state.opts.invocation_timeout;
      return call_handle{start_invocation(self, std::move(caller), c.tag, std::move(req)), 0};
    },
    [self](forget_inv_atom, const std::string& id) { self->state.executing.take(id); },
    // The earliest invocation deadline passed (call_table.hpp: why the
    // connection, not each invocation, holds the timer).
    [self](expired_atom) { expire_due_calls(self, &worker_connection_state::executing); },
    [self](done_atom, std::uint64_t tag, const call_end& end) { on_call_done(self, tag, end); },
    // Events of Genkit runs this worker started: a worker gets only the
    // final answer (iii has no stream of partial results).
    [](trace_atom, std::uint64_t, const std::string&) {},
    [](chunk_atom, std::uint64_t, const std::string&) {},
  };
}

/// Frames wait, in order; each still counts against the socket's read
/// window, so a worker cannot pile them up while it waits.
behavior holding_frames(self_ptr self) {
  return phase(
    self, [self](frame_atom, std::string& frame) { self->state.held.push_back(std::move(frame)); },
    [](flush_atom) {}); // the gate closed again: held frames wait for the next ready
}

/// One frame, read now or held: handled, then off the read window.
void handle_frame(self_ptr self, const std::string& frame) {
  dispatch(self, frame);
  self->state.transport->frame_processed(); // read window (frame_bridge.hpp)
}

} // namespace

namespace worker_ops {

behavior authenticating(self_ptr self) {
  return holding_frames(self);
}

behavior awaiting_hook(self_ptr self) {
  return holding_frames(self);
}

behavior ready(self_ptr self) {
  return phase(
    self,
    [self](frame_atom, std::string& frame) {
      auto& held = self->state.held;
      if (held.empty())
        handle_frame(self, frame);
      else
        held.push_back(std::move(frame)); // behind the held ones
    },
    [self](flush_atom) {
      // One held frame per message: handling it may close the gate again
      // (a hook call), and then the rest waits in that behavior.
      auto& held = self->state.held;
      if (held.empty())
        return;
      auto frame = std::move(held.front());
      held.pop_front();
      if (!held.empty())
        self->send(self, flush_atom_v);
      handle_frame(self, frame);
    });
}

void become_ready(self_ptr self) {
  self->become(ready(self));
  if (!self->state.held.empty())
    self->send(self, flush_atom_v);
}

} // namespace worker_ops

worker_connection_actor::behavior_type worker_connection(worker_ops::self_ptr self,
                                                         net::transport_ptr transport,
                                                         function_registry_actor registry,
                                                         front_door door,
                                                         worker_options opts) {
  auto& st = self->state;
  st.transport = transport;
  st.registry = std::move(registry);
  st.door = std::move(door);
  st.opts = opts;
  st.worker_id = iii::new_uuid();
  st.token = iii::new_uuid();
  close_on_exit(self, std::move(transport));
  return open_gate(self);
}

} // namespace actor_host
