// The closing half of lean_ws_session (net/detail/lean_ws_session.hpp): the
// peer's close and ours, a protocol failure, the socket's end, liveness
// probes and the keep-alive timer.

#include "net/detail/lean_ws_session.hpp"

#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>

#include <utility>

namespace actor_host::net::detail {

void lean_ws_session::close(std::uint16_t code, std::string reason) {
  q_.close_inbox(); // frames sent after close() are dropped
  hold_.post_in_order(strand_,
                      [self = shared_from_this(), code, r = std::move(reason)]() mutable {
                        self->on_close_request(code, std::move(r));
                      });
}

void lean_ws_session::drop() {
  q_.close_inbox();
  hold_.post_in_order(strand_, [self = shared_from_this()] {
    self->closing_ = true;
    self->shut();
  });
}

void lean_ws_session::ping(std::function<void()> on_pong) {
  boost::asio::post(strand_, [self = shared_from_this(), f = std::move(on_pong)]() mutable {
    if (self->closing_ || self->ended_)
      return;
    self->pong_waiters_.push_back(std::move(f));
    if (!std::exchange(self->probing_, true))
      self->send_control(op_ping, probe_payload);
  });
}

bool lean_ws_session::on_control(std::uint8_t opcode, std::string_view payload) {
  if (opcode == op_ping) {
    // A few pongs wait at most: a peer that pings without reading cannot
    // grow the queue. Not one: a Beast peer sends its keep-alive ping and
    // its probe together, and the probe's pong must go.
    if (!close_sent_ && pongs_queued_ < max_pongs_queued) {
      ++pongs_queued_;
      send_control(op_pong, payload);
    }
    return reading();
  }
  if (opcode == op_pong) {
    if (payload == probe_payload) {
      probing_ = false;
      for (auto& f : std::exchange(pong_waiters_, {}))
        f();
    }
    return reading();
  }
  // The peer's close: ours answered it, or we echo its code (§5.5.1). No
  // frame after it is read.
  peer_closed_ = true;
  peer_code_ = payload.size() >= 2
                 ? static_cast<std::uint16_t>((static_cast<std::uint8_t>(payload[0]) << 8)
                                              | static_cast<std::uint8_t>(payload[1]))
                 : 0;
  if (payload.size() > 2)
    peer_reason_.assign(payload.substr(2));
  if (close_sent_) {
    shut();
    return false;
  }
  closing_ = true;
  q_.close_inbox();
  drop_unsent();
  std::string echo;
  if (peer_code_ != 0)
    echo = std::string{payload.substr(0, 2)};
  push_close(std::move(echo));
  return false;
}

void lean_ws_session::on_close_request(std::uint16_t code, std::string reason) {
  if (closing_ || ended_)
    return;
  closing_ = true;
  close_code_ = code;
  close_text_ = std::move(reason);
  read_paused_ = false;
  unpark();
  // Otherwise on_write closes once the queue has drained.
  if (!writing_ && q_.queued() == 0)
    send_close();
}

void lean_ws_session::send_close() {
  std::string payload;
  payload.push_back(static_cast<char>(close_code_ >> 8));
  payload.push_back(static_cast<char>(close_code_ & 0xff));
  // A control frame's payload is at most 125 bytes (§5.5).
  payload.append(close_text_.substr(0, 123));
  push_close(std::move(payload));
  arm_timer(close_timeout);
}

void lean_ws_session::push_close(std::string payload) {
  close_sent_ = true;
  send_control(op_close, payload);
}

void lean_ws_session::fail(std::uint16_t code, const char* what) {
  spdlog::warn("closing {}: {} ({})", peer_, what, code);
  failed_code_ = code;
  failure_ = what;
  if (close_sent_)
    return shut();
  closing_ = true;
  q_.close_inbox();
  drop_unsent();
  close_code_ = code;
  close_text_ = what;
  send_close();
}

void lean_ws_session::shut() {
  if (shut_)
    return;
  shut_ = true;
  error_code ignored;
  sock_.shutdown(tcp::socket::shutdown_both, ignored);
  sock_.close(ignored);
  timer_.cancel();
  if (peer_closed_)
    return end("closed by peer");
  if (failed_code_ != 0)
    return end(failure_);
  read_paused_ = false;
  if (read_parked_)
    read_parked_ = false;
  if (!waiting_)
    do_wait(); // fails at once: the socket is closed
}

void lean_ws_session::end(std::string reason) {
  if (ended_)
    return;
  ended_ = true;
  q_.close_inbox();
  if (!shut_) {
    shut_ = true;
    error_code ignored;
    sock_.close(ignored);
    timer_.cancel();
  }
  if (messages_.oversize_closing())
    reason = "message larger than " + std::to_string(limits_.max_frame_bytes) + " bytes";
  pong_waiters_.clear();
  if (auto h = std::move(handler_)) {
    if (peer_closed_)
      h->on_peer_close(peer_code_, std::move(peer_reason_));
    h->on_closed(std::move(reason));
  }
}

void lean_ws_session::arm_timer(std::chrono::steady_clock::duration d) {
  timer_.expires_after(d);
  timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec)
      self->on_timer();
  });
}

void lean_ws_session::on_timer() {
  if (ended_ || shut_)
    return;
  if (close_sent_) {
    spdlog::debug("{}: no close frame back within {} s", peer_, close_timeout.count());
    shut();
    return;
  }
  if (std::exchange(heard_, false)) {
    idle_pinged_ = false;
  } else if (!idle_pinged_) {
    idle_pinged_ = true;
    send_control(op_ping, {});
  } else {
    spdlog::debug("{}: silent for {} ms, closing", peer_, limits_.idle_timeout.count());
    closing_ = true;
    shut();
    return end("The socket was closed due to a timeout");
  }
  arm_timer(limits_.idle_timeout / 2);
}

} // namespace actor_host::net::detail
