#include "actors/dispatch/runtime_connection.hpp"

#include "actors/call/errors.hpp"
#include "actors/common/frame_bridge.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/dispatch/pending_request.hpp"
#include "actors/dispatch/runtime_connection_register.hpp"
#include "net/liveness.hpp"
#include "obs/metrics.hpp"
#include "registry/action_metadata.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

namespace actor_host {

namespace rpc = wire::jsonrpc;

const std::string& connection_state::who() const {
  return runtime_id.empty() ? transport->peer() : runtime_id;
}

namespace {

using connection_detail::self_ptr;
using connection_detail::on_register;
using connection_detail::reply_error;

// The connection whose message this thread handles: the shared behavior's
// handlers act on it.
self_ptr current() {
  return runtime_connection_actor::current();
}

// Enough to cover the answers still on their way when callers leave in bulk;
// beyond it the oldest ids are dropped (their frames are then logged at debug).
constexpr std::size_t max_forgotten = 4096;

void remember_forgotten(self_ptr self, std::string wire_id, bool cancel_on_trace) {
  auto& st = self->state.more();
  if (!st.forgotten.emplace(wire_id, cancel_on_trace).second)
    return;
  st.forgotten_order.push_back(std::move(wire_id));
  while (st.forgotten_order.size() > max_forgotten) {
    st.forgotten.erase(st.forgotten_order.front());
    st.forgotten_order.pop_front();
  }
}

// Fire and forget: nobody waits for the answer, so no pending_request; the
// id is remembered only to drop the answer quietly.
void send_cancel(self_ptr self, const std::string& trace) {
  auto& st = self->state;
  auto wire_id = '"' + std::to_string(st.next_id++) + '"';
  obs::global().abandoned_cancels.fetch_add(1, std::memory_order_relaxed);
  spdlog::debug("cancelling run {} on runtime {}: nobody waits for it", trace, st.who());
  st.transport->send_text(
    rpc::request("cancelAction", R"({"traceId":)" + rpc::quote(trace) + "}", wire_id));
  remember_forgotten(self, std::move(wire_id), false);
}

// A run abandoned before its trace id was known is cancelled when it shows.
void on_forgotten_state(self_ptr self, const std::string& params, std::string_view wire_id,
                        std::string_view state) {
  if (!self->state.extra)
    return;
  auto& f = self->state.extra->forgotten;
  auto i = f.find(wire_id);
  if (i == f.end() || !i->second)
    return;
  std::string trace;
  if (read_trace_id(params, state, trace)) {
    i->second = false;
    send_cancel(self, trace);
  }
}

// streamChunk is the per-chunk path: one pass over params, views into the
// frame, and only the chunk is copied (into the message).
void on_notification(self_ptr self, rpc::message& m) {
  std::string_view f[3]; // requestId, chunk, state
  if (!rpc::find_members(m.params, {"requestId", "chunk", "state"}, f)) {
    spdlog::debug("{} from {} without usable params", m.method, self->state.who());
    return;
  }
  auto* call = f[0].empty() ? nullptr : self->state.pending.find(f[0]);
  if (!call) {
    auto& extra = self->state.extra;
    if (!f[0].empty() && extra && extra->forgotten.count(f[0])) {
      if (m.method == "runActionState")
        on_forgotten_state(self, m.params, f[0], f[2]);
      return;
    }
    spdlog::debug("{} for unknown request id from {}", m.method, self->state.who());
    return;
  }
  connection_state::stream_route* route = nullptr;
  if (auto& extra = self->state.extra; extra && !extra->streams.empty())
    if (auto i = extra->streams.find(f[0]); i != extra->streams.end())
      route = &i->second;
  if (m.method == "streamChunk") {
    if (f[1].empty())
      return;
    if (!route)
      return self->send(*call, run_chunk_atom_v, std::string{f[1]});
    // One hop: straight to the caller, or with a sink to its socket. A
    // caller that has finished the call (its deadline, its own abort)
    // ignores it, as it does any late event; its sink is closed by then.
    obs::global().stream_chunks.fetch_add(1, std::memory_order_relaxed);
    auto chunk = chunk_for_caller(f[1]);
    if (route->sink)
      route->sink->chunk(std::move(chunk));
    else
      self->send(route->caller, chunk_atom_v, route->tag, std::move(chunk));
    return;
  }
  // runActionState
  std::string trace;
  if (read_trace_id(m.params, f[2], trace)) {
    // It becomes a response header and a log field: only a well-formed id.
    if (!registry::valid_trace_id(trace)) {
      spdlog::warn("runtime {} sent an invalid trace id ({} bytes); ignored", self->state.who(),
                   trace.size());
      return;
    }
    // The caller hears it from here, ahead of the chunks that follow it;
    // the pending request (held bidi input, cancels) from its own message.
    if (route && !route->traced) {
      route->traced = true;
      // Written ahead of the chunks that follow; the caller keeps it too.
      if (route->sink)
        route->sink->trace(trace);
      self->send(route->caller, trace_atom_v, route->tag, trace);
    }
    self->send(*call, run_trace_atom_v, std::move(trace));
  }
}

// Takes call `id` off `pending` (null if it is not there): its caller is
// watched for it no more.
pending_actor take_call(self_ptr self, std::string_view id) {
  auto& st = self->state;
  caf::actor_addr caller;
  auto call = st.pending.take(id, &caller);
  if (caller)
    st.callers.unwatch(self, caller);
  return call;
}

// A caller of calls here died (socket closed, HTTP client gone): nobody
// waits for their answers, so each is abandoned (pending_request.cpp:
// forgotten and cancelled on the runtime).
void on_caller_down(self_ptr self, const caf::actor_addr& gone) {
  auto& st = self->state;
  if (!st.callers.forget(gone))
    return;
  st.pending.for_each_with_extra([&](const pending_actor& call, const caf::actor_addr& caller) {
    if (caller == gone)
      self->send(call, abort_atom_v, std::uint64_t{0});
  });
}

// The call left `pending`: its chunks have nowhere to go any more.
void drop_route(self_ptr self, std::string_view wire_id) {
  if (!self->state.extra)
    return;
  auto& streams = self->state.extra->streams;
  if (!streams.empty())
    if (auto i = streams.find(wire_id); i != streams.end()) {
      if (i->second.sink && self->state.splices)
        self->state.splices->remove(wire_id);
      streams.erase(i);
    }
}

// What this connection's pending requests share (pending_request.hpp): made
// at the first call, again after the runtime id changed.
const pending_shared_ptr& shared_args(self_ptr self) {
  auto& st = self->state;
  if (!st.shared)
    st.shared = std::make_shared<const pending_shared>(
      pending_shared{st.transport, st.runtime_id, st.opts->max_bidi_input_bytes, st.opts->traces,
                     st.opts->node, st.load});
  return st.shared;
}

// Calls taken off this replica's load: a service's queue may hand one on.
void release_load(self_ptr self, std::int32_t n = 1) {
  auto& st = self->state;
  st.load->release(n);
  if (st.service_queue)
    self->send(st.service_queue, slot_atom_v);
}

void check_drained(self_ptr self) {
  auto& st = self->state;
  if (st.pending.empty() && st.extra && st.extra->drained.pending())
    st.extra->drained.deliver(caf::ok_atom_v);
}

void on_frame(self_ptr self, std::string& frame) {
  auto& st = self->state;
  rpc::message m;
  rpc::decode_error err;
  if (!rpc::decode(frame, m, err)) {
    spdlog::warn("bad frame from runtime {}: {}", st.who(), err.message);
    reply_error(self, err.id, err.code, err.message);
    return;
  }
  if (m.kind == rpc::kind::response) {
    if (!st.actions_wire_id.empty() && m.id == st.actions_wire_id) {
      st.actions_wire_id.clear();
      if (m.error.empty() && !st.runtime_id.empty())
        self->send(st.directory, idempotent_atom_v, st.runtime_id,
                   registry::idempotent_actions(m.result), connection_actor{self});
      return;
    }
    auto call = take_call(self, m.id);
    drop_route(self, m.id);
    if (!call) {
      if (st.extra)
        if (auto f = st.extra->forgotten.find(m.id); f != st.extra->forgotten.end()) {
          // The answer to a call nobody waits for: the id will not come back.
          // (Its entry in forgotten_order goes when it ages out.)
          st.extra->forgotten.erase(f);
          return;
        }
      // A runtime replaying after reconnect, or an answer older than max_forgotten.
      spdlog::debug("response for unknown request id {} from {}", m.id, st.who());
      return;
    }
    release_load(self);
    bool ok = m.error.empty();
    self->send(call, response_atom_v, ok, ok ? std::move(m.result) : std::move(m.error));
    check_drained(self);
    return;
  }
  if (m.method == "streamChunk" || m.method == "runActionState")
    return on_notification(self, m);
  if (m.method == "register")
    return on_register(self, m);
  spdlog::debug("unknown method {} from runtime {}", m.method, st.who());
  if (m.kind == rpc::kind::request)
    reply_error(self, m.id, rpc::code::method_not_found, "Method not found: " + m.method);
}

// A message over the frame cap, dropped by the socket: the call it belongs
// to fails (RESOURCE_EXHAUSTED) and the link stays for the others. Our wire
// ids are quoted decimals, found as a response's last member (Genkit writes
// `"id"` last) or first, or as a notification's `requestId`.
void on_oversized(self_ptr self, const std::string& head, const std::string& tail,
                  std::uint64_t size) {
  static const re2::RE2 response_tail{R"re("id"\s*:\s*("\d{1,20}")\s*\}\s*$)re"};
  static const re2::RE2 response_head{
    R"re(^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("\d{1,20}"))re"};
  static const re2::RE2 notification{
    R"re(^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"method"\s*:\s*)re"
    R"re("(?:streamChunk|runActionState)"\s*,\s*"params"\s*:\s*\{\s*"requestId"\s*:\s*)re"
    R"re(("\d{1,20}"))re"};
  auto& st = self->state;
  std::string id;
  auto error = [&] {
    return manager_errors::answer_too_large(st.who(), size, st.opts->max_frame_bytes);
  };
  if (re2::RE2::PartialMatch(head, notification, &id)) {
    if (auto* call = st.pending.find(id)) {
      spdlog::warn("runtime {}: a {} byte message for request {} is over max_frame_bytes; "
                   "failing that call",
                   st.who(), size, id);
      self->send(*call, oversized_atom_v, error());
      return;
    }
  } else if (re2::RE2::PartialMatch(tail, response_tail, &id)
             || re2::RE2::PartialMatch(head, response_head, &id)) {
    if (auto call = take_call(self, id)) {
      drop_route(self, id);
      spdlog::warn("runtime {}: its {} byte answer to request {} is over max_frame_bytes; "
                   "failing that call",
                   st.who(), size, id);
      release_load(self);
      self->send(call, response_atom_v, error());
      check_drained(self);
      return;
    }
    if (!id.empty() && id == st.actions_wire_id) {
      st.actions_wire_id.clear();
      return;
    }
  }
  // Nobody's: a runtime that sends what cannot be read is cut off, as before.
  spdlog::warn("closing runtime {}: a message of {} bytes over max_frame_bytes for no call of "
               "its own",
               st.who(), size);
  st.transport->close(1009, "message too big");
}

// Every connection's handlers, built once (runtime_connection.hpp): each
// acts on current(), the connection whose message this is.
connection_actor::behavior_type make_shared_behavior() {
  return {
    [](frame_atom, std::string& frame) {
      auto self = current();
      on_frame(self, frame);
      self->state.transport->frame_processed();
    },
    [](closed_atom, const std::string& reason) {
      auto self = current();
      auto& st = self->state;
      spdlog::info("runtime connection {} closed ({}), failing {} pending request(s)", st.who(),
                   reason, st.pending.size());
      auto lost = st.pending.take_all();
      if (st.extra)
        st.extra->streams.clear();
      st.callers.unwatch_all(self);
      if (st.splices)
        st.splices->clear();
      release_load(self, static_cast<std::int32_t>(lost.size()));
      for (auto& p : lost)
        self->send(p, conn_lost_atom_v, reason);
      check_drained(self);
      self->quit();
    },
    [](call_atom, call_request& req, caller_actor& caller) -> call_handle {
      auto self = current();
      auto& st = self->state;
      if (!req.counted) // not routed here by a door of this node (replica_load.hpp)
        st.load->try_reserve(0);
      auto n = st.next_id++;
      auto wire_id = quoted_wire_id(n);
      pending_args a;
      a.shared = shared_args(self);
      a.conn = self;
      a.caller = std::move(caller);
      a.tag = req.tag;
      a.wire_id = n;
      a.method = req.method;
      caf::actor_addr caller_addr;
      if (a.caller) {
        caller_addr = a.caller.address();
        st.callers.watch(self, a.caller);
      }
      a.action_key = std::move(req.key); // for the log lines about this call
      a.timeout_ms = static_cast<std::uint32_t>(
        std::min<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(req.timeout).count(),
                               std::numeric_limits<std::uint32_t>::max()));
      if (req.stream && a.caller) {
        // Spliced before the request goes out: every frame of the run finds it.
        if (req.sink && st.splices)
          st.splices->add(wire_id, req.sink);
        st.more().streams.emplace(wire_id, connection_state::stream_route{a.caller, req.tag, false,
                                                                   std::move(req.sink)});
        a.connection_relays = true;
      }
      auto p = spawn_lean<pending_request_actor, pending_actor>(self->system(), std::move(a));
      add_call(self, &connection_state::pending, n, p, req.timeout, std::move(caller_addr));
      st.transport->send_text(rpc::request(method_name(req.method), req.params, wire_id));
      return call_handle{p, 0, true}; // pending_state answers at its end
    },
    [](forget_atom, std::string& wire_id, const std::string& trace, bool cancel) {
      auto self = current();
      // Already answered (the answer crossed the forget): nothing to cancel.
      if (!take_call(self, wire_id))
        return;
      drop_route(self, wire_id);
      release_load(self);
      if (cancel && !trace.empty())
        send_cancel(self, trace);
      remember_forgotten(self, std::move(wire_id), cancel && trace.empty());
      check_drained(self);
    },
    // The earliest deadline passed: its requests time out (each tells its
    // caller and sends forget_atom back, as for any call given up).
    [](expired_atom) { expire_due_calls(current(), &connection_state::pending); },
    [](drain_atom) -> caf::result<caf::ok_atom> {
      auto self = current();
      auto& st = self->state;
      if (st.pending.empty())
        return caf::ok_atom_v;
      spdlog::info("runtime {}: waiting for {} request(s) in flight", st.who(), st.pending.size());
      auto& drained = st.more().drained;
      drained = self->make_response_promise();
      return drained;
    },
    [](cancel_atom) {
      auto self = current();
      self->state.pending.for_each([self](auto& p) { self->send(p, cancel_atom_v); });
    },
    // The node drains: the runtime is told to register elsewhere (1012,
    // service restart); closed_atom follows as for any close.
    [](stop_atom, std::uint16_t close_code) {
      auto self = current();
      self->state.transport->close(close_code, "this manager is draining; register at another");
    },
    // Liveness probe (the directory, before it hands our id to another
    // socket): true once the socket answers a WebSocket ping, no answer at
    // all otherwise (the asker keeps the deadline).
    [](probe_atom) -> caf::result<bool> {
      auto self = current();
      auto& probes = self->state.more().probes;
      probes.push_back(self->make_response_promise());
      if (probes.size() == 1)
        if (auto* p = dynamic_cast<net::pingable*>(self->state.transport.get()))
          p->ping([a = connection_actor{self}] { caf::anon_send(a, pong_atom_v, true); });
      return probes.back();
    },
    [](oversized_atom, const std::string& head, const std::string& tail, std::uint64_t size) {
      auto self = current();
      on_oversized(self, head, tail, size);
    },
    [](pong_atom, bool) {
      for (auto& rp : std::exchange(current()->state.more().probes, {}))
        rp.deliver(true);
    },
  };
}

} // namespace

connection_actor::behavior_type runtime_connection(runtime_connection_actor* self,
                                                   net::transport_ptr transport,
                                                   directory_actor directory,
                                                   connection_setup opts) {
  auto& st = self->state;
  st.transport = transport;
  st.directory = std::move(directory);
  st.opts = std::move(opts.common);
  st.splices = std::move(opts.splices);
  close_on_exit(self, std::move(transport));
  self->set_down_handler([self](caf::down_msg& dm) { on_caller_down(self, dm.source); });
  static const auto* shared = new connection_actor::behavior_type{make_shared_behavior()};
  return *shared;
}

} // namespace actor_host
