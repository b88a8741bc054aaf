#pragma once

#include <caf/allowed_unsafe_message_type.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace actor_host {

/// One runtime's calls in flight, read by the front doors at every call to
/// balance a service's replicas (routing.hpp) and kept by the runtime's
/// connection. A call routed to the runtime is counted by the door that
/// routed it, before the hand-off (so a burst of calls routed at once sees
/// its own earlier picks, and a cap holds exactly); one that arrives
/// otherwise (from another cluster node) is counted by the connection when
/// it takes it; the connection takes every call off when it ends.
struct replica_load {
  using clock = std::chrono::steady_clock;

  /// Outlier detection (as Envoy's consecutive-failure ejection): after
  /// this many calls in a row end UNAVAILABLE, INTERNAL or DEADLINE_EXCEEDED
  /// the replica gets no balanced calls for base_ejection times the number of
  /// its ejections in a row (at most max_ejection). Then it is back; its next
  /// call is the trial: a success clears the record, a failure ejects it
  /// again, for longer.
  static constexpr std::int32_t failures_to_eject = 5;
  static constexpr std::chrono::seconds base_ejection{10};
  static constexpr std::chrono::seconds max_ejection{300};

  std::atomic<std::int32_t> in_flight{0};
  std::atomic<std::int32_t> failures_in_row{0};
  std::atomic<std::int32_t> ejections_in_row{0};
  std::atomic<clock::rep> ejected_until{0}; // clock ticks; 0 = never ejected
  // Taken out of rotation for a rolling restart: its calls end, no new
  // balanced call comes (rolling_restart.hpp).
  std::atomic<bool> draining{false};
  // Another node's replica: the calls its node last reported it holds from
  // every caller (a heartbeat's figure, cluster_node); 0 for this node's.
  std::atomic<std::int32_t> reported{0};

  /// Counts one more call unless `cap` (0 = none) is reached.
  bool try_reserve(std::int32_t cap) noexcept {
    if (cap <= 0) {
      in_flight.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    auto cur = in_flight.load(std::memory_order_relaxed);
    while (cur < cap)
      if (in_flight.compare_exchange_weak(cur, cur + 1, std::memory_order_relaxed))
        return true;
    return false;
  }

  void release(std::int32_t n = 1) noexcept {
    in_flight.fetch_sub(n, std::memory_order_relaxed);
  }

  std::int32_t current() const noexcept {
    return in_flight.load(std::memory_order_relaxed);
  }

  /// What balancing compares: the calls counted here, or for another
  /// node's replica the larger of those and its node's last report (which
  /// counts every node's calls, but up to a heartbeat old).
  std::int32_t balance_figure() const noexcept {
    return std::max(current(), reported.load(std::memory_order_relaxed));
  }

  bool ejected(clock::time_point now) const noexcept {
    return ejected_until.load(std::memory_order_relaxed) > now.time_since_epoch().count();
  }

  /// Cheap test first: may this replica be out of rotation (ejected or
  /// draining)? Only then is the clock read.
  bool maybe_out() const noexcept {
    return draining.load(std::memory_order_relaxed)
           || ejected_until.load(std::memory_order_relaxed) != 0;
  }

  bool out_of_rotation(clock::time_point now) const noexcept {
    return draining.load(std::memory_order_relaxed) || ejected(now);
  }

  /// Records how a call ended; returns how long the replica is now ejected
  /// for (zero: it was not).
  std::chrono::seconds record(bool failed, clock::time_point now) noexcept {
    if (!failed) {
      failures_in_row.store(0, std::memory_order_relaxed);
      ejections_in_row.store(0, std::memory_order_relaxed);
      return std::chrono::seconds{0};
    }
    if (failures_in_row.fetch_add(1, std::memory_order_relaxed) + 1 < failures_to_eject
        || ejected(now))
      return std::chrono::seconds{0};
    auto k = ejections_in_row.fetch_add(1, std::memory_order_relaxed) + 1;
    auto span = std::min<std::chrono::seconds>(base_ejection * k, max_ejection);
    ejected_until.store((now + span).time_since_epoch().count(), std::memory_order_relaxed);
    return span;
  }
};

using replica_load_ptr = std::shared_ptr<replica_load>;

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::replica_load_ptr)
