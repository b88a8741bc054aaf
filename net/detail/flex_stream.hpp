#pragma once

// Internal to net/: one stream type for plain and TLS connections (Beast's
// "flex" pattern), so HTTP and WebSocket sessions have one code path. The
// choice is made per connection at run time: a listener with TLS detects the
// ClientHello on the first bytes, a dialer by the URL scheme.

#include "net/connection_budget.hpp"
#include "net/socket_counters.hpp"
#include "net/tls.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <memory>
#include <optional>
#include <utility>

namespace actor_host::net {

struct tls_context_box {
  explicit tls_context_box(boost::asio::ssl::context::method m) : ctx(m) {
  }
  boost::asio::ssl::context ctx;
};

/// One connection counted against its listener's max_connections and, when
/// it has one, against the process's connection budget (whose slot the
/// acceptor has already taken with try_acquire: the slot adopts it). Moves
/// with the socket from the HTTP session to the WebSocket session; gives both
/// back when the connection is destroyed.
class connection_slot {
public:
  connection_slot() = default;
  explicit connection_slot(std::shared_ptr<socket_counters> c,
                           std::shared_ptr<connection_budget> adopted = nullptr)
    : c_(std::move(c)), budget_(std::move(adopted)) {
    if (c_)
      c_->connections.fetch_add(1, std::memory_order_relaxed);
  }
  connection_slot(connection_slot&& o) noexcept
    : c_(std::move(o.c_)), budget_(std::move(o.budget_)) {
  }
  connection_slot& operator=(connection_slot&& o) noexcept {
    release();
    c_ = std::move(o.c_);
    budget_ = std::move(o.budget_);
    return *this;
  }
  ~connection_slot() {
    release();
  }

private:
  void release() {
    if (auto c = std::exchange(c_, nullptr))
      c->connections.fetch_sub(1, std::memory_order_relaxed);
    if (auto b = std::exchange(budget_, nullptr))
      b->release();
  }
  std::shared_ptr<socket_counters> c_;
  std::shared_ptr<connection_budget> budget_;
};

/// The executor of every connection in net/: its strand on the io_runtime's
/// io_context, by its concrete type. Beast's tcp_stream would erase it into
/// an any_io_executor, whose copy, destruction and prefer() in every read,
/// write and post were 12-19 % of the manager's CPU per streamed chunk
/// (bench/ANALYSIS.md, issue 35); the concrete strand costs a pointer copy.
using io_strand = boost::asio::strand<boost::asio::io_context::executor_type>;

class flex_stream {
public:
  using tcp_layer = boost::beast::basic_stream<boost::asio::ip::tcp, io_strand>;
  using socket_type = tcp_layer::socket_type;
  using tls_layer = boost::beast::ssl_stream<tcp_layer>;
  using executor_type = tcp_layer::executor_type;
  using error_code = boost::system::error_code;

  explicit flex_stream(tcp_layer&& s, connection_slot slot = {})
    : plain_(std::move(s)), slot_(std::move(slot)) {
  }
  flex_stream(flex_stream&&) = default;
  flex_stream& operator=(flex_stream&&) = default;

  /// From now on every byte goes through TLS with `ctx` (kept alive here,
  /// so a reload does not pull it from under this connection).
  void start_tls(std::shared_ptr<tls_context_box> ctx) {
    ctx_ = std::move(ctx);
    tls_ = std::make_unique<tls_layer>(std::move(*plain_), ctx_->ctx);
    plain_.reset();
  }

  bool is_tls() const {
    return tls_ != nullptr;
  }
  tls_layer& tls() {
    return *tls_;
  }

  executor_type get_executor() noexcept {
    return next_layer().get_executor();
  }
  tcp_layer& next_layer() noexcept {
    return tls_ ? tls_->next_layer() : *plain_;
  }
  const tcp_layer& next_layer() const noexcept {
    return tls_ ? tls_->next_layer() : *plain_;
  }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& b, Token&& token) {
    return boost::asio::async_initiate<Token, void(error_code, std::size_t)>(
      [this](auto h, const Buffers& bufs) {
        if (tls_)
          tls_->async_read_some(bufs, std::move(h));
        else
          plain_->async_read_some(bufs, std::move(h));
      },
      token, b);
  }

  template <class Buffers, class Token>
  auto async_write_some(const Buffers& b, Token&& token) {
    return boost::asio::async_initiate<Token, void(error_code, std::size_t)>(
      [this](auto h, const Buffers& bufs) {
        if (tls_)
          tls_->async_write_some(bufs, std::move(h));
        else
          plain_->async_write_some(bufs, std::move(h));
      },
      token, b);
  }

  // Synchronous forms, for the blocking command-line client.
  template <class Buffers>
  std::size_t read_some(const Buffers& b, error_code& ec) {
    return tls_ ? tls_->read_some(b, ec) : plain_->socket().read_some(b, ec);
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& b) {
    return tls_ ? tls_->read_some(b) : plain_->socket().read_some(b);
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& b, error_code& ec) {
    return tls_ ? tls_->write_some(b, ec) : plain_->socket().write_some(b, ec);
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& b) {
    return tls_ ? tls_->write_some(b) : plain_->socket().write_some(b);
  }

  /// A plain connection's socket, and its slot into `slot`, for a session
  /// that drives the socket itself (lean_ws_session.cpp); the stream is
  /// empty afterwards.
  socket_type release_plain(connection_slot& slot) {
    slot = std::move(slot_);
    return plain_->release_socket();
  }

private:
  std::shared_ptr<tls_context_box> ctx_; // declared first: destroyed after tls_
  std::optional<tcp_layer> plain_;
  std::unique_ptr<tls_layer> tls_;
  connection_slot slot_;
};

// The WebSocket close of either kind of connection (found by ADL).
template <class Handler>
void async_teardown(boost::beast::role_type role, flex_stream& s, Handler&& handler) {
  using boost::beast::websocket::async_teardown;
  if (s.is_tls())
    async_teardown(role, s.tls(), std::forward<Handler>(handler));
  else
    async_teardown(role, s.next_layer(), std::forward<Handler>(handler));
}

inline void teardown(boost::beast::role_type role, flex_stream& s,
                     boost::system::error_code& ec) {
  using boost::beast::websocket::teardown;
  if (s.is_tls())
    teardown(role, s.tls(), ec);
  else
    teardown(role, s.next_layer().socket(), ec);
}

/// Applies the TLS settings common to both roles.
void harden(boost::asio::ssl::context& ctx);

/// Client side, before the handshake: SNI and verification of the server's
/// certificate against `host` (a name or an IP address).
void verify_server_name(flex_stream::tls_layer& s, const std::string& host);

/// An OpenSSL handshake error as a person reads it ("certificate verify
/// failed: self-signed certificate in certificate chain").
std::string describe_tls_error(const boost::system::error_code& ec, flex_stream::tls_layer* s);

} // namespace actor_host::net
