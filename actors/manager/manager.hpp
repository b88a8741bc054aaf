#pragma once

#include "actors/call/call_policy.hpp"

#include "actors/common/component.hpp"
#include "config/host_config.hpp"
#include "net/tls.hpp"
#include "registry/worker_rbac.hpp"
#include "traces/trace_store.hpp"

#include <caf/fwd.hpp>

#include <cstddef>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace actor_host {

namespace net {
class io_runtime;
}

/// Managers joined into one cluster over CAF's BASP (docs/CLUSTER.md). The
/// actor system must have been made with the middleman (and, with the TLS
/// files, caf-openssl) loaded: apps/caf_settings.
struct manager_cluster_options {
  std::string node_name;
  std::string bind = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port (logged)
  std::string advertise;   // host others dial; default: bind (or the host name for 0.0.0.0)
  std::vector<std::string> seeds; // host:port
  /// mTLS between nodes: all three or none.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_ca_file;
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{5000};
};

/// The gRPC front door (grpc_door/, docs/GRPC.md).
struct grpc_listener_options {
  std::uint16_t port = 0; // 0: any free port
  /// Empty cert_file: plaintext.
  net::tls_server_files tls;
};

struct manager_options {
  std::string bind = "127.0.0.1";
  std::uint16_t port = 0;        // 0: first free port in 3200-3400
  std::uint16_t http_port = 4100; // 0: any free port
  std::uint16_t worker_port = 49134; // iii workers; 0: any free port
  /// A second worker endpoint with RBAC (the public one); none when unset.
  std::optional<std::uint16_t> worker_rbac_port;
  registry::worker_rbac_config rbac;
  /// iii channels: bytes held per channel, channels per worker connection.
  channel_limits channels;
  std::size_t max_frame_bytes = 8u << 20;
  std::size_t max_body_bytes = 8u << 20;
  /// The shared secret of every listener (auth_token_file's content); empty:
  /// only loopback peers are served.
  std::string auth_token;
  std::string auth_token_file; // where auth_token comes from
  std::vector<std::string> allowed_origins; // besides loopback origins
  std::vector<std::string> allowed_hosts;   // besides loopback names and `bind`
  /// Remote peers are authenticated otherwise (TLS client certificates,
  /// --insecure): no token needed off loopback.
  bool remote_without_token = false;
  bool insecure = false; // --insecure: off-loopback peers need neither token nor certificate
  std::size_t max_write_queue_bytes = 16u << 20; // per WebSocket / HTTP response
  std::size_t max_response_bytes_total = 256u << 20; // every HTTP response of a listener
  std::size_t max_connections = 4096;            // per listener
  /// Set: every listener speaks TLS with these files (see net/tls.hpp).
  std::optional<net::tls_server_files> tls;
  call_policy policy;
  service_limits admission; // per service: caps on calls in flight, queues
  /// SIGTERM: how long in-flight calls may finish before they are cancelled.
  std::chrono::milliseconds drain_timeout{15000};
  // gRPC: a call's first request message must come within this; 0 = no limit.
  std::chrono::milliseconds first_message_timeout{10000};
  // gRPC: calls a client may reset beyond those it lets finish before its
  // connection is closed (rapid reset); 0 = no limit.
  std::size_t max_client_resets = 200;
  // Cluster: how long calls for the runtimes of a lost node wait for them
  // to register at another node (failover_hold.hpp); 0 = they fail at once.
  std::chrono::milliseconds failover_hold{5000};
  /// Child runtimes to start once listening (host config, `-- <command>`).
  std::vector<config::service_spec> services;
  /// Write the children's GENKIT_* variables here once the port is known.
  std::string write_env_file;
  /// The SQLite file of the trace store ("" = none): the manager is then the
  /// telemetry server of its runtimes (docs/API.md, "Traces").
  std::string trace_store;
  /// trace_store is the default one under the project root (not configured):
  /// its folder is made, and a store that cannot be opened is a warning and
  /// no store, where a configured one stops the start.
  bool trace_store_default = false;
  traces::retention trace_retention;
  /// An OpenTelemetry collector (OTLP/HTTP JSON base URL) every stored span
  /// also goes to; "" = none. Needs trace_store.
  std::string otlp_endpoint;
  /// The Genkit project root: Reflection V1 runtimes announce themselves in
  /// its .genkit/runtimes (v1_discovery); "" = none watched.
  std::string project_root;
  /// A web app's folder served at / (the Genkit Dev UI build); "" = the dashboard.
  std::string ui_assets;
  /// A service ended for good (exited without restart, or never got ready):
  /// (exit code, why). Used by main to end the process with an attached
  /// `-- <command>`.
  std::function<void(int, std::string)> on_service_exit;
  /// `actor-host drain` (the API's drainNode) asks the process to stop as
  /// SIGTERM does; main ends its wait. Unset: drainNode is refused.
  std::function<void()> on_drain_request;
  /// Set: the gRPC front door listens (same bind, token and caps).
  std::optional<grpc_listener_options> grpc;
  /// Set: this manager is a node of a cluster.
  std::optional<manager_cluster_options> cluster;
};

/// The manager role as one component: the reflection server for runtimes,
/// the API server for callers, the worker endpoint for iii workers, and the
/// actor tree behind them.
class manager : public component {
public:
  manager(caf::actor_system& sys, net::io_runtime& io, manager_options opts);
  ~manager() override;
  manager(const manager&) = delete;
  manager& operator=(const manager&) = delete;

  /// Binds both listeners. Returns "" or why it could not start.
  std::string start() override;

  /// Graceful: stops accepting, lets calls in flight finish for up to
  /// drain_timeout, cancels the rest (callers get CANCELLED), stops the child
  /// runtimes with `stop_signal` (SIGKILL after each one's stop_grace), then
  /// takes the actor tree down and waits for it.
  void stop() override;
  void stop(int stop_signal);

  std::uint16_t port() const;
  std::uint16_t http_port() const;
  std::uint16_t worker_port() const;
  /// 0 when there is no RBAC worker endpoint.
  std::uint16_t worker_rbac_port() const;
  /// 0 when there is no gRPC front door.
  std::uint16_t grpc_port() const;

  /// Live actors and sockets as JSON (GET /api/__stats).
  std::string stats_json() const;

  /// SIGHUP: loads the TLS files again; new handshakes use them, open
  /// connections keep theirs. On failure the old ones stay. Returns "" or why.
  std::string reload_tls();

  /// SIGHUP: the services as host.yaml now describes them. Children whose
  /// spec changed are restarted with it, one replica of a service at a time
  /// (as `actor-host restart`); what needs a manager restart is logged.
  void reload_services(std::vector<config::service_spec> next);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace actor_host
