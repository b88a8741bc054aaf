// The server side of a plain (not TLS) WebSocket after Beast has read the
// upgrade request: frames read and written on the socket itself. An idle
// connection waits for readability with no buffer; a wake-up reads up to
// 64 KiB into the I/O thread's scratch buffer and hands on every frame in it
// (Beast's stream kept ~7 KB per idle connection and saw one frame per read
// handler). TLS connections and clients keep Beast (ws_session.cpp).

#include "net/detail/lean_ws_session.hpp"

#include "net/detail/write_now.hpp"
#include "net/handler_tail.hpp"
#include "net/detail/ws_handshake.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace actor_host::net::detail {

namespace {

// Shared by the connections of one I/O thread: a read hands on copies (the
// frames) or pieces collected by the session, never the buffer itself.
char* read_scratch() {
  thread_local std::unique_ptr<char[]> buf{new char[lean_ws_session::scratch_bytes]};
  return buf.get();
}

} // namespace

void lean_ws_session::accept(const http_request_message& req, upgrade_request up,
                             session_factory factory, bool keep_upgrade) {
  bool ok = false;
  auto answer = std::make_shared<std::string>(detail::ws_handshake_response(req, ok));
  error_code ignored;
  sock_.set_option(tcp::no_delay{true}, ignored);
  sock_.non_blocking(true, ignored); // reads are tried, not waited in
  upgrade_ = std::make_unique<upgrade_request>(std::move(up));
  keep_upgrade_ = keep_upgrade;
  boost::asio::async_write(
    sock_, boost::asio::buffer(*answer),
    [self = shared_from_this(), answer, ok, f = std::move(factory)](error_code ec, std::size_t) {
      self->on_accepted(ec, ok, f);
    });
}

void lean_ws_session::pause_reading() {
  boost::asio::dispatch(strand_, [self = shared_from_this()] {
    if (!self->closing_ && !self->ended_)
      self->read_paused_ = true;
  });
}

void lean_ws_session::resume_reading() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    self->read_paused_ = false;
    self->unpark();
  });
}

bool lean_ws_session::on_data(std::string_view piece, bool text, bool last) {
  using outcome = detail::message_reader::outcome;
  switch (messages_.add(piece, text, last, handler_, closing_, *counters_, true)) {
    case outcome::more:
      break;
    case outcome::too_big:
      if (!closing_)
        spdlog::warn("closed {}: message larger than {} bytes", peer_,
                     limits_.max_frame_bytes);
      on_close_request(1009, "message too big");
      break;
    case outcome::refuse_binary:
      spdlog::warn("closing {}: binary frame (only JSON text frames are accepted)", peer_);
      on_close_request(1003, "binary frames are not supported");
      break;
    case outcome::bad_utf8:
      fail(1007, "text message is not UTF-8");
      return false;
  }
  return reading();
}

void lean_ws_session::on_accepted(error_code ec, bool ok, const session_factory& factory) {
  if (ec || !ok) {
    spdlog::debug("websocket handshake with {} failed: {}", peer_,
                  ec ? ec.message() : "refused upgrade request");
    error_code ignored;
    sock_.shutdown(tcp::socket::shutdown_both, ignored);
    sock_.close(ignored);
    return;
  }
  handler_ = factory(shared_from_this());
  // The upgrade's headers and query (~0.7 KB) would stay for the
  // connection's life; a route whose handler has read them by now lets go.
  if (!keep_upgrade_)
    upgrade_.reset();
  arm_timer(limits_.idle_timeout / 2);
  do_wait();
}

void lean_ws_session::do_wait() {
  if (waiting_)
    return;
  waiting_ = true;
  sock_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
    self->waiting_ = false;
    self->on_readable(ec);
  });
}

void lean_ws_session::on_readable(error_code ec) {
  // The actors the frames wake run when every frame of this wake-up is
  // handed on (handler_tail.hpp).
  tail_scope tail{tail_scope::reading};
  if (ended_)
    return;
  if (ec)
    return end(ec.message());
  char* buf = read_scratch();
  for (int k = 0; k < reads_per_wakeup; ++k) {
    const std::size_t n = sock_.read_some(boost::asio::buffer(buf, scratch_bytes), ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again)
      break;
    if (ec)
      return end(ec.message());
    heard_ = true;
    if (!take(buf, n))
      return;
    if (n < scratch_bytes)
      break;
  }
  do_wait();
}

bool lean_ws_session::take(char* p, std::size_t n) {
  const std::size_t used = reader_.feed(p, n, *this);
  if (reader_.failed() != 0) {
    fail(reader_.failed(), reader_.failure());
    return false;
  }
  if (ended_ || peer_closed_)
    return false;
  if (read_paused_) {
    held_.assign(p + used, n - used);
    read_parked_ = true;
    return false;
  }
  return true;
}

void lean_ws_session::unpark() {
  if (!read_parked_ || ended_ || read_paused_)
    return;
  read_parked_ = false;
  if (!held_.empty()) {
    std::string rest = std::move(held_);
    held_.clear();
    if (!take(rest.data(), rest.size()))
      return;
  }
  do_wait();
}

void lean_ws_session::send_control(std::uint8_t opcode, std::string_view payload) {
  q_.push_now(out_frame{std::string{payload}, false, opcode});
  if (!writing_)
    do_write();
}

void lean_ws_session::do_write() {
  if (q_.queued() == 0 || shut_)
    return;
  enc_.encode(q_.begin(), q_.end());
  writing_ = true;
  write_now(sock_, enc_.buffers(), [self = shared_from_this()](error_code ec) {
    self->on_write(ec);
  });
}

void lean_ws_session::on_write(error_code ec) {
  if (!written(ec))
    return;
  if (q_.queued() == 0)
    pongs_queued_ = 0;
  if (q_.queued() > 0)
    return do_write();
  if (close_sent_ && (peer_closed_ || failed_code_ != 0))
    return shut(); // our echo, or the close of a failed connection, went out
  if (closing_ && !close_sent_)
    send_close();
}

void run_lean_server_websocket(flex_stream&& stream, const http_request_message& req,
                               upgrade_request up, std::string peer,
                               const session_factory& factory, bool keep_upgrade,
                               ws_limits limits, std::shared_ptr<socket_counters> counters) {
  connection_slot slot;
  auto sock = stream.release_plain(slot);
  auto s = std::make_shared<lean_ws_session>(std::move(sock), std::move(slot), limits,
                                             std::move(counters), std::move(peer));
  s->accept(req, std::move(up), factory, keep_upgrade);
}

} // namespace actor_host::net::detail
