#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/common/messages.hpp"

#include <algorithm>
#include <chrono>

namespace actor_host {

/// A call a call target holds before it hands it on (a service's queue, the
/// failover hold): the door's hand-off is answered through `answer`, with
/// the call_handle once a connection took it, or a refusal.
struct waiting_call {
  call_request req;
  caller_actor caller;
  caf::response_promise answer;
  std::chrono::steady_clock::time_point since;
  std::chrono::steady_clock::time_point deadline; // max(): none
};

/// Arms `self`'s (expired_atom) wake-up for the earliest deadline among
/// `calls`, unless one is armed for then or earlier (`wake_at`; max(): none,
/// reset by the wake-up's handler). A wake-up armed for later, or for a call
/// handed on early, finds nothing due when it comes.
template <class Self, class Calls>
void arm_deadline_wake(Self* self, const Calls& calls,
                       std::chrono::steady_clock::time_point& wake_at) {
  using clock = std::chrono::steady_clock;
  auto next = clock::time_point::max();
  for (auto& w : calls)
    next = std::min(next, w.deadline);
  if (next >= wake_at)
    return;
  wake_at = next;
  auto in = std::max(next - self->clock().now(), clock::duration::zero());
  self->delayed_send(self, std::chrono::duration_cast<caf::timespan>(in), expired_atom_v);
}

/// Takes the calls whose deadline is `now` or earlier out of `calls`, in
/// order, and hands each to `give_up(call)`.
template <class Calls, class F>
void take_due(Calls& calls, std::chrono::steady_clock::time_point now, F give_up) {
  for (auto i = calls.begin(); i != calls.end();) {
    if (i->deadline > now) {
      ++i;
      continue;
    }
    auto due = std::move(*i);
    i = calls.erase(i);
    give_up(due);
  }
}

} // namespace actor_host
