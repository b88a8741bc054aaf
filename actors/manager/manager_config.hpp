#pragma once

#include <caf/timespan.hpp>

#include <chrono>
#include <cstddef>

namespace actor_host {

/// Call policy of the manager, shared by every caller session.
struct call_policy {
  caf::timespan request_timeout{std::chrono::seconds(30)}; // listActions, listValues, cancelAction
  caf::timespan run_timeout{0};                            // runAction; 0 = none
};

/// Caps beyond the engine's frame count (settings max_channel_bytes,
/// max_channels_per_worker): 1024 frames of 1 MiB would be 1 GiB held for a
/// reader that never comes. 0 = no cap.
struct channel_limits {
  /// Bytes a channel holds for its reader: the writer is paused there, and
  /// the channel ends (1008 "channel buffer full") past twice as many.
  std::size_t max_bytes = 8 * 1024 * 1024;
  /// Open channels one worker connection may own; more are refused.
  std::size_t max_per_worker = 64;
};

} // namespace actor_host
