#pragma once

// Internal to net/: the short names the Asio/Beast sources of net/ use, in
// one place rather than at the top of each .cpp. Only net/*.cpp include it:
// the names land in actor_host::net.

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

// Declared here so the aliases need no Beast header; the sources include
// what they use.
namespace boost::beast::http {}
namespace boost::beast::websocket {}

namespace actor_host::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

} // namespace actor_host::net
