// The server side of a plain (not TLS) WebSocket after Beast has read the
// upgrade request: frames read and written on the socket itself. An idle
// connection waits for readability with no buffer; a wake-up reads up to
// 64 KiB into the I/O thread's scratch buffer and hands on every frame in it
// (Beast's stream kept ~7 KB per idle connection and saw one frame per read
// handler). TLS connections and clients keep Beast (ws_session.cpp).

#include "net/detail/message_reader.hpp"
#include "net/detail/ws_frame_reader.hpp"
#include "net/detail/ws_handshake.hpp"
#include "net/detail/ws_session.hpp"
#include "net/detail/ws_writer.hpp"
#include "net/liveness.hpp"

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace actor_host::net {

namespace {

using tcp = boost::asio::ip::tcp;
using error_code = boost::system::error_code;
using socket_type = flex_stream::socket_type;
using timer_type = boost::asio::basic_waitable_timer<
  std::chrono::steady_clock, boost::asio::wait_traits<std::chrono::steady_clock>, io_strand>;

constexpr std::uint8_t op_close = 0x8;
constexpr std::uint8_t op_ping = 0x9;
constexpr std::uint8_t op_pong = 0xA;

// One wake-up reads at most this many times this much, then lets the other
// connections of the I/O thread have their turn.
constexpr std::size_t scratch_bytes = 64 * 1024;
constexpr int reads_per_wakeup = 4;
// How long our close frame waits for the peer's (Beast's handshake timeout).
constexpr std::chrono::seconds close_timeout{30};
// Pongs that may wait unwritten at once; pings past them go unanswered.
constexpr int max_pongs_queued = 8;

// Shared by the connections of one I/O thread: a read hands on copies (the
// frames) or pieces collected by the session, never the buffer itself.
char* read_scratch() {
  thread_local std::unique_ptr<char[]> buf{new char[scratch_bytes]};
  return buf.get();
}

class lean_ws_session : public transport,
                        public pingable,
                        public detail::ws_frame_sink,
                        public detail::ws_writer<lean_ws_session>,
                        public std::enable_shared_from_this<lean_ws_session> {
  friend class detail::ws_writer<lean_ws_session>;

public:
  lean_ws_session(socket_type&& s, connection_slot slot, ws_limits limits,
                  std::shared_ptr<socket_counters> counters, std::string peer)
    : ws_writer(limits.max_write_queue_bytes, std::move(counters)), sock_(std::move(s)),
      strand_(sock_.get_executor()), timer_(strand_), slot_(std::move(slot)), limits_(limits),
      peer_(std::move(peer)), messages_(limits.max_frame_bytes) {
    ++counters_->websockets;
  }

  ~lean_ws_session() override {
    --counters_->websockets;
  }

  void accept(const http_request_message& req, upgrade_request up, session_factory factory,
              bool keep_upgrade) {
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

  // -- transport ---------------------------------------------------------------

  void send_text(std::string frame) override {
    enqueue(out_frame{std::move(frame), false});
  }

  void send_binary(std::string frame) override {
    enqueue(out_frame{std::move(frame), true});
  }

  // dispatch: called by a handler inside a read, the pause holds before the
  // next frame is handed on. A closing session keeps reading: its reads
  // report the end.
  void pause_reading() override {
    boost::asio::dispatch(strand_, [self = shared_from_this()] {
      if (!self->closing_ && !self->ended_)
        self->read_paused_ = true;
    });
  }

  void resume_reading() override {
    boost::asio::post(strand_, [self = shared_from_this()] {
      self->read_paused_ = false;
      self->unpark();
    });
  }

  void close(std::uint16_t code, std::string reason) override {
    q_.close_inbox(); // frames sent after close() are dropped
    hold_.post_in_order(strand_,
                        [self = shared_from_this(), code, r = std::move(reason)]() mutable {
                          self->on_close_request(code, std::move(r));
                        });
  }

  void drop() override {
    q_.close_inbox();
    hold_.post_in_order(strand_, [self = shared_from_this()] {
      self->closing_ = true;
      self->shut();
    });
  }

  const std::string& peer() const override {
    return peer_;
  }

  const upgrade_request& upgrade() const override {
    static const upgrade_request none;
    return upgrade_ ? *upgrade_ : none;
  }

  // -- pingable ----------------------------------------------------------------

  // One probe in flight at a time; callers that come meanwhile share its pong.
  void ping(std::function<void()> on_pong) override {
    boost::asio::post(strand_, [self = shared_from_this(), f = std::move(on_pong)]() mutable {
      if (self->closing_ || self->ended_)
        return;
      self->pong_waiters_.push_back(std::move(f));
      if (!std::exchange(self->probing_, true))
        self->send_control(op_ping, probe_payload);
    });
  }

  // -- ws_frame_sink: what a read finds ------------------------------------------

  bool on_data(std::string_view piece, bool text, bool last) override {
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

  bool on_control(std::uint8_t opcode, std::string_view payload) override {
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

private:
  void on_accepted(error_code ec, bool ok, const session_factory& factory) {
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

  // -- reading -----------------------------------------------------------------

  // Whether the read goes on to the next frame.
  bool reading() const {
    return !read_paused_ && !peer_closed_ && !ended_ && reader_.failed() == 0;
  }

  void do_wait() {
    if (waiting_)
      return;
    waiting_ = true;
    sock_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
      self->waiting_ = false;
      self->on_readable(ec);
    });
  }

  void on_readable(error_code ec) {
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

  // Hands on the frames in `p`; false when reading stops here: paused (the
  // rest is kept for resume_reading), or the connection ends.
  bool take(char* p, std::size_t n) {
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

  // Closing or resumed: reading goes on, with what a pause held first.
  void unpark() {
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

  // -- writing -----------------------------------------------------------------

  bool write_stopped() const {
    return ended_ || closing_;
  }

  void drop_socket() {
    shut();
  }

  void send_control(std::uint8_t opcode, std::string_view payload) {
    q_.push_now(out_frame{std::string{payload}, false, opcode});
    if (!writing_)
      do_write();
  }

  void do_write() {
    if (q_.queued() == 0 || shut_)
      return;
    enc_.encode(q_.begin(), q_.end());
    writing_ = true;
    boost::asio::async_write(sock_, enc_.buffers(),
                             [self = shared_from_this()](error_code ec, std::size_t) {
                               self->on_write(ec);
                             });
  }

  void on_write(error_code ec) {
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

  // -- closing -----------------------------------------------------------------

  void on_close_request(std::uint16_t code, std::string reason) {
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

  void send_close() {
    std::string payload;
    payload.push_back(static_cast<char>(close_code_ >> 8));
    payload.push_back(static_cast<char>(close_code_ & 0xff));
    // A control frame's payload is at most 125 bytes (§5.5).
    payload.append(close_text_.substr(0, 123));
    push_close(std::move(payload));
    arm_timer(close_timeout);
  }

  void push_close(std::string payload) {
    close_sent_ = true;
    send_control(op_close, payload);
  }

  // The peer broke the protocol: our close frame with `code`, then the
  // socket goes without waiting for the peer's (§7.1.7).
  void fail(std::uint16_t code, const char* what) {
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

  // The socket goes; the wait outstanding (or the next) reports the end.
  void shut() {
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

  // The handler learns the end once; the session goes with the last handler
  // holding it.
  void end(std::string reason) {
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

  // -- the timer: keep-alive pings while open, the close handshake's limit --------

  void arm_timer(std::chrono::steady_clock::duration d) {
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec)
        self->on_timer();
    });
  }

  // Silent for half the idle timeout: a ping; for the whole: gone (Beast's
  // keep-alive pings, which every Reflection V2 peer answers).
  void on_timer() {
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

  socket_type sock_;
  const io_strand strand_;
  timer_type timer_;
  connection_slot slot_;
  ws_limits limits_;
  std::string peer_;
  std::unique_ptr<upgrade_request> upgrade_;
  bool keep_upgrade_ = true;
  frame_handler_ptr handler_;
  detail::ws_frame_reader reader_;
  detail::message_reader messages_;
  std::string held_;            // read while paused, handed on at resume
  // Strand only from here on.
  std::uint16_t close_code_ = 1000;
  std::string close_text_;
  std::uint16_t peer_code_ = 0;
  std::string peer_reason_;
  std::uint16_t failed_code_ = 0;
  const char* failure_ = "";
  bool waiting_ = false;
  bool read_paused_ = false;
  bool read_parked_ = false; // paused with no wait outstanding
  bool heard_ = false;       // bytes came since the timer's last look
  bool idle_pinged_ = false;
  bool closing_ = false;
  bool close_sent_ = false;
  bool peer_closed_ = false;
  bool shut_ = false;
  bool ended_ = false;
  bool probing_ = false;
  int pongs_queued_ = 0; // since the queue last drained
  static constexpr std::string_view probe_payload = "actor-host-probe";
  std::vector<std::function<void()>> pong_waiters_;
};

} // namespace

namespace detail {

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

} // namespace detail

} // namespace actor_host::net
