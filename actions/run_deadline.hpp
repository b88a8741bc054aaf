#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <optional>

namespace actor_host::actions {

/// When a program run must be over (timeout, kill grace); nullopt = never.
/// The waits of a run are poll() calls, so the deadline is kept as an
/// absolute time and turned into a poll() timeout at each call.
using run_deadline = std::optional<std::chrono::steady_clock::time_point>;

/// Milliseconds until `deadline` for poll(), rounded up; -1 without one.
inline int poll_timeout(run_deadline deadline) {
  if (!deadline)
    return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline
                                                           - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT_MAX));
}

inline bool passed(run_deadline deadline) {
  return deadline && std::chrono::steady_clock::now() >= *deadline;
}

} // namespace actor_host::actions
