#include "actors/cluster/gateway.hpp"

#include "actors/call/errors.hpp"
#include "actors/common/io_scheduler.hpp"
#include "actors/cluster/gateway_state.hpp"
#include "wire/iii_protocol.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace actor_host {

namespace gateway_detail {

// CAF 0.17's BASP can deliver the news that a remote actor ended before the
// last messages it sent: a gateway that ended without a lost link (its node
// shutting down) gets this long for the answers still on the way.
constexpr auto last_words_grace = std::chrono::seconds(2);

// A batch for one gateway goes out when this one's mailbox runs dry, or at
// once past this many bytes.
constexpr std::size_t max_batch_bytes = 256 * 1024;

void watch(self_ptr self, const gateway_actor& a) {
  if (self->state.watched.insert(a.address()).second)
    self->monitor(a);
}

caf::actor_addr sender_addr(self_ptr self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender());
}

// --- batching -------------------------------------------------------------

void flush(self_ptr self, outbox& box) {
  if (!box.requests.empty())
    self->send(box.to, gw_requests_atom_v, std::move(box.requests));
  if (!box.events.empty())
    self->send(box.to, gw_events_atom_v, std::move(box.events));
  box.requests.clear();
  box.events.clear();
  box.bytes = 0;
}

// Everything for one gateway that arrives while this one works through its
// mailbox goes in one message: under load a call costs a fraction of a BASP
// message each way; alone, one local message more (the flush). Called from a
// socket's read handler (a front door's caller woken by its request), the
// flush also waits for the other sockets' reads the same poll made ready:
// at 64 callers with one call each, every request was a BASP message of its
// own, two reads each on the other node's middleman.
void schedule_flush(self_ptr self) {
  auto& st = self->state;
  if (st.flush_due)
    return;
  st.flush_due = true;
  auto me = caf::actor_cast<caf::actor>(self);
  if (!post_behind_ready_reads(self->system(), [me] { caf::anon_send(me, flush_atom_v); }))
    self->send(self, flush_atom_v);
}

outbox& box_for(self_ptr self, const gateway_actor& to, std::size_t bytes) {
  auto& st = self->state;
  auto i = std::find_if(st.outboxes.begin(), st.outboxes.end(),
                        [&](const outbox& b) { return b.to == to; });
  if (i == st.outboxes.end()) {
    st.outboxes.push_back(outbox{to, {}, {}, 0});
    i = std::prev(st.outboxes.end());
  }
  if (i->bytes + bytes > max_batch_bytes)
    flush(self, *i);
  i->bytes += bytes;
  schedule_flush(self);
  return *i;
}

void post(self_ptr self, const gateway_actor& to, gw_request r) {
  auto& box = box_for(self, to, r.text.size() + r.req.params.size() + r.inv.data.size() + 64);
  box.requests.push_back(std::move(r));
}

void post(self_ptr self, const gateway_actor& to, gw_event e) {
  auto bytes = e.text.size() + e.error.message.size() + e.error.object.size() + 24;
  auto& box = box_for(self, to, bytes);
  box.events.push_back(std::move(e));
}

// --- entry side -----------------------------------------------------------

void count_out(std::int64_t delta) {
  obs::global().remote_calls_outbound.fetch_add(delta, std::memory_order_relaxed);
}

/// The front doors' calls among them (actor_host_remote_calls_in_flight).
void count_door_call(std::int64_t delta) {
  obs::global().remote_calls_in_flight.fetch_add(delta, std::memory_order_relaxed);
}

// A front door's caller is monitored once however many calls it has made
// through this gateway: an /api/ws session or a gRPC hub lives long and
// makes many, and CAF 0.17 scans an actor's monitors on every demonitor.

void watch_caller(self_ptr self, outbound& o) {
  if (!o.to)
    return;
  self->state.callers.watch(self, o.to);
  o.watched = true;
}

void unwatch_caller(self_ptr self, outbound& o) {
  if (!std::exchange(o.watched, false))
    return;
  self->state.callers.unwatch(self, o.to.address());
}

void forget_out(self_ptr self, std::unordered_map<std::uint64_t, outbound>::iterator i) {
  auto& o = i->second;
  obs::global().remote_call_latency.observe(clock_type::now() - o.started);
  unwatch_caller(self, o);
  // Once taken, the call is off the owner's replica here when it ends.
  if (auto load = std::exchange(o.load, nullptr))
    load->release();
  if (!o.iii)
    count_door_call(-1);
  self->state.out.erase(i);
  count_out(-1);
}

call_error failure_for(const outbound& o, bool node_lost, const std::string& why) {
  if (o.iii)
    return manager_errors::iii_error(wire::iii::code::invocation_failed,
                                     "Function " + o.target + " on node " + o.node
                                       + " is unreachable: " + why);
  return node_lost ? manager_errors::node_lost(o.target, o.node, o.method, why)
                   : manager_errors::connection_closed(o.target, o.method);
}

void fail(self_ptr self, std::unordered_map<std::uint64_t, outbound>::iterator i, bool node_lost,
          const std::string& why) {
  auto& o = i->second;
  if (node_lost)
    obs::global().remote_calls_lost.fetch_add(1, std::memory_order_relaxed);
  if (o.to)
    self->send(o.to, done_atom_v, o.tag, failed(failure_for(o, node_lost, why)));
  forget_out(self, i);
}

const std::string no_link = "no link to the node";

/// Counts a call made here and finds the owner's gateway for it: then the
/// call is in `out` under `id`; else null, and the call's error is in
/// `*error`.
outbound* start_out(self_ptr self, std::uint64_t id, outbound o, call_error* error) {
  obs::global().remote_calls.fetch_add(1, std::memory_order_relaxed);
  auto p = self->state.peers.find(o.node);
  if (p == self->state.peers.end()) {
    obs::global().remote_calls_lost.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("{} of {} on node {} failed: {}", o.method, o.target, o.node, no_link);
    *error = failure_for(o, true, no_link);
    return nullptr;
  }
  o.peer = p->second;
  count_out(1);
  return &self->state.out.insert_or_assign(id, std::move(o)).first->second;
}

/// The caller of calls made here died without a word: their runs are
/// abandoned at their owners, as its abort would have them.
void caller_down(self_ptr self, const caf::actor_addr& gone) {
  auto& st = self->state;
  st.callers.forget(gone);
  for (auto i = st.out.begin(); i != st.out.end();) {
    auto next = std::next(i);
    if (i->second.watched && i->second.to.address() == gone) {
      post(self, i->second.peer, gw_request{gw_request::abort, i->first, {}, {}, {}, {}});
      forget_out(self, i);
    }
    i = next;
  }
}

/// Events of calls made here, from the gateway `from` (a node speaks only
/// for the calls it runs).
void on_events(self_ptr self, const caf::actor_addr& from, std::vector<gw_event>& events) {
  auto& out = self->state.out;
  for (auto& e : events) {
    auto i = out.find(e.id);
    if (i == out.end() || i->second.peer.address() != from)
      continue;
    auto& o = i->second;
    switch (e.kind) {
      case gw_event::trace:
        if (o.to)
          self->send(o.to, trace_atom_v, o.tag, std::move(e.text));
        break;
      case gw_event::chunk:
        if (o.to)
          self->send(o.to, chunk_atom_v, o.tag, std::move(e.text));
        break;
      case gw_event::done_ok:
        if (o.to)
          self->send(o.to, done_atom_v, o.tag, succeeded(std::move(e.text)));
        forget_out(self, i);
        break;
      default:
        // The owner's error, as it made or classified it; checked as any
        // peer's value before a door shapes it.
        sanitize(e.error);
        if (o.to)
          self->send(o.to, done_atom_v, o.tag, failed(std::move(e.error)));
        forget_out(self, i);
    }
  }
}

// --- failures ---------------------------------------------------------------

gateway_state::~gateway_state() {
  // This node shuts down: the front doors' calls made here fail as a local
  // connection's calls do when it closes (their callers do not watch the
  // gateway), and are off their replicas' loads.
  for (auto& [id, o] : out) {
    if (o.iii)
      continue;
    if (o.to)
      caf::anon_send(o.to, done_atom_v, o.tag,
                     failed(manager_errors::connection_closed(o.target, o.method)));
    if (o.load)
      o.load->release();
    count_door_call(-1);
  }
  obs::global().remote_calls_outbound.fetch_sub(static_cast<std::int64_t>(out.size()),
                                                std::memory_order_relaxed);
  obs::global().remote_calls_inbound.fetch_sub(static_cast<std::int64_t>(in.size()),
                                               std::memory_order_relaxed);
}

void peer_down(self_ptr self, const caf::actor_addr& gone, const caf::error& reason) {
  iii_peer_down(self, gone, reason == caf::exit_reason::remote_link_unreachable);
  auto& st = self->state;
  st.watched.erase(gone);
  std::erase_if(st.peers, [&](auto& kv) { return kv.second.address() == gone; });
  std::erase_if(st.outboxes, [&](const outbox& b) { return b.to.address() == gone; });
  // The calls the lost node made here: abandoned, which cancels their runs.
  std::size_t dropped = 0;
  for (auto i = st.in.begin(); i != st.in.end();) {
    auto next = std::next(i);
    if (i->second.origin.address() == gone) {
      if (i->second.pending)
        i->second.pending.send_abort(self);
      forget_in(self, i);
      ++dropped;
    }
    i = next;
  }
  // The calls made here that it ran.
  bool node_lost = reason == caf::exit_reason::remote_link_unreachable;
  std::string why = node_lost ? "its connection closed, or it sent no heartbeat within the timeout"
                              : caf::to_string(reason);
  std::size_t failed = 0;
  std::size_t waiting = 0;
  for (auto i = st.out.begin(); i != st.out.end();) {
    auto next = std::next(i);
    if (i->second.peer.address() == gone) {
      if (node_lost) {
        fail(self, i, true, why);
        ++failed;
      } else if (!i->second.orphaned) {
        i->second.orphaned = true;
        ++waiting;
      }
    }
    i = next;
  }
  if (waiting > 0)
    self->delayed_send(self, last_words_grace, expired_atom_v, gone);
  if (failed + dropped + waiting > 0)
    spdlog::warn("cluster: a node's gateway is gone ({}): {} call(s) made here failed{}, {} it "
                 "made here abandoned",
                 why, failed, waiting > 0 ? " or wait for their answers a moment" : "", dropped);
}

gateway_actor::behavior_type cluster_gateway(self_ptr self) {
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.callers.contains(dm.source))
      caller_down(self, dm.source);
    else if (st.watched.contains(dm.source))
      peer_down(self, dm.source, dm.reason);
    // Else a caller's, demonitored after it died: its calls had ended.
  });
  return {
    [self](gateway_atom, const std::string& node, caf::actor& peer) {
      auto& st = self->state;
      if (!peer) {
        st.peers.erase(node);
        return;
      }
      auto gw = caf::actor_cast<gateway_actor>(std::move(peer));
      watch(self, gw);
      st.peers[node] = std::move(gw);
    },
    [self](flush_atom) {
      self->state.flush_due = false;
      for (auto& box : self->state.outboxes)
        flush(self, box);
      flush_iii(self);
    },
    // Entry side: a front door's call, its input and its end. The events
    // go straight to the caller; this gateway is the caller's handle.
    [self](call_atom, std::string& node, std::string& target, caf::actor& conn,
           replica_load_ptr& load, call_request& req,
           caller_actor& caller) -> caf::result<call_handle> {
      auto& st = self->state;
      auto id = st.next_call++;
      auto handle = call_handle{caf::actor_cast<call_actor>(self), id};
      outbound o;
      o.to = caller;
      o.tag = req.tag;
      o.node = std::move(node);
      o.target = std::move(target);
      o.method = std::string{method_name(req.method)};
      call_error error;
      auto* out = start_out(self, id, std::move(o), &error);
      if (!out) {
        // Taken, then failed UNAVAILABLE as a call its node lost: a retry
        // relay routes it once more (past this replica). The answer goes
        // out before the end, so the caller knows the call it ends.
        if (load)
          load->release();
        auto answer = self->make_response_promise<call_handle>();
        answer.deliver(handle);
        if (caller)
          self->send(caller, done_atom_v, req.tag, failed(std::move(error)));
        return answer;
      }
      out->load = std::move(load);
      count_door_call(1);
      watch_caller(self, *out);
      post(self, out->peer,
           gw_request{gw_request::call, id, out->target, std::move(conn), std::move(req), {}});
      return handle;
    },
    [self](input_atom, std::uint64_t id, std::string& raw) {
      if (auto i = self->state.out.find(id); i != self->state.out.end())
        post(self, i->second.peer, gw_request{gw_request::input, id, std::move(raw), {}, {}, {}});
    },
    [self](end_input_atom, std::uint64_t id) {
      if (auto i = self->state.out.find(id); i != self->state.out.end())
        post(self, i->second.peer, gw_request{gw_request::end_input, id, {}, {}, {}, {}});
    },
    [self](abort_atom, std::uint64_t id) {
      if (auto i = self->state.out.find(id); i != self->state.out.end()) {
        post(self, i->second.peer, gw_request{gw_request::abort, id, {}, {}, {}, {}});
        forget_out(self, i);
      }
    },
    // Entry side: an iii invocation of another node's function.
    [self](execute_atom, std::string& node, caf::actor& conn, caller_actor& caller,
           std::uint64_t tag, invocation_request& req) {
      auto& st = self->state;
      bool reply = req.wants_reply && caller;
      auto id = reply ? st.next_invocation++ : 0;
      outbound o{{}, reply ? caller : caller_actor{}, tag, std::move(node), req.function_id,
                 "invoke", true};
      if (!reply) {
        // Fire and forget: nothing to wait for here.
        obs::global().remote_calls.fetch_add(1, std::memory_order_relaxed);
        if (auto p = st.peers.find(o.node); p != st.peers.end())
          post(self, p->second,
               gw_request{gw_request::exec, 0, {}, std::move(conn), {}, std::move(req)});
        return;
      }
      call_error error;
      auto to = o.to;
      if (auto* out = start_out(self, id, std::move(o), &error))
        post(self, out->peer,
             gw_request{gw_request::exec, id, {}, std::move(conn), {}, std::move(req)});
      else
        self->send(to, done_atom_v, tag, failed(std::move(error)));
    },
    [self](expired_atom, const caf::actor_addr& gone) {
      // A gateway that ended without a lost link, and no answer in the grace.
      auto& out = self->state.out;
      for (auto i = out.begin(); i != out.end();) {
        auto next = std::next(i);
        if (i->second.orphaned && i->second.peer.address() == gone)
          fail(self, i, false, "its node shut down");
        i = next;
      }
    },
    // Between gateways.
    [self](gw_requests_atom, std::vector<gw_request>& requests) {
      auto origin = caf::actor_cast<gateway_actor>(self->current_sender());
      if (origin)
        on_requests(self, origin, requests);
    },
    [self](gw_events_atom, std::vector<gw_event>& events) {
      on_events(self, sender_addr(self), events);
    },
    // Owner side: the events of calls other nodes made, from their pending
    // requests (or iii invocations), with the local tag.
    [self](trace_atom, std::uint64_t tag, std::string& trace) {
      answer(self, tag, gw_event{gw_event::trace, 0, std::move(trace), {}});
    },
    [self](chunk_atom, std::uint64_t tag, std::string& raw) {
      answer(self, tag, gw_event{gw_event::chunk, 0, std::move(raw), {}});
    },
    [self](done_atom, std::uint64_t tag, call_end& end) {
      answer(self, tag, end.ok ? gw_event{gw_event::done_ok, 0, std::move(end.result), {}}
                               : gw_event{gw_event::done_failed, 0, {}, std::move(end.error)});
    },
    // iii bindings and channel ends: gateway_iii.cpp.
    [self](subscribe_atom, caf::actor& sink) { iii_subscribe(self, sink); },
    [self](bind_atom, const std::string& node, iii_wire& w) { iii_bind(self, node, w); },
    [self](attach_atom, const std::string& node, std::string& id, std::string& key, bool writer) {
      iii_open(self, node, id, key, writer);
    },
    [self](channel_frame_atom, std::uint64_t link, bool binary, std::string& data) {
      iii_frame(self, link, binary, data);
    },
    [self](channel_closed_atom, std::uint64_t link, bool clean, std::uint16_t code,
           std::string& reason) { iii_closed(self, link, clean, code, reason); },
    [self](slot_atom, std::uint64_t link, std::uint64_t frames) { iii_credit(self, link, frames); },
    [self](gw_requests_atom, std::vector<iii_wire>& batch) { iii_batch(self, batch); },
  };
}

} // namespace gateway_detail

gateway_actor spawn_cluster_gateway(caf::actor_system& sys) {
  return sys.spawn(gateway_detail::cluster_gateway);
}

} // namespace actor_host
