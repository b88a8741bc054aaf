#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/call/waiting_call.hpp"
#include "actors/common/messages.hpp"

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>

namespace actor_host {

struct front_door;

/// The failover hold: takes calls as a connection does (call_target_actor),
/// told (changed_atom, topic) whenever the routes change (a directory
/// listener) and its own deadline wake-up.
using failover_hold_actor = call_target_actor::extend<caf::reacts_to<changed_atom, std::string>,
                                                      caf::reacts_to<expired_atom>>;

struct failover_hold_limits {
  std::size_t max_calls = 10000;          // held at once; more fail at once
  std::size_t max_bytes = 64u << 20;      // of their params together
};

struct failover_hold_state {
  std::deque<waiting_call> calls; // oldest first
  std::size_t bytes = 0;
  // When the armed wake-up fires; max(): none armed.
  std::chrono::steady_clock::time_point wake_at = std::chrono::steady_clock::time_point::max();
  static inline const char* name = "failover_hold";
};

/// Calls for a runtime or service that is moving (routing.hpp: its node was
/// lost within the failover hold, so our runtimes given several managers
/// are registering at another node) wait here instead of failing at once.
/// Whenever the routes change the held calls are routed again: one whose
/// runtime is back is handed to it (its deadline runs from when it came),
/// one still moving waits on, one routed nowhere else fails as it would
/// have. A held call ends UNAVAILABLE when the runtime's hold runs out or at
/// its own deadline (DEADLINE_EXCEEDED), whichever comes first. At most
/// `limits` are held (then UNAVAILABLE at once). One per manager; `door`'s
/// own hold is not used (a call is never held twice).
failover_hold_actor::behavior_type
failover_hold(failover_hold_actor::stateful_pointer<failover_hold_state> self, front_door door,
              failover_hold_limits limits);

} // namespace actor_host
