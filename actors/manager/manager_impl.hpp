#pragma once

// Private to the manager's own sources (manager.cpp, manager_traces.cpp): the
// state behind manager's pimpl, and its wiring steps.
#include "actors/manager/manager.hpp"

#include "actors/call/routing.hpp"
#include "actors/children/child_runtime.hpp"
#include "actors/cluster/cluster_node.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/frame_bridge.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/span_exporter.hpp"
#include "actors/dispatch/runtime_connection.hpp"
#include "actors/dispatch/runtime_directory.hpp"
#include "actors/doors/http/http_api.hpp"
#include "actors/doors/v1/v1_discovery.hpp"
#include "actors/doors/ws/api_session.hpp"
#include "actors/doors/ws/dashboard_feed.hpp"
#include "actors/iii/channel.hpp"
#include "actors/iii/function_registry.hpp"
#include "actors/iii/worker_connection.hpp"
#include "actors/manager/listener_access.hpp"
#include "actors/manager/manager_supervisor.hpp"
#include "actors/tracing/trace_keeper.hpp"
#include "config/service_reload.hpp"
#include "grpc_door/server.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "net/v1_runtime_link.hpp"
#include "obs/metrics.hpp"
#include "obs/metrics_page.hpp"
#include "proc/private_file.hpp"
#include "wire/url.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <mutex>
#include <filesystem>
#include <unistd.h>

namespace actor_host {

namespace detail {

// The TLS context is loaded before the listeners exist; a bad file is
// reported by start(), through tls_error.
inline net::tls_server_context_ptr load_tls(const manager_options& o, std::string& error) {
  return o.tls ? net::tls_server_context::load(*o.tls, error) : nullptr;
}

} // namespace detail

struct manager::impl {
  impl(caf::actor_system& sys, net::io_runtime& io, manager_options o)
    : sys(sys), opts(std::move(o)), tls(detail::load_tls(opts, tls_error)), io(io),
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
    so.max_response_bytes_total = opts.max_response_bytes_total;
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
  function_registry_actor functions;
  front_door door;      // what every caller starts calls with
  caf::actor cluster;   // cluster_node; null outside a cluster
  gateway_actor gateway; // cluster_gateway: every call between this node and the others
  caf::actor traces;    // trace_keeper; null without a trace store
  route_span_queue_ptr route_spans; // the runs' route spans to it; null without one
  cluster_board_ptr cluster_view = std::make_shared<cluster_board>();
  std::shared_ptr<grpc_door::server> grpc; // null without --grpc-port
  std::uint16_t cluster_port = 0;
  std::string cluster_advertise; // host:port, told to the cluster node with the reflection URL

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

  // The children started from opts.services, one each, in its order.
  std::vector<caf::actor> children;
  std::mutex reload_mutex; // SIGHUPs one at a time

  // manager::start's steps, in its order.
  /// The supervisor, the directory, the function registry, the dashboard
  /// feed, the front door every caller gets (and the failover hold).
  void start_actors();
  std::string start_cluster();
  /// The trace store (and its OTLP exporter) when configured; "" or why not.
  std::string start_traces();
  /// The gRPC front door and its catalog keeper; "" or why not.
  std::string start_grpc();
  /// The API listener (manager_listeners.cpp); sets telemetry_url.
  std::string start_api(std::function<std::string()> stats_json);
  /// The reflection listener runtimes dial, and /api/ws; sets runtime_links.
  std::string start_reflection();
  /// The worker listeners (and the RBAC one).
  std::string start_workers();
  void start_v1_discovery(const connection_options& base, const std::string& telemetry_url);
  void log_endpoints() const;
  /// The configured services, as children; then the supervisor serves.
  std::string start_services();

  // What start's steps learn for the later ones.
  std::string telemetry_url;   // told to runtimes; "" = none
  std::string telemetry_shown; // the same for the log: the token left out
  connection_options runtime_links; // every runtime connection's options
};

} // namespace actor_host
