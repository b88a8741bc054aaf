#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/children/rolling_restart.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"

#include <chrono>
#include <string>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace actor_host {

struct supervisor_config {
  /// (stop_atom): how long calls in flight may finish before they are cancelled.
  caf::timespan drain_timeout{std::chrono::seconds(15)};
  /// How long a service may take to stop (its own SIGKILL escalation included).
  caf::timespan service_stop_timeout{std::chrono::minutes(2)};
  /// In a cluster: "" once joined, else why not ready (cluster_board).
  std::function<std::string()> cluster_readiness;
  /// (drain_atom) from the API: ends the process as SIGTERM does (main's
  /// latch). Unset: the API cannot drain this manager.
  std::function<void()> request_stop;
  /// How the drain's answer names this manager ("node a", "the manager").
  std::string who = "the manager";
  /// In a cluster: how long the drain waits, once the other nodes were told
  /// this one leaves, for the calls they routed here before they heard it.
  caf::timespan leave_settle{0};
};

struct supervisor_state {
  live_count live{actor_kind::manager_supervisor};
  supervisor_config cfg;
  std::unordered_map<caf::actor_addr, caf::actor> children;
  caf::response_promise shutdown_done; // (shutdown_atom)'s, until the last child is down
  caf::response_promise drained;       // (stop_atom)'s, while leave_settle runs
  // What /readyz reports and a drain needs. The lifecycle itself is the
  // behavior: starting, serving, draining, stopping (manager_supervisor.cpp).
  directory_actor directory;
  std::vector<std::string> service_ids;           // must register to be ready
  std::unordered_set<std::string> registered_ids; // of service_ids
  std::vector<caf::actor> services;               // child_runtime actors
  std::vector<restart_step> replicas;             // each registering child, by service
  std::vector<std::string> replica_services;      // the service of each of `replicas`
  static inline const char* name = "manager_supervisor";
};

/// Root of the manager's tree and owner of its lifecycle: readiness, the
/// drain and the shutdown are its behavior, not process-wide flags.
/// Watches every actor the manager spawns (directory, connections, callers,
/// services) and takes them down on shutdown.
///
/// - (adopt_atom, child): monitor it; a stopping supervisor kills it at once
/// - (serving_atom, directory, service_ids, services, replicas, replica_services):
///   the listeners are up; ready once every id in service_ids is registered
///   (watched at the directory). `replicas` are the registering children
///   with their runtime ids, replica_services[i] the service of replicas[i]
///   (host.yaml replicas share one)
/// - (restart_atom, service) -> string: a rolling restart of the service's
///   children (rolling_restart.hpp)
/// - (reload_atom, steps): host.yaml was read again (SIGHUP) and these
///   children's specs changed: each service's restarted one at a time with
///   its new spec (rolling_restart.hpp), as `restart` does
/// - (readiness_atom) -> string: "" when ready, else why not ("not
///   listening", "draining", "1 of 2 configured services registered")
/// - (stop_atom, signal) -> ok: the drain: not ready any more; calls in
///   flight may finish for cfg.drain_timeout, the rest are cancelled (their
///   callers get CANCELLED); then the runtimes' links close with 1012
///   (service restart: those given other managers register there at once)
///   and every service is stopped with `signal`
/// - (drain_atom) -> string: `actor-host drain`: cfg.request_stop(), which
///   ends in (stop_atom, SIGTERM) as a signal does; answers at once
/// - (shutdown_atom) -> ok: kills every child, answers after the last is down
caf::behavior manager_supervisor(caf::stateful_actor<supervisor_state>* self,
                                 supervisor_config cfg);

} // namespace actor_host
