#pragma once

// Internal to net/: the state a listener shares with its HTTP sessions
// (server.cpp accepts, http_session.cpp serves).

#include "net/detail/beast_names.hpp"
#include "net/detail/flex_stream.hpp"
#include "net/server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace actor_host::net {

// At most one line per period for events a peer can cause at will (a
// flood, a scanner): the events in between are counted into the next line.
class throttled_log {
public:
  /// The events since the last line (this one included) if a line is due, else 0.
  std::uint64_t due() {
    std::lock_guard<std::mutex> g{mtx_};
    ++count_;
    auto now = std::chrono::steady_clock::now();
    if (now < next_)
      return 0;
    next_ = now + std::chrono::seconds(5);
    return std::exchange(count_, 0);
  }

private:
  std::mutex mtx_;
  std::chrono::steady_clock::time_point next_{};
  std::uint64_t count_ = 0;
};

struct server::impl : std::enable_shared_from_this<server::impl> {
  impl(asio::io_context& ioc, server_options o)
    : ioc(ioc), opts(std::move(o)), acceptor(asio::make_strand(ioc)), retry(ioc) {
  }

  asio::io_context& ioc;
  server_options opts;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  struct ws_route {
    std::string path;
    bool prefix = false;
    upgrade_check check;
    ws_factory factory;
    bool keep_upgrade = true; // upgrade_reads::any_time
  };
  std::vector<ws_route> ws_routes;
  http_handler http;
  std::shared_ptr<socket_counters> counters = std::make_shared<socket_counters>();
  std::uint16_t bound_port = 0;
  throttled_log accept_log;
  throttled_log refuse_log;
  throttled_log handshake_log;

  const ws_route* find_route(const std::string& path) const {
    for (auto& r : ws_routes)
      if (r.path.empty() || r.path == path || (r.prefix && path.starts_with(r.path)))
        return &r;
    return nullptr;
  }

  void do_accept();
  // The socket comes with its strand (do_accept), by its concrete type.
  void on_accept(error_code ec, flex_stream::socket_type socket);
  void on_accept_error(error_code ec);
  /// Over this listener's max_connections, or over the process's budget.
  enum class refusal_cause { listener, process };
  void refuse(flex_stream::socket_type socket, refusal_cause cause);
};

/// Serves one accepted connection: TLS detection and handshake if the
/// listener has TLS, then HTTP requests and WebSocket upgrades.
void start_http_session(flex_stream&& stream, std::shared_ptr<server::impl> srv);

} // namespace actor_host::net
