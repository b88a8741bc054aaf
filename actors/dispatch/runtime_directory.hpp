#pragma once

#include <caf/actor_clock.hpp>

#include <chrono>

#include "actors/call/routing.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/dispatch/service_queue.hpp"

#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace actor_host {

struct directory_state {
  struct entry {
    std::string id;
    std::string info_json;
    connection_actor conn;
    std::string service;   // the name it registered with (default: its id)
    replica_load_ptr load; // its calls in flight (replica_load.hpp)
    // Action keys its listActions declares `metadata.retry: "idempotent"`.
    std::vector<std::string> idempotent;
  };

  /// Another node's runtime (a cluster; actors/cluster/).
  struct remote_entry {
    std::string node;
    std::string id;
    std::string info_json;
    connection_actor conn; // a proxy
    std::string service;   // its `name` in info_json, else its id
    // The calls this node has in flight there (this node's gateway releases them).
    replica_load_ptr load = std::make_shared<replica_load>();
  };

  /// A service of this node with a cap on calls in flight per replica.
  struct service_record {
    service_queue_actor queue;
    std::shared_ptr<std::atomic<std::int64_t>> queued;
  };

  live_count live{actor_kind::runtime_directory};
  service_limits limits;
  std::unordered_map<std::string, service_record> services;
  // Registration order; back() is the most recent. A list, indexed by id
  // and by connection: a fleet of 10,000 runtimes dropping at once made a
  // scan and a vector erase per disconnect (bench/fleet_churn.sh). Changed
  // only through add(), erase() and set_conn(), which keep both indexes.
  std::list<entry> entries;
  std::unordered_map<std::string, std::list<entry>::iterator> by_id;
  // The ids each connection holds (nearly always one).
  std::unordered_map<caf::actor_addr, std::vector<std::string>> ids_of_conn;
  std::vector<remote_entry> remote; // arrival order; back() is the most recent
  caf::actor cluster;               // the cluster_node local changes go to; null: no cluster
  caf::actor gateway;               // where calls to other nodes' runtimes go (routes)
  std::string node_name;            // this node's name in the cluster
  /// A bidi run by its trace id: its call, and who opened the entry. The
  /// entry goes with the call's own actor, or with the opener when the call
  /// is the gateway's (call_handle::own_actor), which outlives its calls.
  struct bidi_entry {
    call_handle call;
    caf::actor_addr opener;
  };
  std::unordered_map<std::string, bidi_entry> bidi_by_trace;
  // Child runtimes waiting for (or watching) their id's registration.
  std::unordered_map<std::string, std::vector<runtime_watcher_actor>> watchers;
  // Where the routes go for the front doors (routing.hpp).
  route_board_ptr board;
  // Told (changed_atom, "runtimes") on every change of the listing (the dashboard feed).
  std::vector<caf::actor> listeners;
  // How long the runtimes of a lost node count as moving (routing.hpp); 0: not at all.
  std::chrono::milliseconds failover_hold{0};
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> moving_ids;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> moving_services;
  // Not empty: on a minority side (cluster_node's keep-majority rule); no
  // call waits for a runtime to move then.
  std::string partitioned;
  // After a partition heals, the ids this node held while cut off: for
  // `yield_until`, a copy another node lists takes the id (the majority's
  // holder kept it meanwhile) and ours yields, as a dead holder does on one
  // node.
  std::unordered_set<std::string> yielding;
  std::chrono::steady_clock::time_point yield_until{};

  /// What the world hears of a change once the routes carry it: a watcher's
  /// (ready_atom / unready_atom), the cluster node's (local_up_atom /
  /// local_down_atom). Kept in the order the changes happened.
  struct notice {
    enum class kind : std::uint8_t { ready, unready, up, down };
    kind what;
    std::string id;
    // up: what the cluster node is told (as registered at the change).
    std::string info_json;
    connection_actor conn;
    replica_load_ptr load;
  };
  // The routes are published once per burst of changes (runtime_directory.cpp,
  // `routes_changed`): `routes_stale` says `board` lags `entries`/`remote`,
  // `flush_sent` that a (flush_atom) to itself is on its way.
  bool routes_stale = false;
  bool flush_sent = false;
  // Not before this does a change publish at once (runtime_directory.cpp).
  caf::actor_clock::time_point next_publish{};
  std::vector<notice> notices;
  static inline const char* name = "runtime_directory";

  entry* find(const std::string& id);
  entry& add(entry e);
  /// Removes the entry from the list and both indexes.
  void erase(std::list<entry>::iterator i);
  /// Moves the entry to connection `conn` (a re-registration on a new socket).
  void set_conn(entry& e, const connection_actor& conn);

  // The queues end with the directory (they are not linked to it: a queue
  // ended with its service must not take the directory along).
  ~directory_state() {
    for (auto& [name, rec] : services)
      caf::anon_send_exit(rec.queue, caf::exit_reason::user_shutdown);
  }
};

/// runtimeId -> runtime_connection, in registration order. As in Genkit, the
/// last entry is the "most recent" runtime. Every change is published to
/// `board` (routing.hpp), where the front doors route calls from. An id cannot be taken over: a
/// register of an id held by another connection asks that connection first
/// ((probe_atom) -> bool: a WebSocket ping, 2 s deadline); if the holder
/// answers, the claimant is refused; if not (a dead link the runtime
/// reconnected around), the holder is dropped and the claimant gets the id in
/// place. Also indexes bidi runs by trace id for the HTTP front door.
///
/// - (register_atom, registration, conn) -> (bool ok, string why, queue): add, or
///   update the info for the same conn, or take over as above; monitors conn.
///   Runtimes registered under one name are the replicas of a service;
///   `queue` is the service's queue when it has a cap (service_queue.hpp)
/// - (limits_atom, service_limits): the admission settings (caps, queues)
/// - (services_atom) -> string: GET /api/services, each service with its replicas
/// - (deregister_atom, id, conn): remove if conn still owns the id
/// - (list_atom) -> string: JSON array of RuntimeInfo
/// - (bidi_open_atom, trace, call), (bidi_close_atom, trace): monitors the
///   call's own actor, or for the gateway's calls the opener (an http_caller)
/// - (bidi_find_atom, trace) -> (bool, call)
/// - (watch_atom, id, watcher): the watcher gets (ready_atom, id) whenever id
///   registers (at once if it is registered) and (unready_atom, id) when it
///   goes away
/// - (drain_atom) -> vector<connection_actor>: the registered runtimes' connections
/// - In a cluster: (cluster_atom, cluster_node, gateway, node_name) joins it (local
///   changes then go to the cluster node as (local_up_atom, id, info, conn) /
///   (local_down_atom, id)); the cluster node feeds the other nodes'
///   runtimes as (remote_up_atom, node, id, info, conn), (remote_down_atom,
///   node, id), (node_lost_atom, node). Listings then carry each runtime's
///   `node` and `qualifiedId` (`node/id`, routed to exactly that runtime
///   when several nodes hold the id; routing.hpp).
/// - (subscribe_atom, listener): the listener gets (changed_atom, "runtimes")
///   whenever the listing changes (it asks for the new one with list_atom)
/// - (flush_atom): its own: publish the routes a burst of changes left stale
///
/// Routes are rebuilt whole (an immutable table every door reads), so a
/// fleet registering or dropping at once must not rebuild them per runtime:
/// a change with more messages waiting in the mailbox, or soon after the
/// last rebuild (a few times its cost), only marks the routes stale and sends
/// (flush_atom) behind them, or after the spacing. Watchers, the cluster node and
/// listeners hear of changes after the routes carry them, in order; a listing
/// or a watch asked meanwhile publishes first, so nothing a caller can learn
/// of is missing from the routes.
///
/// `failover_hold`: the runtimes (and services) of a node that is lost are
/// published as moving for this long (routing.hpp), so calls for them wait
/// in the failover hold while they register at another node.
directory_actor::behavior_type
runtime_directory(directory_actor::stateful_pointer<directory_state> self, route_board_ptr board,
                  std::chrono::milliseconds failover_hold);

} // namespace actor_host
