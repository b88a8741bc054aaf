#pragma once

#include "net/access_policy.hpp"
#include "net/connection_budget.hpp"
#include "net/http_exchange.hpp"
#include "net/socket_counters.hpp"
#include "net/tls.hpp"
#include "net/transport.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace actor_host::net {

class io_runtime;

struct server_options {
  std::string bind = "127.0.0.1";
  /// 0 with a range: the first free port in [range_first, range_last];
  /// 0 without a range: any free port.
  std::uint16_t port = 0;
  std::uint16_t range_first = 0;
  std::uint16_t range_last = 0;
  std::size_t max_frame_bytes = 8u << 20;
  std::size_t max_body_bytes = 8u << 20;
  /// A peer that does not drain its socket (a WebSocket, or an HTTP
  /// response's reader) is dropped once this many bytes wait behind the
  /// write in flight; an HTTP exchange is aborted (its run cancelled).
  std::size_t max_write_queue_bytes = 16u << 20;
  /// What every HTTP response of the listener may hold at once, the piece
  /// being written included (a trace, a big result): a response that would
  /// pass it aborts its exchange, as a queue over max_write_queue_bytes
  /// does. Slow readers cannot pin more than this together. 0 = no cap.
  std::size_t max_response_bytes_total = 256u << 20;
  /// Idle keep-alive HTTP connections are closed after this long.
  unsigned http_idle_timeout_ms = 60000;
  /// Open connections; the next one gets "503 too many connections" and is
  /// closed (a TLS listener just closes it: there is no session to answer in).
  std::size_t max_connections = 4096;
  /// The process-wide budget this listener's connections also count
  /// against (the same 503 when it is used up). Null: the io_runtime's, which
  /// every listener on that runtime shares.
  std::shared_ptr<connection_budget> budget;
  /// Non-null: every connection must speak TLS (plain HTTP gets a 400 that
  /// says so). The context may be reloaded while the listener runs.
  tls_server_context_ptr tls;
  /// From accept to the end of the TLS handshake.
  unsigned tls_handshake_timeout_ms = 10000;
  /// Who may use this listener (Origin, Host, token), checked on every
  /// request head and upgrade before anything else is read.
  access_policy access;
};


/// An HTTP/1.1 + WebSocket listener on Beast. WebSocket upgrades go to the
/// factory registered for their path, other requests to the HTTP handler.
class server {
public:
  using ws_factory = session_factory;
  /// Runs on the I/O thread before an upgrade is accepted: 0 accepts it, an
  /// HTTP status (e.g. 404) refuses it with that status and no upgrade. It
  /// must not block; it may only consult thread-safe state.
  using upgrade_check = std::function<int(const upgrade_request&)>;

  server(io_runtime& io, server_options opts);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Who reads a connection's upgrade request (transport::upgrade()), and
  /// until when. Its headers and query cost an idle connection ~0.7 KB.
  enum class upgrade_reads {
    any_time,   // the handler, for the connection's life (e.g. an actor): kept
    in_factory, // the factory only: released once it has returned
  };

  /// `path` "" accepts an upgrade on any path. Register before `listen`.
  void on_websocket(std::string path, ws_factory factory,
                    upgrade_reads reads = upgrade_reads::any_time);
  /// Upgrades on every path that starts with `prefix`, after `check`.
  void on_websocket_prefix(std::string prefix, upgrade_check check, ws_factory factory);
  void on_http(http_handler handler);

  /// Binds and starts accepting. Returns an empty string or the reason.
  std::string listen();
  std::uint16_t port() const;

  /// Closes the acceptor; open sessions stay.
  void stop_accepting();

  const socket_counters& counters() const;

  struct impl; // shared with the sessions (net/detail/server_impl.hpp)

private:
  std::shared_ptr<impl> impl_;
};

} // namespace actor_host::net
