#pragma once

// Internal to net/: the WebSocket session shared by the server and the
// client connector. Includes Beast, so only net/*.cpp include it.

#include "net/detail/flex_stream.hpp"
#include "net/socket_counters.hpp"
#include "net/transport.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace actor_host::net {

struct ws_limits {
  std::size_t max_frame_bytes = 64u << 20;
  std::size_t max_write_queue_bytes = 16u << 20;
  // Silent this long (a ping goes at half of it): the peer is taken for dead.
  std::chrono::milliseconds idle_timeout{120000};
};

using http_request_message = boost::beast::http::request<boost::beast::http::string_body>;

/// The request's header fields by lower-case name.
std::map<std::string, std::string> lower_case_headers(const http_request_message& req);

/// What an upgrade request asks for (target, decoded path and query,
/// headers), as routes, upgrade checks and frame handlers see it.
upgrade_request describe_upgrade(const http_request_message& req);

/// Completes the server handshake for an upgrade request (`up` is its
/// describe_upgrade), then serves the socket with the handler `factory` makes;
/// `up` is released once the factory has returned unless `keep_upgrade`.
/// Plain connections get the lean session (lean_ws_session.cpp), TLS ones
/// Beast's stream.
void run_server_websocket(flex_stream&& stream, http_request_message&& req,
                          upgrade_request up, std::string peer, const session_factory& factory,
                          bool keep_upgrade, ws_limits limits,
                          std::shared_ptr<socket_counters> counters);

namespace detail {
/// run_server_websocket for a plain connection (lean_ws_session.cpp).
void run_lean_server_websocket(flex_stream&& stream, const http_request_message& req,
                               upgrade_request up, std::string peer,
                               const session_factory& factory, bool keep_upgrade,
                               ws_limits limits, std::shared_ptr<socket_counters> counters);
} // namespace detail

/// Runs the client handshake for `target` with `host` as the Host header on
/// a connected stream, then serves it with the handler `factory` makes;
/// `on_fail` gets the reason if the handshake fails.
void run_client_websocket(flex_stream&& stream, std::string peer, const std::string& host,
                          const std::string& target, session_factory factory,
                          std::function<void(std::string)> on_fail, ws_limits limits,
                          std::shared_ptr<socket_counters> counters);

} // namespace actor_host::net
