#pragma once

#include "actions/run_deadline.hpp"
#include "proc/unique_fd.hpp"

#include <cstddef>
#include <memory>

namespace actor_host::actions {

class cancel_signal;
class slot_pool;

/// A taken slot; returned when the run ends, however it ends. Empty when
/// the wait for a slot ended without one.
class slot_lease {
public:
  slot_lease() = default;
  explicit slot_lease(std::shared_ptr<slot_pool> pool) : pool_(std::move(pool)) {
  }
  slot_lease(slot_lease&&) = default;
  slot_lease& operator=(slot_lease&&) = default;
  ~slot_lease();

  explicit operator bool() const noexcept {
    return pool_ != nullptr;
  }

private:
  std::shared_ptr<slot_pool> pool_;
};

/// The runs of one program action that may execute at once
/// (maxConcurrency). A counting semaphore on an eventfd in semaphore mode: a
/// read takes one slot, a write returns one. Being a file descriptor, a
/// waiter can poll it together with the cancel fd and the deadline instead
/// of blocking blind. Shared by every copy of the action's handler.
class slot_pool : public std::enable_shared_from_this<slot_pool> {
public:
  explicit slot_pool(std::size_t slots);

  /// Waits for a free slot. Returns an empty lease once `cancel` is set or
  /// `deadline` has passed, whichever the caller then reports. No fairness
  /// between waiters.
  slot_lease acquire(const cancel_signal& cancel, run_deadline deadline);

  bool try_acquire() noexcept;
  void release() noexcept;

private:
  proc::unique_fd fd_;
};

} // namespace actor_host::actions
