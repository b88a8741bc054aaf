#pragma once

#include "actors/manager/manager_config.hpp"
#include "net/http_exchange.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <string>

namespace actor_host {

struct http_api_context {
  caf::actor_system* system = nullptr;
  caf::actor* directory = nullptr; // owned by the manager component
  call_policy policy;
  std::function<std::string()> stats_json;
  std::function<std::string()> metrics_text;      // GET /metrics
  std::function<std::string()> not_ready_reason;  // GET /readyz; "" = ready
};

/// The front door's HTTP routes (shapes of the Genkit Dev UI server). Cheap
/// routes are answered on the I/O thread; everything that talks to a runtime
/// gets a short-lived caller actor of its own.
net::http_handler make_http_api(http_api_context ctx);

} // namespace actor_host
