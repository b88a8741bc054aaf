#pragma once

// The state of a cluster_gateway and the steps its two files share: the
// entry side, batching and failures (gateway.cpp) and the owner side
// (gateway_owner.cpp). Private to actors/cluster/.

#include "actors/call/interfaces.hpp"
#include "actors/cluster/cluster_types.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/held_input.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/monitor_counts.hpp"
#include "obs/metrics.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace actor_host::gateway_detail {

using clock_type = std::chrono::steady_clock;

// The ids of the calls made here: the front doors' calls count up from 1
// (0 is a per-call actor's, call_handle), iii invocations from here.
constexpr std::uint64_t invocation_id_base = std::uint64_t{1} << 63;

/// A call made here, for another node's runtime or function.
struct outbound {
  gateway_actor peer;    // the owner's gateway
  caller_actor to;       // the front door's caller, or the iii invocation's
  std::uint64_t tag = 0; // what `to` expects in its events
  std::string node;
  std::string target; // runtime or function id
  std::string method;
  bool iii = false;      // an iii invocation (execute_atom), not a front door's call
  bool orphaned = false; // its gateway ended without a lost link: in grace
  bool watched = false;  // counted in gateway_state::callers
  replica_load_ptr load{}; // the owner's replica as the door counted it: released at the end
  clock_type::time_point started = clock_type::now();
};

/// A call another node made, run here.
struct inbound {
  gateway_actor origin;    // the entry node's gateway
  std::uint64_t id = 0;    // the call's id there
  call_handle pending;     // null until the connection took it (or for iii)
  // Input that arrived before the connection answered with its pending
  // request. One local round trip long: the entry node's front door caps a
  // run's input, the pending request caps what it holds before the run
  // starts.
  held_input held;
};

/// What this gateway has batched for another one.
struct outbox {
  gateway_actor to;
  std::vector<gw_request> requests;
  std::vector<gw_event> events;
  std::size_t bytes = 0;
};

/// A channel end whose socket is at one node and whose channel is at
/// another (gateway_iii.cpp): both gateways hold one, the socket's node
/// (the opener) by the end actor's id, the channel's by a tag of its own.
struct iii_link {
  gateway_actor peer;     // the other node's gateway
  std::uint64_t id = 0;   // the opener's id: what the wire names it by
  bool opener = false;    // the socket is here
  bool writer = false;    // the socket is the channel's writer
  caf::actor local;       // the end actor (opener), or the channel (null while it is looked up)
  std::vector<iii_wire> held; // for the channel, while it is looked up (a few: see gateway_iii)
};

/// The iii engine's traffic through this gateway: bindings for the function
/// registry (`sink`) and channel ends.
struct iii_links_state {
  caf::actor sink; // this node's function registry
  std::unordered_map<std::uint64_t, iii_link> links; // by local id
  std::map<std::pair<caf::actor_addr, std::uint64_t>, std::uint64_t> by_origin; // channel's side
  std::uint64_t next_tag = std::uint64_t{1} << 62; // above every actor id (the openers' ids)
  std::vector<std::pair<gateway_actor, std::vector<iii_wire>>> outboxes;
  std::vector<std::size_t> outbox_bytes; // beside outboxes
};

struct gateway_state {
  live_count live{actor_kind::cluster_gateway};
  std::vector<outbox> outboxes; // a few peers: a short list
  bool flush_due = false;
  std::unordered_map<std::string, gateway_actor> peers; // node name -> its gateway
  std::set<caf::actor_addr> watched;                  // peers and origins monitored
  std::unordered_map<std::uint64_t, outbound> out;    // by call id
  std::uint64_t next_call = 1;                        // the front doors' calls' ids
  // The front doors' callers of the calls in `out`, each monitored once,
  // with how many of those calls it has.
  monitor_counts callers;
  std::unordered_map<std::uint64_t, inbound> in;      // by local tag
  std::map<std::pair<caf::actor_addr, std::uint64_t>, std::uint64_t> in_by_origin;
  std::uint64_t next_tag = 1;
  std::uint64_t next_invocation = invocation_id_base;
  iii_links_state iii;
  gateway_state() = default;
  gateway_state(const gateway_state&) = delete;
  gateway_state& operator=(const gateway_state&) = delete;
  /// Ended (a shutdown): the calls made here fail (gateway.cpp); the
  /// pending requests run for other nodes, watching it, end theirs.
  ~gateway_state();
  static inline const char* name = "cluster_gateway";
};

using self_ptr = gateway_actor::stateful_pointer<gateway_state>;

/// Monitors `a` once (a peer's or an origin's gateway).
void watch(self_ptr self, const gateway_actor& a);
/// Batches `r` / `e` for the gateway `to` (sent when the mailbox runs dry).
void post(self_ptr self, const gateway_actor& to, gw_request r);
void post(self_ptr self, const gateway_actor& to, gw_event e);

// Owner side (gateway_owner.cpp).

/// Runs the calls, invocations, input and aborts of the gateway `origin`.
void on_requests(self_ptr self, const gateway_actor& origin, std::vector<gw_request>& requests);
/// An event of the call with local `tag`, for the gateway of its node
/// (`e.id` is set here).
void answer(self_ptr self, std::uint64_t tag, gw_event e);
/// Forgets a call another node made.
void forget_in(self_ptr self, std::unordered_map<std::uint64_t, inbound>::iterator i);

// iii engine traffic (gateway_iii.cpp).

/// The messages of bindings and channel ends, local and from other
/// gateways (in words at the top of gateway_iii.cpp).
void iii_subscribe(self_ptr self, caf::actor& sink);
void iii_bind(self_ptr self, const std::string& node, iii_wire& w);
void iii_open(self_ptr self, const std::string& node, std::string& channel_id, std::string& key,
              bool writer);
void iii_frame(self_ptr self, std::uint64_t link, bool binary, std::string& data);
void iii_closed(self_ptr self, std::uint64_t link, bool clean, std::uint16_t code,
                std::string& reason);
void iii_credit(self_ptr self, std::uint64_t link, std::uint64_t frames);
void iii_batch(self_ptr self, std::vector<iii_wire>& batch);
/// Sends what is batched for other gateways.
void flush_iii(self_ptr self);
/// Asks for (flush_atom) once for what was batched since the last flush.
void schedule_flush(self_ptr self);
/// The gateway `gone` ended: the channel ends through it are closed.
void iii_peer_down(self_ptr self, const caf::actor_addr& gone, bool node_lost);

} // namespace actor_host::gateway_detail
