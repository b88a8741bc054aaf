#pragma once

#include "actions/action.hpp"
#include "proc/event_fd.hpp"

#include <atomic>
#include <chrono>

namespace actor_host::actions {

/// The cancel_signal of one run, set by the runtime (cancelAction, or the
/// run abandoned). Backed by an eventfd: readable once cancelled, so
/// handlers can poll() it next to their own descriptors.
class cancel_flag : public cancel_signal {
public:
  cancel_flag() = default;
  cancel_flag(const cancel_flag&) = delete;
  cancel_flag& operator=(const cancel_flag&) = delete;

  /// Thread-safe, idempotent.
  void trigger();

  bool cancelled() const override;
  bool wait_for(std::chrono::milliseconds d) const override;
  int fd() const override;

private:
  std::atomic<bool> cancelled_{false};
  proc::event_fd fd_;
};

} // namespace actor_host::actions
