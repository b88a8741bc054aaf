#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/call/replica_load.hpp"
#include "actors/common/snapshot_board.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace actor_host {

/// The runtimes that can take calls: this node's in registration order
/// (back() is the "most recent" runtime of Genkit's routing), then, in a
/// cluster, the other nodes' in the order their registrations arrived here.
/// Runtimes registered under the same name are the replicas of one service.
/// Immutable once published (the load figures are the replicas' own).
struct route_table {
  struct entry {
    std::string runtime_id;
    call_target_actor conn; // its runtime_connection (a proxy for another node's)
    std::string node;       // remote only: the node that holds it
    std::string service;    // the name it registered with (default: its id)
    replica_load_ptr load;  // this node's only: its calls in flight
    std::int32_t cap = 0;   // this node's only: calls in flight it may take; 0 = no cap
    call_target_actor queue; // with a cap: its service's queue (service_queue.hpp)
  };
  std::vector<entry> entries; // this node's
  std::vector<entry> remote;  // other nodes'
  // This node's services whose replicas declare actions safe to run twice
  // (listActions metadata `retry: "idempotent"`) -> those keys.
  std::unordered_map<std::string, std::vector<std::string>> idempotent_by_service;
  std::string self_node;      // "" outside a cluster
  caf::actor gateway;         // this node's cluster gateway; null outside a cluster
  // Runtimes (by id) and services (by name) whose node was lost in the last
  // failover hold, until when: a call for one of them waits for it to
  // register again somewhere (failover_hold.hpp) instead of failing at once.
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> moving_ids;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> moving_services;
  // Not empty: this node is on a minority side of a partition (why, for
  // errors): a call for a runtime it does not list fails UNAVAILABLE at once.
  std::string partitioned;
};

/// Where the runtime directory publishes its routes for every front door.
/// Routes change when a runtime registers or leaves and are read on every
/// call, so a call costs no directory hop and no per-session copy.
using route_board = snapshot_board<route_table>;

using route_board_ptr = std::shared_ptr<route_board>;

/// Where one call goes. The one routing rule of the manager, for every front
/// door: `/iii/<function_id>` keys go to the iii function registry (which
/// knows the worker), a listActions of runtime "iii" lists the iii
/// functions, everything else goes to the named runtime or, without a
/// runtimeId, to the most recent one. In a cluster (docs/CLUSTER.md):
/// without a runtimeId, this node's most recent runtime, else the cluster's
/// most recent other node's; `node/id` names one node's runtime exactly.
///
/// Services (docs/API.md, "Services and replicas"): without a runtimeId the
/// call goes to a service, `runtimeName` or else the most recently
/// registered runtime's name, and within it to the replica with the fewest
/// calls in flight (of two picked at random when there are more than two;
/// ties at random). This node's replicas are preferred; another node's serve
/// when this one has none. `runtimeId` pins one replica. With a cap on calls
/// in flight per replica, a call that finds every replica full goes to the
/// service's queue, which hands it on when one has room (or refuses it).
struct call_route {
  // broadcast: a cancelAction by trace id alone with several runtimes here,
  // asked of each of them (cancel_broadcast.hpp): `service`'s, or all.
  // hold: the runtime or service named is not listed but moving (its node
  // was lost moments ago): the call waits for it (failover_hold.hpp).
  enum class kind { runtime, iii_function, iii_listing, broadcast, hold, failed };
  kind how = kind::failed;
  call_target_actor conn;  // runtime: its connection
  std::string runtime_id;  // runtime: its id
  std::string node;        // runtime: the node that holds it ("" = this one)
  caf::actor gateway;      // in a cluster: this node's gateway, for calls to other nodes
  std::string function_id; // iii_function
  std::string service;     // broadcast: the service asked ("" = every runtime here)
  call_error error;        // failed: why, for the caller
  replica_load_ptr load;   // runtime at this node: counted for this call (released by its
                           // connection when the call ends, or by the door if the hand-off fails)
  // runtime at this node, balanced over a service that has another replica
  // here: a hand-off that finds the connection gone (the call never reached
  // the runtime) may go to another replica instead.
  bool reroutable = false;
};

/// The service a call without a runtimeId goes to: its runtimeName, else the
/// most recently registered runtime's (this node's first); "" if none.
std::string_view service_of_call(const route_table& routes, const call_request& req);

/// Whether a replica of the call's service declares its action safe to run
/// twice (listActions metadata `retry: "idempotent"`).
bool declared_idempotent(const route_table& routes, const call_request& req);

/// `avoid`: a replica to pass over while the service has another (a retry).
call_route route_call(const route_table& routes, const call_request& req,
                      const caf::actor_addr& avoid = {});

/// A replica of this node's `service` with room for one more call, which is
/// counted on it (as route_call does); null if every one is at its cap.
const route_table::entry* reserve_replica(const route_table& routes, std::string_view service);

/// The balancing step alone: of `loads` (one per replica), the index to use.
/// `random` draws uniformly; exposed for the unit tests.
std::size_t pick_replica(const std::vector<std::int32_t>& loads, std::uint32_t (*random)());

} // namespace actor_host
