#pragma once

#include "actors/common/snapshot_board.hpp"
#include "actors/manager/interfaces.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace actor_host {

/// The runtimes that can take calls: this node's in registration order
/// (back() is the "most recent" runtime of Genkit's routing), then, in a
/// cluster, the other nodes' in the order their registrations arrived here.
/// Immutable once published.
struct route_table {
  struct entry {
    std::string runtime_id;
    call_target_actor conn; // its runtime_connection (a proxy for another node's)
    std::string node;       // remote only: the node that holds it
  };
  std::vector<entry> entries; // this node's
  std::vector<entry> remote;  // other nodes'
  std::string self_node;      // "" outside a cluster
  caf::actor gateway;         // this node's cluster gateway; null outside a cluster
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
/// most recent; a runtimeId names this node's runtime of that id, else the
/// most recent other node's; `node/id` names one node's runtime exactly.
struct call_route {
  enum class kind { runtime, iii_function, iii_listing, failed };
  kind how = kind::failed;
  call_target_actor conn;  // runtime: its connection
  std::string runtime_id;  // runtime: its id
  std::string node;        // runtime: the node that holds it ("" = this one)
  caf::actor gateway;      // in a cluster: this node's gateway, for calls to other nodes
  std::string function_id; // iii_function
  std::string error;       // failed: the error object for the caller
};

call_route route_call(const route_table& routes, const call_request& req);

} // namespace actor_host
