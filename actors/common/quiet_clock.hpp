#pragma once

#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_set>

namespace actor_host {

/// CAF 0.17's clock, minus one wake-up per actor. `local_actor::cleanup`
/// tells the clock to cancel the timeouts of every actor that terminates,
/// which queues a command and wakes the clock thread: with one
/// pending_request (or http_caller) per call, a third of the futex calls at
/// one call in flight were that thread's (bench/ANALYSIS.md). Most of those
/// actors never set a timeout; this clock remembers the ones that did (by
/// actor id, which CAF never reuses) and lets the others' cancellation go.
/// Delayed messages are not timeouts: cancel_timeouts never touched them.
class quiet_clock : public caf::detail::thread_safe_actor_clock {
public:
  using super = caf::detail::thread_safe_actor_clock;

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override;
  void cancel_timeouts(caf::abstract_actor* self) override;

  /// Terminations passed on to the clock thread, and those it never heard of.
  std::uint64_t cancellations_forwarded() const {
    return forwarded_.load(std::memory_order_relaxed);
  }
  std::uint64_t cancellations_skipped() const {
    return skipped_.load(std::memory_order_relaxed);
  }
  /// Live actors that have set a timeout at some point.
  std::size_t timed_actors() const;

private:
  void remember(caf::abstract_actor* self);

  mutable std::mutex mtx_;
  std::unordered_set<caf::actor_id> timed_;
  std::atomic<std::uint64_t> forwarded_{0};
  std::atomic<std::uint64_t> skipped_{0};
};

/// Makes `cfg`'s actor system schedule with CAF's own coordinator for the
/// configured `scheduler.policy` (sharing or stealing), on a quiet_clock.
/// Leaves the choice to CAF when profiling or the test coordinator is asked
/// for.
void use_quiet_clock(caf::actor_system_config& cfg);

/// The system's clock if it is a quiet_clock, else null.
quiet_clock* quiet_clock_of(caf::actor_system& sys);

} // namespace actor_host
