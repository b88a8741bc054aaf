#include "actors/cluster/remote_call.hpp"

#include "actors/common/live_counts.hpp"
#include "actors/manager/errors.hpp"
#include "net/iii_protocol.hpp"
#include "obs/metrics.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace actor_host {

namespace {

using relay_actor = call_target_actor::extend_with<caller_actor, call_actor>::extend<
  caf::reacts_to<execute_atom, caller_actor, std::uint64_t, invocation_request>,
  caf::reacts_to<expired_atom>>;

// CAF 0.17's BASP can deliver the news that a remote actor ended before its
// last messages: the owner's broker answers our proxy announcement (an I/O
// event, handled at once) ahead of messages still queued in its mailbox. A
// call whose actor ended normally gets this long for its answer to arrive.
constexpr auto last_words_grace = std::chrono::seconds(2);

struct remote_call_state {
  live_count live{actor_kind::remote_call};
  call_target_actor conn; // the owning node's connection (a proxy)
  std::string node;
  std::string runtime_id;
  std::string method;
  std::uint64_t tag = 0;
  caller_actor caller;            // the front door's caller, on this node
  call_actor call;                // the pending request at the owning node (a proxy)
  caf::response_promise accepted; // answered with this relay once the call is in flight
  bool watching_conn = false;     // the owner's connection stands for its node
  bool iii_caller = false;        // an iii invocation: errors in iii's shape
  bool grace = false;             // the remote side ended; its answer may still come
  caf::error grace_reason;
  std::chrono::steady_clock::time_point started;
  static inline const char* name = "remote_call";
};

using self_ptr = relay_actor::stateful_pointer<remote_call_state>;

void finish(self_ptr self) {
  auto& st = self->state;
  obs::global().remote_call_latency.observe(std::chrono::steady_clock::now() - st.started);
  // The caller may be a long-lived session, the connection a busy worker:
  // leave nothing attached to them.
  if (st.caller)
    self->demonitor(st.caller.address());
  if (st.watching_conn)
    self->demonitor(st.conn.address());
  st.caller = nullptr;
  self->quit();
}

// The remote side ended without an answer. CAF kills every proxy of a node
// whose link is lost (closed, or silent past the heartbeat timeout) with
// remote_link_unreachable: then the run's outcome is unknown, and the
// caller learns it now rather than when some timeout passes. Any other
// reason: the owner's connection or call ended (a shutdown).
void ended(self_ptr self, const caf::error& reason) {
  auto& st = self->state;
  bool node_lost = reason == caf::exit_reason::remote_link_unreachable;
  if (!node_lost && !st.accepted.pending() && !st.grace) {
    st.grace = true;
    st.grace_reason = reason;
    self->delayed_send(self, last_words_grace, expired_atom_v);
    return;
  }
  auto why = node_lost ? std::string{"its connection closed, or it sent no heartbeat within the "
                                     "timeout"}
                       : caf::to_string(reason);
  if (node_lost) {
    obs::global().remote_calls_lost.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("{} of runtime {} on node {} failed: the link to the node was lost ({})",
                 st.method, st.runtime_id, st.node, why);
  } else {
    spdlog::warn("{} of runtime {} on node {}: its {} ended without an answer ({})", st.method,
                 st.runtime_id, st.node, st.accepted.pending() ? "connection" : "call", why);
  }
  if (st.accepted.pending())
    // Not in flight yet: the front door reports a failed hand-off
    // (UNAVAILABLE, "connection closed before the response").
    st.accepted.deliver(reason);
  else if (st.caller && st.iii_caller)
    self->send(st.caller, done_atom_v, st.tag, false,
               net::iii::error_object(net::iii::code::invocation_failed,
                                 "Function " + st.runtime_id + " on node " + st.node
                                   + " is unreachable: " + why));
  else if (st.caller)
    self->send(st.caller, done_atom_v, st.tag, false,
               node_lost ? manager_errors::node_lost(st.runtime_id, st.node, st.method, why)
                         : manager_errors::connection_closed(st.runtime_id, st.method));
  finish(self);
}

} // namespace

relay_actor::behavior_type remote_call(self_ptr self, call_target_actor conn, std::string node,
                                       std::string runtime_id) {
  auto& st = self->state;
  st.conn = std::move(conn);
  st.node = std::move(node);
  st.runtime_id = std::move(runtime_id);
  st.started = std::chrono::steady_clock::now();
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.caller && dm.source == st.caller.address()) {
      // The caller died without a word: its run is abandoned at the owner.
      if (st.call)
        self->send(st.call, abort_atom_v);
      st.caller = nullptr;
      return finish(self);
    }
    // The remote connection before the hand-off, or the remote call after
    // it. A call that ended normally sent done first and this relay is gone.
    ended(self, dm.reason);
  });
  return {
    [self](call_atom, call_request& req, caller_actor& caller) -> caf::result<call_actor> {
      auto& st = self->state;
      obs::global().remote_calls.fetch_add(1, std::memory_order_relaxed);
      st.caller = std::move(caller);
      st.tag = req.tag;
      st.method = std::string{method_name(req.method)};
      self->monitor(st.caller);
      // Until the owner answers, its connection's proxy stands for the node.
      self->monitor(st.conn);
      st.watching_conn = true;
      st.accepted = self->make_response_promise();
      self
        ->request(st.conn, caf::infinite, call_atom_v, std::move(req),
                  caf::actor_cast<caller_actor>(self))
        .then(
          [self](call_actor& remote) {
            auto& st = self->state;
            self->demonitor(st.conn.address());
            st.watching_conn = false;
            st.call = std::move(remote);
            self->monitor(st.call);
            st.accepted.deliver(caf::actor_cast<call_actor>(self));
          },
          [self](caf::error& err) {
            // The connection at the owner ended between routing and the call.
            self->state.accepted.deliver(std::move(err));
            finish(self);
          });
      return st.accepted;
    },
    // An iii invocation of a function at the owning node (a worker's call,
    // or one the engine fires): the owner's worker connection runs it and
    // answers this relay, which stands for the node meanwhile.
    [self](execute_atom, caller_actor& caller, std::uint64_t tag, invocation_request& req) {
      auto& st = self->state;
      obs::global().remote_calls.fetch_add(1, std::memory_order_relaxed);
      st.method = "invoke";
      st.tag = tag;
      st.iii_caller = true;
      auto owner = caf::actor_cast<worker_connection_actor>(st.conn);
      if (!req.wants_reply) {
        self->send(owner, execute_atom_v, caller_actor{}, tag, std::move(req));
        return finish(self);
      }
      st.caller = std::move(caller);
      self->monitor(st.conn);
      st.watching_conn = true;
      self->send(owner, execute_atom_v, caf::actor_cast<caller_actor>(self), tag, std::move(req));
    },
    // The run's events, from the owner's pending request, in order.
    [self](trace_atom, std::uint64_t tag, std::string& trace) {
      if (self->state.caller)
        self->send(self->state.caller, trace_atom_v, tag, std::move(trace));
    },
    [self](chunk_atom, std::uint64_t tag, std::string& raw) {
      if (self->state.caller)
        self->send(self->state.caller, chunk_atom_v, tag, std::move(raw));
    },
    [self](done_atom, std::uint64_t tag, bool ok, std::string& raw) {
      if (self->state.caller)
        self->send(self->state.caller, done_atom_v, tag, ok, std::move(raw));
      finish(self);
    },
    [self](expired_atom) {
      // The remote side ended and no answer came within the grace.
      auto reason = self->state.grace_reason;
      ended(self, reason);
    },
    // From the caller.
    [self](input_atom, std::string& chunk) {
      if (self->state.call)
        self->send(self->state.call, input_atom_v, std::move(chunk));
    },
    [self](end_input_atom) {
      if (self->state.call)
        self->send(self->state.call, end_input_atom_v);
    },
    [self](abort_atom) {
      if (self->state.call)
        self->send(self->state.call, abort_atom_v);
      finish(self);
    },
  };
}

caf::actor start_remote_invocation(caf::actor_system& sys, const caf::actor& conn,
                                   std::string node, std::string function_id) {
  return caf::actor_cast<caf::actor>(sys.spawn(remote_call, caf::actor_cast<call_target_actor>(conn),
                                               std::move(node), std::move(function_id)));
}

call_target_actor start_remote_call(caf::actor_system& sys, const call_target_actor& conn,
                                    std::string node, std::string runtime_id) {
  return caf::actor_cast<call_target_actor>(
    sys.spawn(remote_call, conn, std::move(node), std::move(runtime_id)));
}

} // namespace actor_host
