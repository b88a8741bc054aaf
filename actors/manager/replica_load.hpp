#pragma once

#include <caf/allowed_unsafe_message_type.hpp>

#include <atomic>
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
  std::atomic<std::int32_t> in_flight{0};

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
};

using replica_load_ptr = std::shared_ptr<replica_load>;

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::replica_load_ptr)
