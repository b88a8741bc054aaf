#pragma once

#include <string>

namespace actor_host {

namespace net {
struct socket_counters;
}

/// GET /metrics: the Prometheus text exposition of the manager (process-wide
/// metrics, live actors by kind, and both listeners' socket counters).
std::string metrics_page(const net::socket_counters& reflection, const net::socket_counters& api,
                         const net::socket_counters& worker);

} // namespace actor_host
