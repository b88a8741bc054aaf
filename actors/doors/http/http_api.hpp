#pragma once

#include "ui/asset_dir.hpp"

#include "actors/dispatch/call_path.hpp"
#include "actors/doors/http/http_run_hub.hpp"
#include "net/http_exchange.hpp"

#include <functional>
#include <string>

namespace actor_host {

struct http_api_context {
  caf::actor_system* system = nullptr;
  front_door door;
  caf::actor supervisor; // adopts every HTTP caller, answers GET /readyz
  std::function<std::string()> stats_json;
  std::function<std::string()> metrics_text;      // GET /metrics
  caf::actor traces; // trace_keeper: /api/traces (trace_routes.hpp); null = no trace store
  std::shared_ptr<const ui::asset_dir> ui_assets; // --ui-assets: served at /; null = the dashboard
  /// runAction's hubs (http_run_hub.hpp); null: a caller actor per request
  /// for these too.
  std::shared_ptr<http_run_starter> runs;
};

/// The front door's HTTP routes (shapes of the Genkit Dev UI server). Cheap
/// routes are answered on the I/O thread; runAction goes to one of the hubs
/// (`runs`); everything else that talks to a runtime gets a caller actor of
/// its own (http_caller), adopted by the supervisor.
net::http_handler make_http_api(http_api_context ctx);

} // namespace actor_host
