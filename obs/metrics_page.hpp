#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace actor_host::net {
struct socket_counters;
}

namespace actor_host::obs {

/// What only the actor layer knows (live actors, registered runtimes),
/// taken by the manager when the page is asked for.
struct actor_snapshot {
  std::vector<std::pair<std::string, std::int64_t>> live_by_kind; // kind name -> live actors
  std::int64_t runtimes_registered = 0;

  std::int64_t live(std::string_view kind) const;
};

/// One listener's socket counters, labelled `listener="<name>"`.
struct listener_counters {
  const char* name;
  const net::socket_counters* counters;
};

/// GET /metrics: the Prometheus text exposition of the manager: the
/// process-wide metrics (obs::global()), live actors by kind, and each
/// listener's socket counters.
std::string metrics_page(const actor_snapshot& actors,
                         std::initializer_list<listener_counters> listeners);

} // namespace actor_host::obs
