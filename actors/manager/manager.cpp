#include "actors/dispatch/failover_hold.hpp"
#include "actors/manager/manager_impl.hpp"

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

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0')
    return "localhost";
  return buf;
}

std::string host_port(std::string host, std::uint16_t port) {
  if (host.find(':') != std::string::npos)
    host = "[" + host + "]";
  return host + ":" + std::to_string(port);
}

std::string write_env_file(const std::string& path, const std::string& manager_url,
                           const std::string& runtime_id, const std::string& telemetry_url) {
  std::string text;
  for (auto& [k, v] : child_runtime_env(manager_url, runtime_id, telemetry_url))
    if (!v.empty())
      text += k + '=' + v + '\n';
  // The manager URL may carry a token: owner-only, and never through a link.
  if (auto err = proc::write_private_file(path, text); !err.empty())
    return "--write-env-file: " + err;
  spdlog::info("Wrote the runtime environment to {}", path);
  return {};
}

} // namespace

// Publishes this node's cluster_node on the cluster port (CAF's middleman;
// caf-openssl's with the TLS files: peers must then present a certificate of
// the CA, as this node must to them) and feeds it this node's runtimes.
std::string manager::impl::start_cluster() {
  auto& d = *this;
  auto& c = *d.opts.cluster;
  bool tls = !c.tls_cert_file.empty();
  cluster_options co;
  co.node_name = c.node_name;
  co.seeds = c.seeds;
  co.handshake_timeout = std::chrono::duration_cast<caf::timespan>(c.heartbeat_timeout);
  co.tls = tls;
  co.worker_count = [] {
    return static_cast<std::uint64_t>(live_actors(actor_kind::worker_connection));
  };
  d.gateway = spawn_cluster_gateway(d.sys);
  caf::anon_send(d.supervisor, adopt_atom_v, d.gateway);
  cluster_links links;
  links.functions = d.functions;
  links.gateway = d.gateway;
  links.middleman = tls ? caf::actor_cast<caf::actor>(d.sys.openssl_manager().actor_handle())
                        : caf::actor_cast<caf::actor>(d.sys.middleman().actor_handle());
  d.cluster = spawn_cluster_node(d.sys, std::move(co), links,
                                 caf::actor_cast<caf::actor>(d.directory), d.cluster_view);
  caf::anon_send(d.supervisor, adopt_atom_v, d.cluster);
  auto port = tls ? caf::openssl::publish(d.cluster, c.port, c.bind.c_str(), true)
                  : d.sys.middleman().publish(d.cluster, c.port, c.bind.c_str(), true);
  if (!port)
    return "cannot listen on " + host_port(c.bind, c.port) + ": " + d.sys.render(port.error());
  d.cluster_port = *port;
  auto advertise = c.advertise.empty()
                     ? (c.bind == "0.0.0.0" || c.bind == "::" ? host_name() : c.bind)
                     : c.advertise;
  advertise = host_port(advertise, *port);
  // Told once the reflection listener is up (start()): the card carries its URL.
  d.cluster_advertise = advertise;
  caf::anon_send(d.directory, cluster_atom_v, d.cluster, d.gateway, c.node_name);
  caf::anon_send(d.functions, cluster_atom_v, d.cluster, d.gateway, c.node_name);
  std::string seeds;
  for (auto& s : c.seeds)
    seeds += (seeds.empty() ? "" : ",") + s;
  spdlog::info("Cluster node {}: listening on {} (advertised as {}; {}), seeds: {}", c.node_name,
               host_port(c.bind, *port), advertise,
               tls ? "mTLS, peers need a certificate of " + c.tls_ca_file
                   : std::string{"plaintext"},
               seeds.empty() ? std::string{"none"} : seeds);
  return {};
}

manager::manager(caf::actor_system& sys, net::io_runtime& io, manager_options opts)
  : impl_(std::make_unique<impl>(sys, io, std::move(opts))) {
}

manager::~manager() {
  stop();
}

std::string manager::start() {
  auto& d = *impl_;
  if (!d.tls_error.empty())
    return "TLS: " + d.tls_error;
  const std::string ws = d.tls ? "wss" : "ws";
  const std::string http = d.tls ? "https" : "http";
  supervisor_config scfg;
  scfg.drain_timeout = std::chrono::duration_cast<caf::timespan>(d.opts.drain_timeout);
  if (d.opts.cluster) {
    scfg.cluster_readiness = [view = d.cluster_view] { return view->current()->not_ready; };
    scfg.who = "node " + d.opts.cluster->node_name;
    // The leave reaches the others at once; a call they routed here just
    // before arrives within moments.
    scfg.leave_settle = std::chrono::milliseconds(500);
  }
  scfg.request_stop = d.opts.on_drain_request;
  d.supervisor = d.sys.spawn(manager_supervisor, scfg);
  auto routes = std::make_shared<route_board>();
  d.directory = d.spawn_child(runtime_directory, routes,
                              d.opts.cluster ? d.opts.failover_hold : std::chrono::milliseconds{0});
  caf::anon_send(d.directory, limits_atom_v, d.opts.admission);
  d.functions = d.spawn_child(function_registry);
  dashboard_feed_config feed_cfg;
  if (d.opts.cluster)
    feed_cfg.cluster_json = [view = d.cluster_view] { return view->current()->json; };
  auto feed = d.spawn_child(dashboard_feed, std::move(feed_cfg), d.directory, d.functions);
  d.door = front_door{routes, d.directory, d.functions, d.opts.policy,
                      d.opts.cluster ? d.cluster_view : nullptr, feed,
                      std::filesystem::path{d.opts.project_root}.filename().string(),
                      d.supervisor, {}};
  if (d.opts.cluster && d.opts.failover_hold.count() > 0) {
    // Calls for the runtimes of a lost node wait while they move.
    d.door.hold = d.spawn_child(failover_hold, d.door, failover_hold_limits{});
    caf::anon_send(d.directory, subscribe_atom_v, caf::actor_cast<caf::actor>(d.door.hold));
  }
  function_registry_options fopts;
  fopts.channels = d.opts.channels;
  if (d.opts.worker_rbac_port)
    // The front door is no way around RBAC: an anonymous session of the
    // RBAC listener (its exposed functions only).
    fopts.front_door = std::make_shared<const registry::worker_access>(registry::worker_access{
      std::make_shared<const registry::worker_rbac_config>(d.opts.rbac), {}});
  caf::anon_send(d.functions, iii_options_atom_v, std::move(fopts));
  if (auto err = d.start_traces(); !err.empty())
    return err;
  if (d.opts.cluster)
    if (auto err = d.start_cluster(); !err.empty())
      return "cluster: " + err;
  // The API listens first: its URL is the telemetry server runtimes are told of.
  http_api_context api_ctx;
  api_ctx.system = &d.sys;
  api_ctx.door = d.door;
  api_ctx.supervisor = d.supervisor;
  api_ctx.traces = d.traces;
  if (!d.opts.ui_assets.empty()) {
    std::string err;
    api_ctx.ui_assets = ui::asset_dir::load(d.opts.ui_assets, err);
    if (!api_ctx.ui_assets)
      return "ui assets: " + err;
    spdlog::info("Serving the web app in {} at / ({} files); the dashboard is at /ui/index.html",
                 d.opts.ui_assets, api_ctx.ui_assets->size());
  }
  api_ctx.stats_json = [this] { return stats_json(); };
  api_ctx.metrics_text = [&d] {
    return obs::metrics_page(live_actor_snapshot(),
                             {{"reflection", &d.reflection.counters()},
                              {"api", &d.api.counters()},
                              {"worker", &d.workers.counters()},
                              {"rbac_worker", &d.rbac_workers.counters()}});
  };
  d.api.on_http(make_http_api(std::move(api_ctx)));
  if (auto err = d.api.listen(); !err.empty())
    return "API server: " + err;
  // Genkit's exporter sends no header: with a token configured, the base
  // URL runtimes are told carries it in its path (/t/<token>, taken for the
  // trace routes only), as the URLs they dial carry it in their query.
  std::string telemetry_url, telemetry_shown;
  if (d.traces) {
    telemetry_url = telemetry_shown = http + "://localhost:" + std::to_string(d.api.port());
    if (!d.opts.auth_token.empty()) {
      if (net::token_fits_path(d.opts.auth_token)) {
        telemetry_url += std::string{net::token_path_prefix} + d.opts.auth_token;
        telemetry_shown += std::string{net::token_path_prefix} + "<token>";
      } else {
        telemetry_url.clear();
        telemetry_shown = "not advertised: the token has characters a URL path cannot carry "
                          "as they are (use letters, digits and . _ ~ + = -)";
      }
    }
  }
  if (auto err = d.reflection.listen(); !err.empty())
    return "reflection server: " + err;
  connection_options conn_opts{ws + "://localhost:" + std::to_string(d.reflection.port()),
                               d.opts.policy.max_bidi_input_bytes, telemetry_url, "",
                               d.route_spans, d.opts.cluster ? d.opts.cluster->node_name : ""};
  conn_opts.learn_actions = true;
  conn_opts.max_frame_bytes = d.opts.max_frame_bytes;
  if (d.opts.cluster) {
    // The runtimes reach this node where the other nodes do, at the
    // reflection port; the register answer lists the other nodes' URLs.
    auto host = d.cluster_advertise.substr(0, d.cluster_advertise.rfind(':'));
    caf::anon_send(d.cluster, listening_atom_v, d.cluster_advertise,
                   ws + "://" + host + ":" + std::to_string(d.reflection.port()));
    conn_opts.peer_manager_urls = [view = d.cluster_view] {
      return view->current()->peer_reflection_urls;
    };
  }
  // Every socket that feeds an actor gets a read window (max_unread_frames).
  auto unread = d.opts.policy.max_unread_frames;
  d.reflection.on_websocket("", [spawn = d.spawner(), dir = d.directory, conn_opts,
                                 unread](net::transport_ptr t) -> net::frame_handler_ptr {
    t = with_read_window(std::move(t), unread);
    auto a = spawn(runtime_connection, t, dir, conn_opts);
    // One answer over the frame cap fails its call, not the link.
    auto oversized = [a](std::string head, std::string tail, std::uint64_t size) {
      caf::anon_send(a, oversized_atom_v, std::move(head), std::move(tail), size);
    };
    return std::make_shared<frame_bridge>(std::move(a), std::move(t), std::move(oversized));
  });
  d.api.on_websocket("/api/ws", [spawn = d.spawner(), door = d.door,
                                 unread](net::transport_ptr t) -> net::frame_handler_ptr {
    t = with_read_window(std::move(t), unread);
    auto a = spawn(api_session, t, door);
    return std::make_shared<frame_bridge>(std::move(a), std::move(t));
  });
  worker_options wopts;
  if (d.opts.policy.run_timeout.count() > 0)
    wopts.invocation_timeout = d.opts.policy.run_timeout;
  auto serve_workers = [&d, unread](net::server& srv, worker_options o) {
    srv.on_websocket("/", [spawn = d.spawner(), door = d.door, o,
                           unread](net::transport_ptr t) -> net::frame_handler_ptr {
      t = with_read_window(std::move(t), unread);
      auto a = spawn(worker_connection, t, door.functions, door, o);
      return std::make_shared<frame_bridge>(std::move(a), std::move(t));
    });
    srv.on_websocket("/otel", [](net::transport_ptr) -> net::frame_handler_ptr {
      return std::make_shared<otel_sink>();
    });
    // Streaming channels: the id and key are checked before the upgrade.
    srv.on_websocket_prefix(std::string{channel_path_prefix}, check_channel_upgrade,
                            open_channel_end);
  };
  serve_workers(d.workers, wopts);
  if (auto err = d.workers.listen(); !err.empty())
    return "worker endpoint: " + err;
  if (d.opts.worker_rbac_port) {
    auto ropts = wopts;
    ropts.rbac = std::make_shared<const registry::worker_rbac_config>(d.opts.rbac);
    serve_workers(d.rbac_workers, ropts);
    if (auto err = d.rbac_workers.listen(); !err.empty())
      return "worker endpoint (RBAC): " + err;
  }
  if (d.opts.grpc)
    if (auto err = d.start_grpc(); !err.empty())
      return "gRPC front door: " + err;
  // After every listener, so that runtime files cannot point at any of them.
  if (!d.opts.project_root.empty())
    d.start_v1_discovery(conn_opts, telemetry_url);
  if (d.tls)
    spdlog::info("TLS on every listener: certificate {}, client certificates {}",
                 d.tls->files().cert_file,
                 d.tls->verifies_clients()          ? "required (" + d.tls->files().client_ca_file + ")"
                 : d.tls->files().skip_client_verify ? std::string{"requested, not verified"}
                                                     : std::string{"not requested"});
  spdlog::info("Starting reflection server: {}://localhost:{}", ws, d.reflection.port());
  spdlog::info("Starting API server: {}://localhost:{}", http, d.api.port());
  spdlog::info("Dashboard: {}://localhost:{}/", http, d.api.port());
  if (d.traces)
    spdlog::info("Trace store: {} (telemetry server {})", d.opts.trace_store, telemetry_shown);
  spdlog::info("Starting worker endpoint: {}://localhost:{}", ws, d.workers.port());
  if (d.opts.worker_rbac_port)
    spdlog::info("Starting worker endpoint (RBAC): {}://localhost:{}", ws, d.rbac_workers.port());
  auto manager_url = ws + "://localhost:" + std::to_string(d.reflection.port());
  // Children get the token in the URL they dial: Genkit runtimes keep the
  // query of GENKIT_REFLECTION_V2_SERVER, and so does our runtime role.
  if (!d.opts.auth_token.empty())
    manager_url = net::url_with_token(manager_url, d.opts.auth_token);
  if (!d.opts.write_env_file.empty()) {
    auto id = d.opts.services.size() == 1 ? d.opts.services.front().runtime_id : std::string{};
    if (auto err = write_env_file(d.opts.write_env_file, manager_url, id, telemetry_url);
        !err.empty())
      return err;
  }
  std::vector<std::string> service_ids;
  std::vector<caf::actor> services;
  std::vector<restart_step> replicas;
  std::vector<std::string> replica_services;
  for (auto& spec : d.opts.services) {
    child_runtime_args args{spec,        d.directory,           &d.io.context(), manager_url,
                            telemetry_url, d.opts.on_service_exit, d.door.feed};
    services.push_back(d.spawn_child(child_runtime, std::move(args)));
    if (spec.registers) {
      service_ids.push_back(spec.runtime_id);
      replicas.push_back({services.back(), spec.runtime_id, std::nullopt});
      replica_services.push_back(spec.service.empty() ? spec.runtime_id : spec.service);
    }
  }
  {
    std::lock_guard guard{d.reload_mutex}; // a SIGHUP may come at any time
    d.children = services;
  }
  // From here the supervisor answers /readyz and owns the drain.
  caf::anon_send(d.supervisor, serving_atom_v, d.directory, std::move(service_ids),
                 std::move(services), std::move(replicas), std::move(replica_services));
  return {};
}

void manager::stop() {
  stop(SIGTERM);
}

void manager::stop(int stop_signal) {
  auto& d = *impl_;
  if (!d.supervisor)
    return;
  if (d.cluster) {
    // The other nodes drop this one (and its runtimes) at once, not when
    // the link times out.
    caf::anon_send(d.cluster, leave_atom_v, d.opts.cluster->node_name);
    if (d.cluster_port != 0) {
      bool tls = !d.opts.cluster->tls_cert_file.empty();
      if (tls)
        caf::anon_send(d.sys.openssl_manager().actor_handle(), caf::unpublish_atom_v,
                       d.cluster.address(), d.cluster_port);
      else
        caf::anon_send(d.sys.middleman().actor_handle(), caf::unpublish_atom_v,
                       d.cluster.address(), d.cluster_port);
    }
  }
  d.reflection.stop_accepting();
  d.api.stop_accepting();
  d.workers.stop_accepting();
  d.rbac_workers.stop_accepting();
  // In-flight gRPC calls get the drain time, then CANCELLED.
  if (d.grpc)
    d.grpc->shutdown(d.opts.drain_timeout);
  // The drain and the services' stop are the supervisor's; main only waits
  // for its answer (bounded: its own steps all have deadlines).
  caf::scoped_actor self{d.sys};
  auto bound = std::chrono::duration_cast<caf::timespan>(d.opts.drain_timeout)
               + supervisor_config{}.service_stop_timeout + std::chrono::seconds(30);
  self->request(d.supervisor, bound, stop_atom_v, stop_signal)
    .receive([](caf::ok_atom) {},
             [](caf::error& err) {
               spdlog::warn("manager drain incomplete: {}", caf::to_string(err));
             });
  self->request(d.supervisor, std::chrono::seconds(10), shutdown_atom_v)
    .receive([](caf::ok_atom) {},
             [](caf::error& err) {
               spdlog::warn("manager shutdown incomplete: {}", caf::to_string(err));
             });
  d.supervisor = nullptr;
  d.directory = nullptr;
  d.functions = nullptr;
  d.cluster = nullptr;
  d.gateway = nullptr;
  d.traces = nullptr;
  d.route_spans = nullptr;
  d.door = {};
}

std::string manager::reload_tls() {
  auto& m = obs::global();
  if (!impl_->tls)
    return "TLS is not configured";
  if (auto err = impl_->tls->reload(); !err.empty()) {
    m.tls_reload_failures.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("TLS reload failed, keeping the certificates loaded before: {}", err);
    return err;
  }
  m.tls_reloads.fetch_add(1, std::memory_order_relaxed);
  spdlog::info("TLS certificates reloaded from {}; new connections use them",
               impl_->tls->files().cert_file);
  return {};
}

void manager::reload_services(std::vector<config::service_spec> next) {
  auto& d = *impl_;
  std::lock_guard guard{d.reload_mutex};
  if (d.children.size() != d.opts.services.size()) {
    spdlog::warn("services reload ignored: the manager has not started its services");
    return;
  }
  auto plan = config::plan_service_reload(d.opts.services, next);
  for (auto& line : plan.not_applied)
    spdlog::warn("services reload: {}", line);
  std::vector<restart_step> steps;
  for (auto i : plan.changed) {
    auto& spec = *config::find_service(next, d.opts.services[i].name);
    spdlog::info("services reload: service {} changed; restarting it with the new spec",
                 spec.name);
    steps.push_back({d.children[i], spec.runtime_id, spec});
    d.opts.services[i] = spec;
  }
  if (steps.empty()) {
    spdlog::info("services reload: no service changed");
    return;
  }
  caf::anon_send(d.supervisor, reload_atom_v, std::move(steps));
}

std::uint16_t manager::port() const {
  return impl_->reflection.port();
}

std::uint16_t manager::http_port() const {
  return impl_->api.port();
}

std::uint16_t manager::worker_port() const {
  return impl_->workers.port();
}

std::uint16_t manager::worker_rbac_port() const {
  return impl_->opts.worker_rbac_port ? impl_->rbac_workers.port() : 0;
}

std::uint16_t manager::grpc_port() const {
  return impl_->grpc ? impl_->grpc->port() : 0;
}

std::string manager::stats_json() const {
  auto n = [](actor_kind k) { return std::to_string(live_actors(k)); };
  auto& rc = impl_->reflection.counters();
  auto& ac = impl_->api.counters();
  auto& wc = impl_->workers.counters();
  return R"({"actors":{"runtime_directory":)" + n(actor_kind::runtime_directory)
         + R"(,"runtime_connection":)" + n(actor_kind::runtime_connection)
         + R"(,"pending_request":)" + n(actor_kind::pending_request)
         + R"(,"caller_session":)" + n(actor_kind::caller_session)
         + R"(,"function_registry":)" + n(actor_kind::function_registry)
         + R"(,"worker_connection":)" + n(actor_kind::worker_connection)
         + R"(,"invocation":)" + n(actor_kind::invocation)
         + R"(,"trigger_binding":)" + n(actor_kind::trigger_binding)
         + R"(,"channel":)" + n(actor_kind::channel)
         + R"(,"cluster_node":)" + n(actor_kind::cluster_node)
         + R"(,"remote_call":)" + n(actor_kind::remote_call)
         + R"(,"cluster_gateway":)" + n(actor_kind::cluster_gateway) + R"(},"gateway":{"outbound":)"
         + std::to_string(obs::global().remote_calls_outbound.load()) + R"(,"inbound":)"
         + std::to_string(obs::global().remote_calls_inbound.load()) + R"(},"sockets":{"runtime":)"
         + std::to_string(rc.websockets.load()) + R"(,"api":)"
         + std::to_string(ac.websockets.load() + ac.http_connections.load()) + R"(,"worker":)"
         + std::to_string(wc.websockets.load() + impl_->rbac_workers.counters().websockets.load())
         + R"(},"grpc":{"open_calls":)"
         + std::to_string(impl_->grpc ? impl_->grpc->open_calls() : 0) + R"(},"runtimes":)"
         + std::to_string(registered_runtimes.load()) + "}";
}

} // namespace actor_host
