#pragma once

// The state of a cluster_node and the steps its two files share: membership
// (cluster_node.cpp) and the dialing side (cluster_dialer.cpp). Private to
// actors/cluster/.

#include "actors/cluster/cluster_node.hpp"

#include "actors/call/replica_load.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace actor_host::cluster_detail {

using clock_type = std::chrono::steady_clock;

constexpr std::size_t max_records_per_node = 100000;

struct member {
  member_card card;
  enum class status { up, unreachable, down } state = status::up;
  std::set<std::string> runtimes; // ids listed in the directory
  std::uint64_t workers = 0;
  clock_type::time_point since = clock_type::now();
  // Our iii functions went to it since it was admitted. The node that
  // dialed sends first, after the welcome (the welcome has to arrive
  // first); the other answers with its own.
  bool fns_sent = false;
  // The incarnation that left (a drain): it is not admitted again, though it
  // still answers while it drains; a restart comes with a new one.
  std::uint64_t left_incarnation = 0;
};

inline const char* status_name(member::status s) {
  switch (s) {
    case member::status::up: return "up";
    case member::status::unreachable: return "unreachable";
    case member::status::down: return "down";
  }
  return "?";
}

struct dial_state {
  bool in_flight = false;
  unsigned failures = 0;
  clock_type::time_point next = {};
};

/// A node another member told us of that is not a member here yet: dialed
/// by every beat (with the dial's backoff) until it is admitted, or for
/// forget_after. Without it a first dial that failed was never tried again
/// unless the node was a seed (a cluster of three could stay split in two
/// views, each node up with the seed only).
struct introduction {
  std::string address;
  clock_type::time_point since;
};

/// Introductions kept at once; past it a new one is dialed once only.
constexpr std::size_t max_introductions = 256;

struct cluster_state {
  live_count live{actor_kind::cluster_node};
  cluster_options opts;
  cluster_links links;
  caf::actor directory;
  cluster_board_ptr board;
  member_card self_card;
  std::map<std::string, member> members;                    // by node name
  std::map<std::string, runtime_record> local;              // this node's runtimes, by id
  std::map<std::string, replica_load_ptr> local_loads;      // their calls in flight
  iii_node_set local_fns; // this node's iii functions, workers, trigger types
  caf::actor functions;                                     // the function_registry
  std::vector<std::string> seed_addresses;                  // resolved
  std::unordered_map<std::string, dial_state> dials;        // by address
  std::map<std::string, introduction> introduced;           // by node name
  std::set<std::string> self_addresses;                     // addresses that lead here
  caf::actor resolver;
  clock_type::time_point started = clock_type::now();
  bool joined = false; // admitted by (or admitted) another node once
  bool leaving = false;
  bool grace_logged = false;
  std::string refusal; // the last refusal this node got (name in use, version)
  // Not empty: this node reaches a minority of the nodes (why); see
  // minority_problem in cluster_node.cpp.
  std::string partitioned;
  static inline const char* name = "cluster_node";
};

using self_ptr = caf::stateful_actor<cluster_state>*;

// Membership (cluster_node.cpp).

/// Publishes the member list for /api/cluster and /readyz.
void publish_view(self_ptr self);
/// This node's runtimes, as the others list them.
std::vector<runtime_record> local_records(self_ptr self);
/// The link to `m` is gone, or it `left` (a drain: calls still reach it
/// until its link closes): its runtimes go from the directory.
void mark_lost(self_ptr self, member& m, member::status to, const std::string& why, bool left);
/// `card` said hello or welcomed us: it is a member now, with `records`.
void admit(self_ptr self, member_card card, std::vector<runtime_record> records);
/// Why `card` may not join ("" = it may).
std::string refusal_for(self_ptr self, const member_card& card);
/// Sends this node's iii functions to `m`.
void send_functions(self_ptr self, member& m);

/// Sends `xs` to every member that is up.
template <class... Ts>
void broadcast(self_ptr self, const Ts&... xs) {
  for (auto& [name, m] : self->state.members)
    if (m.state == member::status::up)
      self->send(m.card.node, xs...);
}

// The dialing side (cluster_dialer.cpp): seeds and members are dialed with
// backoff through the middleman, greeted with a hello, and beaten.

/// Connects to `address` (through the middleman) and says hello, unless a
/// dial is in flight or its backoff has not passed.
void dial(self_ptr self, const std::string& address);
/// A node another member introduced: dials it unless it is known and up,
/// and keeps dialing it on every beat until it is (introduction).
void meet(self_ptr self, const member_card& card);
/// Sends `peer` (a cluster_node at `address`) this node's hello.
void say_hello(self_ptr self, const caf::actor& peer, const std::string& address);
/// The periodic beat: redials, forgets long-down nodes, sends the status.
void beat(self_ptr self);
/// Resolves the seeds again (on the resolver actor), then re-schedules.
void resolve(self_ptr self);

} // namespace actor_host::cluster_detail
