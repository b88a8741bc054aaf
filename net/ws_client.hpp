#pragma once

#include "net/tls.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace actor_host::net {

/// A small blocking WebSocket client (plain or TLS), for command-line tools
/// and tests that talk to the manager one message at a time.
///
/// Every call blocks the calling thread. The client is not thread-safe: use
/// one instance from one thread at a time. Beast and Asio stay behind a
/// pimpl so that including this header costs nothing.
class blocking_ws_client {
public:
  /// Connects to a `ws://` or `wss://host[:port][/path]` URL and completes
  /// the opening handshake(s). `timeout` bounds name resolution, TCP
  /// connect, TLS and WebSocket handshake together. wss:// needs `tls` (the
  /// server's certificate is checked against the URL's host). A non-empty
  /// `bearer_token` is sent as `Authorization: Bearer <token>`. Returns
  /// `nullptr` and sets `error` on failure.
  static std::unique_ptr<blocking_ws_client>
  connect(const std::string& url, std::string& error, std::chrono::milliseconds timeout,
          tls_client_context_ptr tls = nullptr, const std::string& bearer_token = {});

  ~blocking_ws_client();

  blocking_ws_client(const blocking_ws_client&) = delete;
  blocking_ws_client& operator=(const blocking_ws_client&) = delete;

  /// Sends `text` as one text frame. Returns false and sets `error` on failure.
  bool send_text(std::string_view text, std::string& error);

  /// Blocks until the next complete message arrives. Pings are answered while
  /// waiting. Returns `std::nullopt` and sets `error` when the connection
  /// fails or the peer closes it (the error then names the close code).
  std::optional<std::string> read_text(std::string& error);

  /// Performs the closing handshake (bounded by a short timeout) and closes
  /// the socket. Idempotent; also called by the destructor.
  void close();

private:
  struct impl;

  explicit blocking_ws_client(std::unique_ptr<impl> ptr);

  std::unique_ptr<impl> impl_;
};

} // namespace actor_host::net
