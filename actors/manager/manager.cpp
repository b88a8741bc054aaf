#include "actors/dispatch/failover_hold.hpp"
#include "actors/manager/manager_impl.hpp"

namespace actor_host {

// malloc_arenas.cpp: one malloc arena for the process; referred to here so
// that the binary links it (it runs before main).
extern const bool one_malloc_arena;
[[gnu::used]] static const bool* const keep_one_malloc_arena = &one_malloc_arena;

namespace {

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
  caf::anon_send(d.supervisor, adopt_atom_v, caf::actor_cast<caf::actor>(d.gateway));
  cluster_links links;
  links.functions = caf::actor_cast<caf::actor>(d.functions);
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
  auto gateway = caf::actor_cast<caf::actor>(d.gateway);
  caf::anon_send(d.directory, cluster_atom_v, d.cluster, gateway, c.node_name);
  caf::anon_send(d.functions, cluster_atom_v, d.cluster, gateway, c.node_name);
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
  d.start_actors();
  if (auto err = d.start_traces(); !err.empty())
    return err;
  if (d.opts.cluster)
    if (auto err = d.start_cluster(); !err.empty())
      return "cluster: " + err;
  // The API listens first: its URL is the telemetry server runtimes are told of.
  if (auto err = d.start_api([this] { return stats_json(); }); !err.empty())
    return err;
  if (auto err = d.start_reflection(); !err.empty())
    return err;
  if (auto err = d.start_workers(); !err.empty())
    return err;
  if (d.opts.grpc)
    if (auto err = d.start_grpc(); !err.empty())
      return "gRPC front door: " + err;
  // After every listener, so that runtime files cannot point at any of them.
  if (!d.opts.project_root.empty())
    d.start_v1_discovery(d.runtime_links, d.telemetry_url);
  d.log_endpoints();
  return d.start_services();
}

void manager::impl::start_actors() {
  supervisor = sys.spawn(manager_supervisor, supervisor_config{
    .drain_timeout = std::chrono::duration_cast<caf::timespan>(opts.drain_timeout),
    .cluster_readiness = opts.cluster ? std::function<std::string()>{[view = cluster_view] {
      return view->current()->not_ready;
    }} : nullptr,
    .request_stop = opts.on_drain_request,
    .who = opts.cluster ? "node " + opts.cluster->node_name : "the manager",
    // The leave reaches the others at once; a call they routed here just
    // before arrives within moments.
    .leave_settle = opts.cluster ? caf::timespan{std::chrono::milliseconds(500)} : caf::timespan{0},
  });
  auto routes = std::make_shared<route_board>();
  directory = spawn_child(runtime_directory, routes,
                          opts.cluster ? opts.failover_hold : std::chrono::milliseconds{0});
  caf::anon_send(directory, limits_atom_v, opts.admission);
  functions = spawn_child(function_registry);
  dashboard_feed_config feed_cfg;
  if (opts.cluster)
    feed_cfg.cluster_json = [view = cluster_view] { return view->current()->json; };
  door = front_door{
    .routes = routes,
    .directory = directory,
    .functions = functions,
    .policy = opts.policy,
    .cluster = opts.cluster ? cluster_view : nullptr,
    .feed = spawn_child(dashboard_feed, std::move(feed_cfg), directory, functions),
    .project_name = std::filesystem::path{opts.project_root}.filename().string(),
    .supervisor = supervisor,
    .hold = {},
  };
  if (opts.cluster && opts.failover_hold.count() > 0) {
    // Calls for the runtimes of a lost node wait while they move.
    door.hold = spawn_child(failover_hold, door, failover_hold_limits{});
    caf::anon_send(directory, subscribe_atom_v, caf::actor_cast<caf::actor>(door.hold));
  }
  function_registry_options fopts;
  fopts.channels = opts.channels;
  if (opts.worker_rbac_port)
    // The front door is no way around RBAC: an anonymous session of the
    // RBAC listener (its exposed functions only).
    fopts.front_door = std::make_shared<const registry::worker_access>(registry::worker_access{
      std::make_shared<const registry::worker_rbac_config>(opts.rbac), {}});
  caf::anon_send(functions, iii_options_atom_v, std::move(fopts));
}

std::string manager::impl::start_services() {
  auto manager_url = (tls ? "wss" : "ws") + std::string{"://localhost:"}
                     + std::to_string(reflection.port());
  // Children get the token in the URL they dial: Genkit runtimes keep the
  // query of GENKIT_REFLECTION_V2_SERVER, and so does our runtime role.
  if (!opts.auth_token.empty())
    manager_url = net::url_with_token(manager_url, opts.auth_token);
  if (!opts.write_env_file.empty()) {
    auto id = opts.services.size() == 1 ? opts.services.front().runtime_id : std::string{};
    if (auto err = write_env_file(opts.write_env_file, manager_url, id, telemetry_url);
        !err.empty())
      return err;
  }
  std::vector<std::string> service_ids;
  std::vector<caf::actor> services;
  std::vector<restart_step> replicas;
  std::vector<std::string> replica_services;
  for (auto& spec : opts.services) {
    services.push_back(spawn_child(child_runtime, child_runtime_args{
                                                    .spec = spec,
                                                    .directory = directory,
                                                    .io = &io.context(),
                                                    .manager_url = manager_url,
                                                    .telemetry_url = telemetry_url,
                                                    .on_final_exit = opts.on_service_exit,
                                                    .feed = door.feed,
                                                  }));
    if (spec.registers) {
      service_ids.push_back(spec.runtime_id);
      replicas.push_back({services.back(), spec.runtime_id, std::nullopt});
      replica_services.push_back(spec.service.empty() ? spec.runtime_id : spec.service);
    }
  }
  {
    std::lock_guard guard{reload_mutex}; // a SIGHUP may come at any time
    children = services;
  }
  // From here the supervisor answers /readyz and owns the drain.
  caf::anon_send(supervisor, serving_atom_v, directory, std::move(service_ids),
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
         // No actor per cross-node call any more (the gateway is the call's
         // handle): the front doors' calls its gateway holds, which the leak
         // checks (interop, soak) read as before.
         + R"(,"remote_call":)" + std::to_string(obs::global().remote_calls_in_flight.load())
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
