#pragma once

#include <atomic>
#include <cstddef>
#include <limits>

namespace actor_host::net {

/// The accepted connections the whole process may hold open, shared by all
/// its listeners. Each listener also has its own max_connections; this one
/// stands for the process's file descriptors, which one busy listener may
/// use up to the end (10,000 runtimes on the reflection port) while the
/// others are idle, instead of each listener being fitted to a fixed share.
/// Thread-safe: listeners accept on several I/O threads.
class connection_budget {
public:
  static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

  explicit connection_budget(std::size_t limit = unlimited) : limit_(limit) {
  }
  connection_budget(const connection_budget&) = delete;
  connection_budget& operator=(const connection_budget&) = delete;

  /// A new limit applies to the next acquire; connections already open over
  /// it stay open.
  void set_limit(std::size_t n) {
    limit_.store(n, std::memory_order_relaxed);
  }
  std::size_t limit() const {
    return limit_.load(std::memory_order_relaxed);
  }
  std::size_t in_use() const {
    return used_.load(std::memory_order_relaxed);
  }

  /// Takes one slot, or nothing (false) when all are in use. Compare-and-swap
  /// rather than add-then-undo, so that a burst at the limit never refuses a
  /// connection there was room for.
  bool try_acquire() {
    auto cur = used_.load(std::memory_order_relaxed);
    do {
      if (cur >= limit_.load(std::memory_order_relaxed))
        return false;
    } while (!used_.compare_exchange_weak(cur, cur + 1, std::memory_order_relaxed));
    return true;
  }

  /// Gives back a slot taken by try_acquire.
  void release() {
    used_.fetch_sub(1, std::memory_order_relaxed);
  }

private:
  std::atomic<std::size_t> limit_;
  std::atomic<std::size_t> used_{0};
};

} // namespace actor_host::net
