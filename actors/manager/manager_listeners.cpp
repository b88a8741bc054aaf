#include "actors/manager/manager_impl.hpp"

// The manager's listeners (manager::start's steps for them): the API, the
// reflection port runtimes dial, the worker ports.

namespace actor_host {

namespace {

/// `/otel` on the worker port: the iii SDK's OpenTelemetry socket. Accepted
/// so the SDK does not reconnect forever; frames are counted and dropped
/// (no telemetry sink is configured).
class otel_sink : public net::frame_handler {
public:
  void on_text(std::string) override {
    // The engine ignores text frames here too.
  }
  bool on_binary(std::string_view) override {
    obs::global().otel_frames.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void on_closed(std::string) override {
  }
};

} // namespace

std::string manager::impl::start_api(std::function<std::string()> stats) {
  const std::string http = tls ? "https" : "http";
  http_api_context api_ctx{
    .system = &sys,
    .door = door,
    .supervisor = supervisor,
    .stats_json = std::move(stats),
    .metrics_text =
      [this] {
        return obs::metrics_page(live_actor_snapshot(),
                                 {{"reflection", &reflection.counters()},
                                  {"api", &api.counters()},
                                  {"worker", &workers.counters()},
                                  {"rbac_worker", &rbac_workers.counters()}});
      },
    .traces = traces,
    .ui_assets = nullptr,
    .runs = nullptr,
  };
  // runAction's callers: one hub per scheduler thread, as the gRPC door's.
  std::vector<http_run_hub_actor> run_hubs;
  auto hubs = std::max<std::size_t>(2, sys.scheduler().num_workers());
  for (std::size_t i = 0; i < hubs; ++i)
    run_hubs.push_back(spawn_child(http_run_hub, door));
  api_ctx.runs = std::make_shared<http_run_starter>(std::move(run_hubs));
  if (!opts.ui_assets.empty()) {
    std::string err;
    api_ctx.ui_assets = ui::asset_dir::load(opts.ui_assets, err);
    if (!api_ctx.ui_assets)
      return "ui assets: " + err;
    spdlog::info("Serving the web app in {} at / ({} files); the dashboard is at /ui/index.html",
                 opts.ui_assets, api_ctx.ui_assets->size());
  }
  api.on_http(make_http_api(std::move(api_ctx)));
  if (auto err = api.listen(); !err.empty())
    return "API server: " + err;
  // Genkit's exporter sends no header: with a token configured, the base
  // URL runtimes are told carries it in its path (/t/<token>, taken for the
  // trace routes only), as the URLs they dial carry it in their query.
  if (traces) {
    telemetry_url = telemetry_shown = http + "://localhost:" + std::to_string(api.port());
    if (!opts.auth_token.empty()) {
      if (net::token_fits_path(opts.auth_token)) {
        telemetry_url += std::string{net::token_path_prefix} + opts.auth_token;
        telemetry_shown += std::string{net::token_path_prefix} + "<token>";
      } else {
        telemetry_url.clear();
        telemetry_shown = "not advertised: the token has characters a URL path cannot carry "
                          "as they are (use letters, digits and . _ ~ + = -)";
      }
    }
  }
  return {};
}

std::string manager::impl::start_reflection() {
  const std::string ws = tls ? "wss" : "ws";
  if (auto err = reflection.listen(); !err.empty())
    return "reflection server: " + err;
  runtime_links = connection_options{
    .reflection_url = ws + "://localhost:" + std::to_string(reflection.port()),
    .max_bidi_input_bytes = opts.policy.max_bidi_input_bytes,
    .telemetry_url = telemetry_url,
    .protocol = "",
    .traces = route_spans,
    .node = opts.cluster ? opts.cluster->node_name : "",
    .learn_actions = true,
    .max_frame_bytes = opts.max_frame_bytes,
    .peer_manager_urls = nullptr,
    .splices = nullptr, // each socket's own, set where its connection is made
  };
  if (opts.cluster) {
    // The runtimes reach this node where the other nodes do, at the
    // reflection port; the register answer lists the other nodes' URLs.
    auto host = cluster_advertise.substr(0, cluster_advertise.rfind(':'));
    caf::anon_send(cluster, listening_atom_v, cluster_advertise,
                   ws + "://" + host + ":" + std::to_string(reflection.port()));
    runtime_links.peer_manager_urls = [view = cluster_view] {
      return view->current()->peer_reflection_urls;
    };
  }
  // Every socket that feeds an actor gets a read window (max_unread_frames).
  auto unread = opts.policy.max_unread_frames;
  // One copy of the options for every runtime's connection.
  auto conn_opts = std::make_shared<const connection_options>(runtime_links);
  reflection.on_websocket("", [spawn = spawner(), dir = directory, conn_opts,
                               unread](net::transport_ptr t) -> net::frame_handler_ptr {
    t = with_read_window(std::move(t), unread);
    auto tap = std::make_shared<stream_splices>();
    auto a = spawn(runtime_connection, t, dir, connection_setup{conn_opts, tap});
    // One answer over the frame cap fails its call, not the link.
    auto oversized = [a](std::string head, std::string tail, std::uint64_t size) {
      caf::anon_send(a, oversized_atom_v, std::move(head), std::move(tail), size);
    };
    return std::make_shared<frame_bridge>(std::move(a), std::move(t), std::move(oversized),
                                          std::move(tap));
  }, net::server::upgrade_reads::in_factory); // a runtime's link never reads it
  api.on_websocket("/api/ws", [spawn = spawner(), door = door,
                               unread](net::transport_ptr t) -> net::frame_handler_ptr {
    t = with_read_window(std::move(t), unread);
    auto a = spawn(api_session, t, door);
    return std::make_shared<frame_bridge>(std::move(a), std::move(t));
  });
  return {};
}

std::string manager::impl::start_workers() {
  worker_options wopts;
  if (opts.policy.run_timeout.count() > 0)
    wopts.invocation_timeout = opts.policy.run_timeout;
  auto unread = opts.policy.max_unread_frames;
  auto serve_workers = [this, unread](net::server& srv, worker_options o) {
    srv.on_websocket("/", [spawn = spawner(), door = door, registry = functions, o,
                           unread](net::transport_ptr t) -> net::frame_handler_ptr {
      t = with_read_window(std::move(t), unread);
      auto a = spawn(worker_connection, t, registry, door, o);
      return std::make_shared<frame_bridge>(std::move(a), std::move(t));
    });
    srv.on_websocket("/otel", [](net::transport_ptr) -> net::frame_handler_ptr {
      return std::make_shared<otel_sink>();
    });
    // Streaming channels: the id and key are checked before the upgrade.
    srv.on_websocket_prefix(std::string{channel_path_prefix}, check_channel_upgrade,
                            open_channel_end);
  };
  serve_workers(workers, wopts);
  if (auto err = workers.listen(); !err.empty())
    return "worker endpoint: " + err;
  if (opts.worker_rbac_port) {
    auto ropts = wopts;
    ropts.rbac = std::make_shared<const registry::worker_rbac_config>(opts.rbac);
    serve_workers(rbac_workers, ropts);
    if (auto err = rbac_workers.listen(); !err.empty())
      return "worker endpoint (RBAC): " + err;
  }
  return {};
}

void manager::impl::log_endpoints() const {
  const std::string ws = tls ? "wss" : "ws";
  const std::string http = tls ? "https" : "http";
  if (tls)
    spdlog::info("TLS on every listener: certificate {}, client certificates {}",
                 tls->files().cert_file,
                 tls->verifies_clients()          ? "required (" + tls->files().client_ca_file + ")"
                 : tls->files().skip_client_verify ? std::string{"requested, not verified"}
                                                   : std::string{"not requested"});
  spdlog::info("Starting reflection server: {}://localhost:{}", ws, reflection.port());
  spdlog::info("Starting API server: {}://localhost:{}", http, api.port());
  spdlog::info("Dashboard: {}://localhost:{}/", http, api.port());
  if (traces)
    spdlog::info("Trace store: {} (telemetry server {})", opts.trace_store, telemetry_shown);
  spdlog::info("Starting worker endpoint: {}://localhost:{}", ws, workers.port());
  if (opts.worker_rbac_port)
    spdlog::info("Starting worker endpoint (RBAC): {}://localhost:{}", ws, rbac_workers.port());
}

} // namespace actor_host
