#pragma once

#include "net/socket_counters.hpp"
#include "net/tls.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace actor_host::net {

class io_runtime;

struct connect_options {
  std::size_t max_frame_bytes = 64u << 20;
  /// The link's own frames (results, stream chunks) are queued here; it is
  /// not a queue a remote peer can fill, so the cap is generous.
  std::size_t max_write_queue_bytes = 256u << 20;
  std::chrono::milliseconds timeout{10000}; // TCP connect
  /// A peer silent this long is taken for dead and the link closes (Beast
  /// pings it at half of it; every Reflection V2 peer answers pings).
  std::chrono::milliseconds idle_timeout{120000};
  std::shared_ptr<socket_counters> counters; // optional
  /// Needed for wss:// (and https://) URLs: trust and client certificate.
  /// The server's certificate is checked against the URL's host.
  tls_client_context_ptr tls;
};

/// Opens a WebSocket to `url` (ws:// or wss://host:port/path) without blocking. On
/// success `on_open` makes the handler for the new transport (on its strand);
/// otherwise `on_fail` gets the reason. Exactly one of them is called.
void ws_connect(io_runtime& io, const std::string& url, connect_options opts,
                session_factory on_open, std::function<void(std::string)> on_fail);

} // namespace actor_host::net
