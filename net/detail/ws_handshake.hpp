#pragma once

// Internal to net/: the server's answer to a WebSocket upgrade request, for
// the lean session (lean_ws_session.cpp); Beast answers for its own.

#include "net/detail/ws_session.hpp"

#include <string>
#include <string_view>

namespace actor_host::net::detail {

/// RFC 6455 §4.2.2: the Sec-WebSocket-Accept for the client's key.
std::string ws_accept_key(std::string_view key);

/// The answer to an upgrade request (§4.2.1): 101 with the accept key
/// (`ok`), or why not (400, or 426 for a version other than 13). Beast's
/// is_upgrade has checked the method, version, Connection and Upgrade.
std::string ws_handshake_response(const http_request_message& req, bool& ok);

} // namespace actor_host::net::detail
