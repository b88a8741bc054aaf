#pragma once

#include "actors/cluster/cluster_types.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/snapshot_board.hpp"

#include <caf/fwd.hpp>
#include <caf/timespan.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace actor_host {

struct cluster_options {
  std::string node_name;
  /// "host:port" the other nodes dial to reach this one.
  std::string advertise;
  /// "host:port" entries; host names are resolved again every resolve_interval.
  std::vector<std::string> seeds;
  caf::timespan resolve_interval = std::chrono::seconds(10);
  /// How often dials are retried at most (doubling from min to max) and the
  /// node's status sent to the others.
  caf::timespan beat = std::chrono::milliseconds(500);
  caf::timespan min_backoff = std::chrono::milliseconds(250);
  caf::timespan max_backoff = std::chrono::seconds(5);
  /// With seeds and none of them answering: ready (serving alone, still
  /// dialing) after this long, so a first node never waits for itself.
  caf::timespan join_grace = std::chrono::seconds(5);
  /// A connection to the cluster port that has not started CAF's handshake
  /// this long is closed (cluster_port_guard.hpp); the heartbeat timeout.
  caf::timespan handshake_timeout = std::chrono::seconds(5);
  /// The endpoint is caf-openssl's (mTLS): silent peers are found by a scan
  /// of the process's sockets instead, on a detached actor (tls_port_sweep.hpp).
  bool tls = false;
  /// Nodes down this long are dropped from the member list.
  caf::timespan forget_after = std::chrono::minutes(5);
  /// Live iii workers on this node (for the member list).
  std::function<std::uint64_t()> worker_count;
};

/// The cluster as this node sees it.
struct cluster_view {
  std::string json;      // GET /api/cluster
  std::string not_ready; // "" = joined (or serving alone after the grace)
  // The reflection URLs of the other nodes up: a register answer hands
  // them to the runtime (managerUrls), so it can move when this node goes.
  std::vector<std::string> peer_reflection_urls;
};

/// What /api/cluster and /readyz read without a round trip to the cluster
/// node (published whole on every change, like the route board).
using cluster_board = snapshot_board<cluster_view>;

using cluster_board_ptr = std::shared_ptr<cluster_board>;

/// How a cluster node reaches a "host:port": CAF's middleman (plain BASP) or
/// caf-openssl's (mTLS). Null in unit tests, which introduce nodes directly.
struct cluster_links {
  caf::actor middleman; // a caf::io::middleman_actor, as a plain handle
  // This node's function_registry; null: no iii side. A plain handle: its
  // type (function_registry_actor) is in actors/iii/, above this folder.
  caf::actor functions;
  gateway_actor gateway; // this node's cluster_gateway; null: no calls (unit tests)
};

/// Spawns this node's membership actor (actors/cluster/cluster_node.cpp).
/// Once told (listening_atom, advertised "host:port", the reflection URL runtimes dial) it dials the seeds, admits and introduces nodes, sends this node's runtime
/// registrations (from `directory`) to every node and feeds theirs into it,
/// and drops a node's runtimes when its link is lost. `directory` is the
/// runtime_directory, as a plain handle.
caf::actor spawn_cluster_node(caf::actor_system& sys, cluster_options opts, cluster_links links,
                              caf::actor directory, cluster_board_ptr board);

/// Unit tests and the manager: make `node` say hello to `peer` (a
/// cluster_node of another node) as if it had dialed it.
void introduce(const caf::actor& node, const caf::actor& peer);

} // namespace actor_host
