#pragma once

#include "grpc_door/call_bridge.hpp"
#include "net/tls.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace actor_host::grpc_door {

class catalog;

/// Starts the call of one catalog method; returns the actor's end of it.
/// Runs on the door's one completion-queue thread: it must only send.
using call_starter =
  std::function<std::shared_ptr<call_source>(call_start, std::shared_ptr<call_sink>)>;

struct server_options {
  std::string bind = "127.0.0.1";
  std::uint16_t port = 0; // 0 = any free port (server::port() tells)
  /// TLS (`--grpc-auth-cert-file` ...): empty cert_file = plaintext. The
  /// files are watched and reloaded (gRPC's file watcher) without dropping
  /// connections.
  net::tls_server_files tls;
  /// Callers must send `authorization: Bearer <token>`; empty = loopback
  /// peers only, unless client certificates are verified or `insecure`.
  std::string token;
  bool insecure = false;
  /// Bytes of responses queued for one call before it fails with
  /// RESOURCE_EXHAUSTED (a client that does not read).
  std::size_t max_write_queue_bytes = 16 << 20;
  /// Largest request message accepted.
  std::size_t max_message_bytes = 8 << 20;
  /// Calls open at once on the listener; more fail with RESOURCE_EXHAUSTED.
  std::size_t max_calls = 4096;
  /// Calls open at once from one peer address (all its connections): one
  /// client cannot take every call slot. 0 = no cap.
  std::size_t max_calls_per_peer = 1024;
  /// A catalog call whose first request message has not come by then ends
  /// DEADLINE_EXCEEDED (it holds a call slot meanwhile). 0 = no limit.
  std::chrono::milliseconds first_message_timeout{10000};
  /// HTTP/2 streams one connection may open at once (SETTINGS_MAX_CONCURRENT_STREAMS;
  /// gRPC's default is unlimited): a client that opens more waits for its own.
  std::size_t max_streams_per_connection = 100;
  /// Calls a connection's client may cancel beyond those it lets finish
  /// (less 100 a second) before the connection is closed (HTTP/2 rapid
  /// reset, reset_meter.hpp). 0 = no limit.
  std::size_t max_client_resets = 200;
  /// Makes catalog methods calls (the caller's deadline is the call's
  /// timeout; without one the call path's default applies).
  call_starter start_call;
};

/// The gRPC front door: one listener with a generic service in front of the
/// catalog's methods, server reflection (v1 and v1alpha from one
/// implementation) and grpc.health.v1.Health. Catalog methods become calls
/// through `start_call`; reflection and health are answered on the door's
/// thread from the catalog current at each request. The listener runs on
/// grpc++'s async API with one completion-queue thread of its own
/// (detail/cq_reactor.hpp says why).
class server {
public:
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Listens; nullptr and `error` when it cannot (port taken, bad TLS files).
  static std::unique_ptr<server> start(server_options opts, std::string& error);

  std::uint16_t port() const;
  /// Calls open now (GET /api/__stats).
  std::size_t open_calls() const;

  /// Publishes the catalog calls, reflection and health answer from (the
  /// empty one until the first). Thread-safe; Health.Watch streams hear it.
  void set_catalog(std::shared_ptr<const catalog> c);

  /// Health turns NOT_SERVING and new calls are refused; open calls may
  /// finish within `grace`, then they are cancelled. Blocks until all are over.
  void shutdown(std::chrono::milliseconds grace = {});

private:
  struct impl;
  explicit server(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace actor_host::grpc_door
