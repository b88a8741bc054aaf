#include "actors/cluster/gateway.hpp"

#include "actors/common/live_counts.hpp"
#include "actors/manager/errors.hpp"
#include "actors/manager/interfaces.hpp"
#include "net/iii_protocol.hpp"
#include "obs/metrics.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace actor_host {

namespace {

using clock_type = std::chrono::steady_clock;

// CAF 0.17's BASP can deliver the news that a remote actor ended before the
// last messages it sent: a gateway that ended without a lost link (its node
// shutting down) gets this long for the answers still on the way.
constexpr auto last_words_grace = std::chrono::seconds(2);

// iii invocations have no relay: their ids come from a counter above every
// actor id (which are the relays' call ids).
constexpr std::uint64_t invocation_id_base = std::uint64_t{1} << 63;

/// A call made here, for another node's runtime or function.
struct outbound {
  caf::actor peer;      // the owner's gateway
  caller_actor to;      // the relay, or the iii invocation's caller
  std::uint64_t tag = 0; // what `to` expects in its events
  std::string node;
  std::string target; // runtime or function id
  std::string method;
  bool iii = false;
  bool orphaned = false; // its gateway ended without a lost link: in grace
  clock_type::time_point started = clock_type::now();
};

/// A call another node made, run here.
struct inbound {
  caf::actor origin;       // the entry node's gateway
  std::uint64_t id = 0;    // the call's id there
  call_actor pending;      // null until the connection took it (or for iii)
  // Input that arrived before the connection answered with its pending
  // request ("" = end of input). One local round trip long: the entry
  // node's front door caps a run's input, the pending request caps what it
  // holds before the run starts.
  std::vector<std::string> early;
};

struct gateway_state {
  live_count live{actor_kind::cluster_gateway};
  std::unordered_map<std::string, caf::actor> peers; // node name -> its gateway
  std::set<caf::actor_addr> watched;                  // peers and origins monitored
  std::unordered_map<std::uint64_t, outbound> out;    // by call id
  std::unordered_map<std::uint64_t, inbound> in;      // by local tag
  std::map<std::pair<caf::actor_addr, std::uint64_t>, std::uint64_t> in_by_origin;
  std::uint64_t next_tag = 1;
  std::uint64_t next_invocation = invocation_id_base;
  gateway_state() = default;
  gateway_state(const gateway_state&) = delete;
  gateway_state& operator=(const gateway_state&) = delete;
  ~gateway_state() {
    // Ended (a shutdown): the calls it held are not in flight any more; the
    // relays and pending requests watching it end theirs.
    obs::global().remote_calls_outbound.fetch_sub(static_cast<std::int64_t>(out.size()),
                                                  std::memory_order_relaxed);
    obs::global().remote_calls_inbound.fetch_sub(static_cast<std::int64_t>(in.size()),
                                                 std::memory_order_relaxed);
  }
  static inline const char* name = "cluster_gateway";
};

using self_ptr = caf::stateful_actor<gateway_state>*;

void watch(self_ptr self, const caf::actor& a) {
  if (self->state.watched.insert(a.address()).second)
    self->monitor(a);
}

caf::actor_addr sender_addr(self_ptr self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender());
}

// --- entry side -----------------------------------------------------------

void count_out(std::int64_t delta) {
  obs::global().remote_calls_outbound.fetch_add(delta, std::memory_order_relaxed);
}

void forget_out(self_ptr self, std::unordered_map<std::uint64_t, outbound>::iterator i) {
  obs::global().remote_call_latency.observe(clock_type::now() - i->second.started);
  self->state.out.erase(i);
  count_out(-1);
}

std::string failure_for(const outbound& o, bool node_lost, const std::string& why) {
  if (o.iii)
    return net::iii::error_object(net::iii::code::invocation_failed,
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
    self->send(o.to, done_atom_v, o.tag, false, failure_for(o, node_lost, why));
  forget_out(self, i);
}

const std::string no_link = "no link to the node";

/// The owner's gateway for `node`, or null after failing the caller.
outbound* start_out(self_ptr self, std::uint64_t id, outbound o) {
  obs::global().remote_calls.fetch_add(1, std::memory_order_relaxed);
  auto p = self->state.peers.find(o.node);
  if (p == self->state.peers.end()) {
    obs::global().remote_calls_lost.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("{} of {} on node {} failed: {}", o.method, o.target, o.node, no_link);
    if (o.to)
      self->send(o.to, done_atom_v, o.tag, false, failure_for(o, true, no_link));
    return nullptr;
  }
  o.peer = p->second;
  count_out(1);
  return &self->state.out.insert_or_assign(id, std::move(o)).first->second;
}

/// The outbound call `id` if the sender is the gateway that runs it: a node
/// speaks only for its own calls.
outbound* answered(self_ptr self, std::uint64_t id) {
  auto i = self->state.out.find(id);
  if (i == self->state.out.end() || i->second.peer.address() != sender_addr(self))
    return nullptr;
  return &i->second;
}

// --- owner side -----------------------------------------------------------

void count_in(std::int64_t delta) {
  obs::global().remote_calls_inbound.fetch_add(delta, std::memory_order_relaxed);
}

void forget_in(self_ptr self, std::unordered_map<std::uint64_t, inbound>::iterator i) {
  self->state.in_by_origin.erase({i->second.origin.address(), i->second.id});
  self->state.in.erase(i);
  count_in(-1);
}

/// A new call from the gateway that sent the current message; 0 when that
/// sender cannot be answered or the target is not an actor of this node.
std::uint64_t start_in(self_ptr self, std::uint64_t id, const caf::actor& target) {
  auto origin = caf::actor_cast<caf::actor>(self->current_sender());
  if (!origin || !target || target.node() != self->node())
    return 0;
  auto& st = self->state;
  watch(self, origin);
  auto tag = st.next_tag++;
  st.in_by_origin[{origin.address(), id}] = tag;
  st.in.emplace(tag, inbound{std::move(origin), id, {}, {}});
  count_in(1);
  return tag;
}

/// The inbound call `id` of the gateway that sent the current message.
std::unordered_map<std::uint64_t, inbound>::iterator from_origin(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto k = st.in_by_origin.find({sender_addr(self), id});
  return k == st.in_by_origin.end() ? st.in.end() : st.in.find(k->second);
}

void input(self_ptr self, std::uint64_t id, std::string chunk) {
  auto i = from_origin(self, id);
  if (i == self->state.in.end())
    return;
  auto& c = i->second;
  if (!c.pending)
    c.early.push_back(std::move(chunk));
  else if (chunk.empty())
    self->send(c.pending, end_input_atom_v);
  else
    self->send(c.pending, input_atom_v, std::move(chunk));
}

void accepted(self_ptr self, std::uint64_t tag, call_actor& pending) {
  auto i = self->state.in.find(tag);
  if (i == self->state.in.end()) {
    // Aborted, or already answered: if it still runs, nobody waits for it.
    self->send(pending, abort_atom_v);
    return;
  }
  auto& c = i->second;
  c.pending = pending;
  for (auto& x : c.early) {
    if (x.empty())
      self->send(pending, end_input_atom_v);
    else
      self->send(pending, input_atom_v, std::move(x));
  }
  c.early.clear();
}

// --- failures ---------------------------------------------------------------

void peer_down(self_ptr self, const caf::actor_addr& gone, const caf::error& reason) {
  auto& st = self->state;
  st.watched.erase(gone);
  std::erase_if(st.peers, [&](auto& kv) { return kv.second.address() == gone; });
  // The calls the lost node made here: abandoned, which cancels their runs.
  std::size_t dropped = 0;
  for (auto i = st.in.begin(); i != st.in.end();) {
    auto next = std::next(i);
    if (i->second.origin.address() == gone) {
      if (i->second.pending)
        self->send(i->second.pending, abort_atom_v);
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

} // namespace

caf::behavior cluster_gateway(self_ptr self) {
  self->set_down_handler([self](caf::down_msg& dm) { peer_down(self, dm.source, dm.reason); });
  return {
    [self](gateway_atom, const std::string& node, caf::actor& peer) {
      auto& st = self->state;
      if (!peer) {
        st.peers.erase(node);
        return;
      }
      watch(self, peer);
      st.peers[node] = std::move(peer);
    },
    // Entry side: a relay's call, its input and its end.
    [self](call_atom, std::string& node, std::string& target, caf::actor& conn,
           call_request& req, caller_actor& relay) {
      auto id = relay.id();
      auto method = std::string{method_name(req.method)};
      auto* o = start_out(self, id, outbound{{}, relay, 0, std::move(node), std::move(target),
                                             std::move(method)});
      if (o)
        self->send(o->peer, gw_call_atom_v, id, o->target, std::move(conn), std::move(req));
    },
    [self](input_atom, std::uint64_t id, std::string& raw) {
      if (auto i = self->state.out.find(id); i != self->state.out.end())
        self->send(i->second.peer, gw_input_atom_v, id, std::move(raw));
    },
    [self](end_input_atom, std::uint64_t id) {
      if (auto i = self->state.out.find(id); i != self->state.out.end())
        self->send(i->second.peer, gw_end_atom_v, id);
    },
    [self](abort_atom, std::uint64_t id) {
      if (auto i = self->state.out.find(id); i != self->state.out.end()) {
        self->send(i->second.peer, gw_abort_atom_v, id);
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
          self->send(p->second, gw_exec_atom_v, std::uint64_t{0}, std::move(conn), std::move(req));
        return;
      }
      if (auto* out = start_out(self, id, std::move(o)))
        self->send(out->peer, gw_exec_atom_v, id, std::move(conn), std::move(req));
    },
    // Entry side: the events of calls made here, from the owners' gateways.
    [self](gw_trace_atom, std::uint64_t id, std::string& trace) {
      if (auto* o = answered(self, id); o && o->to)
        self->send(o->to, trace_atom_v, o->tag, std::move(trace));
    },
    [self](gw_chunk_atom, std::uint64_t id, std::string& raw) {
      if (auto* o = answered(self, id); o && o->to)
        self->send(o->to, chunk_atom_v, o->tag, std::move(raw));
    },
    [self](gw_done_atom, std::uint64_t id, bool ok, std::string& raw) {
      if (auto* o = answered(self, id)) {
        if (o->to)
          self->send(o->to, done_atom_v, o->tag, ok, std::move(raw));
        forget_out(self, self->state.out.find(id));
      }
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
    // Owner side: calls another node made.
    [self](gw_call_atom, std::uint64_t id, std::string& target, caf::actor& conn,
           call_request& req) {
      auto tag = start_in(self, id, conn);
      if (tag == 0)
        return;
      auto method = std::string{method_name(req.method)};
      req.tag = tag;
      self
        ->request(caf::actor_cast<call_target_actor>(conn), caf::infinite, call_atom_v,
                  std::move(req), caf::actor_cast<caller_actor>(self))
        .then([self, tag](call_actor& pending) { accepted(self, tag, pending); },
              [self, tag, target = std::move(target), method](caf::error&) {
                // The connection ended between the entry node's routing and now.
                auto i = self->state.in.find(tag);
                if (i == self->state.in.end())
                  return;
                self->send(i->second.origin, gw_done_atom_v, i->second.id, false,
                           manager_errors::connection_closed(target, method));
                forget_in(self, i);
              });
    },
    [self](gw_exec_atom, std::uint64_t id, caf::actor& conn, invocation_request& req) {
      if (!conn || conn.node() != self->node())
        return;
      auto worker = caf::actor_cast<worker_connection_actor>(conn);
      if (id == 0 || !req.wants_reply) {
        self->send(worker, execute_atom_v, caller_actor{}, std::uint64_t{0}, std::move(req));
        return;
      }
      if (auto tag = start_in(self, id, conn); tag != 0)
        self->send(worker, execute_atom_v, caf::actor_cast<caller_actor>(self), tag,
                   std::move(req));
    },
    [self](gw_input_atom, std::uint64_t id, std::string& raw) {
      if (!raw.empty())
        input(self, id, std::move(raw));
    },
    [self](gw_end_atom, std::uint64_t id) { input(self, id, std::string{}); },
    [self](gw_abort_atom, std::uint64_t id) {
      auto i = from_origin(self, id);
      if (i == self->state.in.end())
        return;
      if (i->second.pending)
        self->send(i->second.pending, abort_atom_v);
      forget_in(self, i);
    },
    // Owner side: the events of those calls, from their pending requests
    // (or iii invocations), with the local tag.
    [self](trace_atom, std::uint64_t tag, std::string& trace) {
      if (auto i = self->state.in.find(tag); i != self->state.in.end())
        self->send(i->second.origin, gw_trace_atom_v, i->second.id, std::move(trace));
    },
    [self](chunk_atom, std::uint64_t tag, std::string& raw) {
      if (auto i = self->state.in.find(tag); i != self->state.in.end())
        self->send(i->second.origin, gw_chunk_atom_v, i->second.id, std::move(raw));
    },
    [self](done_atom, std::uint64_t tag, bool ok, std::string& raw) {
      if (auto i = self->state.in.find(tag); i != self->state.in.end()) {
        self->send(i->second.origin, gw_done_atom_v, i->second.id, ok, std::move(raw));
        forget_in(self, i);
      }
    },
  };
}

caf::actor spawn_cluster_gateway(caf::actor_system& sys) {
  return sys.spawn(cluster_gateway);
}

} // namespace actor_host
