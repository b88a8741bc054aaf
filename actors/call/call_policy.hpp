#pragma once

#include <caf/timespan.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host {

/// Call policy of the manager, shared by every caller session.
struct call_policy {
  caf::timespan request_timeout{std::chrono::seconds(30)}; // listActions, listValues, cancelAction
  // runAction when the call names no timeoutMs; 0 = none. A run on a
  // runtime that never answers must end some day; 5 min, like iii invocations.
  caf::timespan run_timeout{std::chrono::minutes(5)};
  // Calls in flight per caller: per /api/ws session, and per peer address
  // for plain HTTP (see http_api). 0 = no cap.
  std::size_t max_calls_per_caller = 1024;
  // Bidi input held per run before the runtime reports it started; 0 = no cap.
  std::size_t max_bidi_input_bytes = 16u << 20;
  // Frames read from a socket and not yet processed by its actor before the
  // socket stops being read; 0 = no limit.
  std::size_t max_unread_frames = 256;
  // Actions safe to run twice (retry_idempotent: keys, or prefixes ending
  // in '*'): a balanced run of one that ends UNAVAILABLE before any chunk
  // reached its caller is run once more on another replica.
  std::vector<std::string> idempotent_actions;

  bool idempotent(std::string_view key) const {
    for (auto& k : idempotent_actions)
      if (k.ends_with('*') ? key.starts_with(std::string_view{k}.substr(0, k.size() - 1))
                           : key == k)
        return true;
    return false;
  }
};

/// Admission per service (docs/API.md, "Services and replicas"): calls in
/// flight per replica, and calls waiting for room per service.
struct service_limits {
  std::int32_t max_in_flight_per_runtime = 0; // 0 = no cap
  std::size_t max_queued_per_service = 1000;  // past it: RESOURCE_EXHAUSTED at once
  std::map<std::string, std::int32_t> per_service; // cap overrides by service name
  // Runtime ids that are replicas of a service whatever name they register
  // with (host.yaml `replicas: N`: ids <service>-1..N).
  std::map<std::string, std::string> service_of_id;

  std::int32_t cap_of(const std::string& service) const {
    auto i = per_service.find(service);
    return i == per_service.end() ? max_in_flight_per_runtime : i->second;
  }
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
