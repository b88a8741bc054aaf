#pragma once

#include <atomic>
#include <memory>

namespace actor_host {

/// Where one actor publishes a value that many threads read on every call
/// (routes, the cluster view): the owner swaps in a new immutable snapshot
/// whole, readers take the current one without a round trip to the owner
/// (as Envoy's thread-local cluster maps do).
template <class T>
class snapshot_board {
public:
  snapshot_board() : current_(std::make_shared<const T>()) {
  }

  std::shared_ptr<const T> current() const {
    return current_.load(std::memory_order_acquire);
  }

  /// The owning actor only.
  void publish(T value) {
    current_.store(std::make_shared<const T>(std::move(value)), std::memory_order_release);
  }

private:
  std::atomic<std::shared_ptr<const T>> current_;
};

} // namespace actor_host
