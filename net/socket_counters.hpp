#pragma once

#include <atomic>
#include <cstdint>

namespace actor_host::net {

/// Live sockets and traffic of one listener (or of the outgoing links).
struct socket_counters {
  std::atomic<std::int64_t> websockets{0};
  std::atomic<std::int64_t> http_connections{0};
  std::atomic<std::uint64_t> frames_in{0};
  std::atomic<std::uint64_t> frames_out{0};
  std::atomic<std::uint64_t> bytes_in{0};
  std::atomic<std::uint64_t> bytes_out{0};
  std::atomic<std::uint64_t> write_queue_overflows{0};
  // Requests and upgrades refused by the access policy (Origin, Host, token).
  std::atomic<std::uint64_t> access_refused{0};
  // Response headers dropped because their value had CR, LF or NUL.
  std::atomic<std::uint64_t> unsafe_headers_dropped{0};
  // Bytes queued for writing and not yet written, over all sockets.
  std::atomic<std::int64_t> queued_bytes{0};
  // Of those, HTTP responses' (the piece being written included), against
  // max_response_bytes_total; and the exchanges dropped for it.
  std::atomic<std::int64_t> response_bytes{0};
  std::atomic<std::uint64_t> response_budget_overflows{0};
  // HTTP exchanges whose responder went unfinished (answered 503 or cut off).
  std::atomic<std::uint64_t> unanswered_exchanges{0};
  // Accepted connections still open (HTTP or WebSocket), against max_connections.
  std::atomic<std::int64_t> connections{0};
  std::atomic<std::uint64_t> connections_refused{0}; // over max_connections
  std::atomic<std::uint64_t> accept_errors{0};       // EMFILE and the like
  std::atomic<std::uint64_t> tls_handshake_failures{0};
  std::atomic<std::uint64_t> plaintext_refused{0};   // plain HTTP on a TLS listener
};

} // namespace actor_host::net
