#include "actors/manager/manager.hpp"

#include "actors/cluster/cluster_node.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/frame_bridge.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/span_exporter.hpp"
#include "actors/manager/api_session.hpp"
#include "actors/manager/channel.hpp"
#include "actors/manager/child_runtime.hpp"
#include "actors/manager/dashboard_feed.hpp"
#include "actors/manager/function_registry.hpp"
#include "actors/manager/http_api.hpp"
#include "actors/manager/listener_access.hpp"
#include "actors/manager/manager_supervisor.hpp"
#include "actors/manager/runtime_connection.hpp"
#include "actors/manager/routing.hpp"
#include "actors/manager/runtime_directory.hpp"
#include "actors/manager/trace_keeper.hpp"
#include "actors/manager/v1_discovery.hpp"
#include "actors/manager/worker_connection.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "net/url.hpp"
#include "net/v1_runtime_link.hpp"
#include "obs/metrics.hpp"
#include "obs/metrics_page.hpp"
#include "proc/private_file.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <unistd.h>

namespace actor_host {

namespace {

// The TLS context is loaded before the listeners exist; a bad file is
// reported by start(), through tls_error.
net::tls_server_context_ptr load_tls(const manager_options& o, std::string& error) {
  return o.tls ? net::tls_server_context::load(*o.tls, error) : nullptr;
}

} // namespace

struct manager::impl {
  impl(caf::actor_system& sys, net::io_runtime& io, manager_options o)
    : sys(sys), opts(std::move(o)), tls(load_tls(opts, tls_error)), io(io),
      reflection(io, listener_options(listener::reflection, opts.port, 3200, 3400)),
      api(io, listener_options(listener::api, opts.http_port)),
      workers(io, listener_options(listener::workers, opts.worker_port)),
      rbac_workers(io, listener_options(listener::rbac_workers, opts.worker_rbac_port.value_or(0))) {
  }

  net::server_options listener_options(listener l, std::uint16_t port, std::uint16_t first = 0,
                                       std::uint16_t last = 0) const {
    net::server_options so;
    so.bind = opts.bind;
    so.port = port;
    so.range_first = first;
    so.range_last = last;
    so.max_frame_bytes = opts.max_frame_bytes;
    so.max_body_bytes = opts.max_body_bytes;
    so.max_write_queue_bytes = opts.max_write_queue_bytes;
    so.max_connections = opts.max_connections;
    so.tls = tls;
    so.access = access_for(opts, l);
    return so;
  }

  caf::actor_system& sys;
  manager_options opts;
  std::string tls_error;
  net::tls_server_context_ptr tls; // null: plaintext listeners
  net::io_runtime& io;
  net::server reflection;
  net::server api;
  net::server workers;
  net::server rbac_workers; // listens only with opts.worker_rbac_port
  caf::actor supervisor;
  directory_actor directory;
  caf::actor functions; // function_registry
  front_door door;      // what every caller starts calls with
  caf::actor cluster;   // cluster_node; null outside a cluster
  caf::actor gateway;   // cluster_gateway: every call between this node and the others
  caf::actor traces;    // trace_keeper; null without a trace store
  cluster_board_ptr cluster_view = std::make_shared<cluster_board>();
  std::uint16_t cluster_port = 0;

  /// Spawns actors the supervisor adopts.
  struct adopting_spawner {
    caf::actor_system* sys;
    caf::actor supervisor;
    template <class F, class... Ts>
    auto operator()(F fun, Ts&&... xs) const {
      auto a = sys->spawn(fun, std::forward<Ts>(xs)...);
      // Typed or not, the supervisor watches actors by their plain handle.
      caf::anon_send(supervisor, adopt_atom_v, caf::actor_cast<caf::actor>(a));
      return a;
    }
  };

  /// Listeners' handlers run on I/O threads and outlive stop(): they get
  /// their own copies of the handles they use, never these members.
  adopting_spawner spawner() const {
    return {&sys, supervisor};
  }

  template <class F, class... Ts>
  auto spawn_child(F fun, Ts&&... xs) {
    return spawner()(fun, std::forward<Ts>(xs)...);
  }

  std::string start_cluster();
  void start_v1_discovery(const connection_options& base, const std::string& telemetry_url);
};

// Reflection V1 runtimes (Genkit apps started the V1 way, GENKIT_ENV=dev) are
// found through their runtime files and reached through a link that speaks
// V1 to them and V2 to the runtime connection above it: the rest of the
// manager sees one kind of runtime.
void manager::impl::start_v1_discovery(const connection_options& base,
                                       const std::string& telemetry_url) {
  v1_discovery_options o;
  o.runtimes_dir = registry::runtimes_directory(opts.project_root);
  o.connect = [spawn = spawner(), dir = directory, io = &io, base, telemetry_url,
               policy = opts.policy, cap = opts.max_frame_bytes](const registry::runtime_file& f) {
    net::v1_link_options lo;
    lo.runtime_id = f.id;
    lo.url = f.reflection_server_url;
    lo.register_params = registry::runtime_file_json(f);
    lo.telemetry_url = telemetry_url;
    lo.request_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      policy.request_timeout);
    lo.max_answer_bytes = cap;
    lo.max_exchanges = std::max<std::size_t>(policy.max_calls_per_caller, 1);
    auto link = net::v1_runtime_link::make(*io, std::move(lo));
    auto copts = base;
    copts.reflection_url = f.reflection_server_url;
    copts.protocol = "v1";
    copts.telemetry_url.clear(); // V1 runtimes hear of it through /api/notify
    auto t = with_read_window(link, policy.max_unread_frames);
    auto conn = spawn(runtime_connection, t, dir, copts);
    link->start(std::make_shared<frame_bridge>(conn, t));
    return v1_connection{caf::actor_cast<caf::actor>(conn), link};
  };
  spdlog::info("Watching {} for Reflection V1 runtimes", o.runtimes_dir);
  // It reads the disk: a thread of its own.
  caf::anon_send(supervisor, adopt_atom_v, sys.spawn<caf::detached>(v1_discovery, std::move(o)));
}

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
  caf::anon_send(d.cluster, listening_atom_v, advertise);
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
  if (d.opts.cluster)
    scfg.cluster_readiness = [view = d.cluster_view] { return view->current()->not_ready; };
  d.supervisor = d.sys.spawn(manager_supervisor, scfg);
  auto routes = std::make_shared<route_board>();
  d.directory = d.spawn_child(runtime_directory, routes);
  d.functions = d.spawn_child(function_registry);
  dashboard_feed_config feed_cfg;
  if (d.opts.cluster)
    feed_cfg.cluster_json = [view = d.cluster_view] { return view->current()->json; };
  auto feed = d.spawn_child(dashboard_feed, std::move(feed_cfg), d.directory, d.functions);
  d.door = front_door{routes, d.directory, d.functions, d.opts.policy,
                      d.opts.cluster ? d.cluster_view : nullptr, feed,
                      std::filesystem::path{d.opts.project_root}.filename().string()};
  function_registry_options fopts;
  fopts.channels = d.opts.channels;
  if (d.opts.worker_rbac_port)
    // The front door is no way around RBAC: an anonymous session of the
    // RBAC listener (its exposed functions only).
    fopts.front_door = std::make_shared<const registry::worker_access>(registry::worker_access{
      std::make_shared<const registry::worker_rbac_config>(d.opts.rbac), {}});
  caf::anon_send(d.functions, iii_options_atom_v, std::move(fopts));
  if (!d.opts.otlp_endpoint.empty() && d.opts.trace_store.empty())
    return "otlp_endpoint: spans reach the collector through the trace store; set trace_store "
           "too (--trace-store FILE)";
  if (!d.opts.trace_store.empty()) {
    std::string err;
    auto store = traces::trace_store::open(d.opts.trace_store, d.opts.trace_retention, err);
    if (!store)
      return "trace store: " + err;
    caf::actor exporter;
    if (!d.opts.otlp_endpoint.empty()) {
      auto u = net::parse_url(d.opts.otlp_endpoint);
      if (!u || u->scheme != "http")
        return "otlp_endpoint: '" + d.opts.otlp_endpoint
               + "' is not an http:// URL (OTLP/HTTP JSON, e.g. http://collector:4318)";
      span_exporter_options eo;
      eo.max_queued = 1024;
      eo.path = "/v1/traces";
      auto base = d.opts.otlp_endpoint;
      while (!base.empty() && base.back() == '/')
        base.pop_back();
      exporter = d.spawn_child(span_exporter, base, http_span_poster(d.io), eo);
      spdlog::info("Spans are exported to the OpenTelemetry collector at {}/v1/traces", base);
    }
    // SQLite waits on the disk: the keeper gets a thread of its own.
    d.traces = d.sys.spawn<caf::detached>(trace_keeper,
                                         std::shared_ptr<traces::trace_store>{std::move(store)},
                                         exporter);
    caf::anon_send(d.supervisor, adopt_atom_v, d.traces);
  }
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
  // Runtimes export traces without a token (Genkit's exporter sends no
  // header): with a token configured they are not told of the store.
  std::string telemetry_url;
  if (d.traces && d.opts.auth_token.empty())
    telemetry_url = http + "://localhost:" + std::to_string(d.api.port());
  if (auto err = d.reflection.listen(); !err.empty())
    return "reflection server: " + err;
  connection_options conn_opts{ws + "://localhost:" + std::to_string(d.reflection.port()),
                               d.opts.policy.max_bidi_input_bytes, telemetry_url, "",
                               d.traces, d.opts.cluster ? d.opts.cluster->node_name : ""};
  // Every socket that feeds an actor gets a read window (max_unread_frames).
  auto unread = d.opts.policy.max_unread_frames;
  d.reflection.on_websocket("", [spawn = d.spawner(), dir = d.directory, conn_opts,
                                 unread](net::transport_ptr t) -> net::frame_handler_ptr {
    t = with_read_window(std::move(t), unread);
    auto a = spawn(runtime_connection, t, dir, conn_opts);
    return std::make_shared<frame_bridge>(std::move(a), std::move(t));
  });
  if (!d.opts.project_root.empty())
    d.start_v1_discovery(conn_opts, telemetry_url);
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
    spdlog::info("Trace store: {} (telemetry server {})", d.opts.trace_store,
                 telemetry_url.empty() ? std::string{"not advertised: a token is configured"}
                                       : telemetry_url);
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
  for (auto& spec : d.opts.services) {
    child_runtime_args args{spec,        d.directory,           &d.io.context(), manager_url,
                            telemetry_url, d.opts.on_service_exit, d.door.feed};
    services.push_back(d.spawn_child(child_runtime, std::move(args)));
    if (spec.registers)
      service_ids.push_back(spec.runtime_id);
  }
  // From here the supervisor answers /readyz and owns the drain.
  caf::anon_send(d.supervisor, serving_atom_v, d.directory, std::move(service_ids),
                 std::move(services));
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
         + R"(},"runtimes":)"
         + std::to_string(registered_runtimes.load()) + "}";
}

} // namespace actor_host
