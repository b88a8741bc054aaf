#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/call/routing.hpp"
#include "actors/call/waiting_call.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>

namespace actor_host {

/// A service's queue: takes calls as a connection does (call_target_actor)
/// and hands each to a replica when one has room. Also told when a replica
/// finished a call, and its own deadline wake-up.
using service_queue_actor = call_target_actor::extend_with<slot_listener_actor>::extend<
  caf::reacts_to<expired_atom>>;

struct service_queue_args {
  std::string service;
  std::size_t max_queued = 1000;
  route_board_ptr routes; // where the replicas and their loads are read
  // Calls waiting now, shown by GET /api/services (the directory reads it).
  std::shared_ptr<std::atomic<std::int64_t>> queued;
};

struct service_queue_state {
  live_count live{actor_kind::service_queue};
  service_queue_args args;
  std::deque<waiting_call> calls; // FIFO
  // When the armed wake-up fires; max(): none armed.
  std::chrono::steady_clock::time_point wake_at = std::chrono::steady_clock::time_point::max();
  static inline const char* name = "service_queue";
};

/// The calls a service's replicas have no room for (every one at its cap on
/// calls in flight), first in, first out, at most `max_queued`: past that a
/// call is refused at once with RESOURCE_EXHAUSTED. A waiting call keeps its
/// own deadline (then DEADLINE_EXCEEDED). When a replica finishes a call its
/// connection sends (slot_atom), and the oldest call is handed to a replica
/// with room (routing.hpp, reserve_replica), counted on it as a routed call.
/// Every refusal reaches the door as a call_refusal error (call_path.hpp).
/// Spawned by the runtime directory for each service with a cap while it has
/// replicas; an exit fails the calls still waiting with UNAVAILABLE.
service_queue_actor::behavior_type
service_queue(service_queue_actor::stateful_pointer<service_queue_state> self,
              service_queue_args args);

} // namespace actor_host
