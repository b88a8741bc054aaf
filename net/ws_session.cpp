#include "net/detail/ws_session.hpp"

#include "net/detail/beast_names.hpp"
#include "net/detail/message_reader.hpp"
#include "net/handler_tail.hpp"
#include "net/detail/write_gate.hpp"
#include "net/detail/ws_writer.hpp"
#include "net/liveness.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace actor_host::net {

namespace {

class ws_session : public transport,
                   public pingable,
                   public detail::ws_writer<ws_session>,
                   public std::enable_shared_from_this<ws_session> {
  friend class detail::ws_writer<ws_session>;

public:
  ws_session(flex_stream&& stream, ws_limits limits, std::shared_ptr<socket_counters> counters,
             std::string peer)
    : ws_writer(limits.max_write_queue_bytes, std::move(counters)), ws_(std::move(stream)),
      strand_(ws_.get_executor()), limits_(limits), peer_(std::move(peer)),
      messages_(limits.max_frame_bytes) {
    ++counters_->websockets;
  }

  ~ws_session() override {
    --counters_->websockets;
  }

  // The factory (and on_fail) ride in the handshake's handler rather than
  // in the session: a connection keeps nothing of them once it is open.
  void accept(http::request<http::string_body> req, upgrade_request up, session_factory factory,
              bool keep_upgrade) {
    configure(beast::role_type::server);
    upgrade_ = std::make_unique<upgrade_request>(std::move(up));
    keep_upgrade_ = keep_upgrade;
    watch_beast_writes();
    // Beast builds the response from `req` in this call: the request (its
    // headers) is not kept for the handshake.
    ws_.async_accept(req, [self = shared_from_this(), f = std::move(factory)](error_code ec) {
      self->on_accept(ec, f, nullptr);
    });
  }

  void handshake(const std::string& host, const std::string& target, session_factory factory,
                 std::function<void(std::string)> on_fail) {
    configure(beast::role_type::client);
    watch_beast_writes();
    enc_.use_masks(); // client frames are masked (RFC 6455 §5.3)
    ws_.async_handshake(host, target,
                        [self = shared_from_this(), f = std::move(factory),
                         fail = std::move(on_fail)](error_code ec) mutable {
                          self->on_accept(ec, f, std::move(fail));
                        });
  }

  void send_text(std::string frame) override {
    enqueue(out_frame{std::move(frame), false});
  }

  void send_binary(std::string frame) override {
    enqueue(out_frame{std::move(frame), true});
  }

  // dispatch: called on the strand (by a handler, inside on_read), the
  // pause holds before the next read is started. A closing session keeps
  // reading: that read reports the end to the handler.
  void pause_reading() override {
    asio::dispatch(strand_, [self = shared_from_this()] {
      if (!self->closing_ && !self->closed_)
        self->read_paused_ = true;
    });
  }

  void resume_reading() override {
    asio::post(strand_, [self = shared_from_this()] {
      self->read_paused_ = false;
      if (self->read_parked_ && !self->closed_) {
        self->read_parked_ = false;
        self->do_read();
      }
    });
  }

  void close(std::uint16_t code, std::string reason) override {
    // Frames sent after close() are dropped, as the transport promises.
    q_.close_inbox();
    hold_.post_in_order(strand_,
                        [self = shared_from_this(), code, r = std::move(reason)]() mutable {
                          self->on_close_request(code, std::move(r));
                        });
  }

  void drop() override {
    q_.close_inbox();
    hold_.post_in_order(strand_, [self = shared_from_this()] {
      if (self->closed_)
        return;
      self->closing_ = true;
      self->unpark();
      error_code ignored;
      beast::get_lowest_layer(self->ws_).socket().close(ignored);
    });
  }

  // One ping of ours in flight at a time (Beast has one slot for it); the
  // callers that come meanwhile share its pong.
  void ping(std::function<void()> on_pong) override {
    asio::post(strand_, [self = shared_from_this(), f = std::move(on_pong)]() mutable {
      if (self->closing_ || self->closed_)
        return;
      self->pong_waiters_.push_back(std::move(f));
      if (self->pinging_)
        return;
      self->pinging_ = true;
      self->ws_.async_ping(websocket::ping_data{probe_payload},
                           [self](error_code) { self->pinging_ = false; });
    });
  }

  const std::string& peer() const override {
    return peer_;
  }

  // Read on the strand or, for a route that keeps it, from anywhere: it is
  // only released (on the strand, right after the factory) for routes whose
  // factory is its only reader.
  const upgrade_request& upgrade() const override {
    static const upgrade_request none;
    return upgrade_ ? *upgrade_ : none;
  }

private:
  // When Beast's own control-frame write finishes, a batch that waited for it
  // can go.
  void watch_beast_writes() {
    ws_.next_layer().on_idle([w = weak_from_this()] {
      if (auto self = w.lock())
        self->on_beast_idle();
    });
  }

  void on_beast_idle() {
    if (!writing_ && q_.queued() > 0)
      do_write();
  }

  void configure(beast::role_type role) {
    websocket::stream_base::timeout t;
    t.handshake_timeout = std::chrono::seconds(30);
    // Pings every half period find dead peers (a runtime whose host vanished)
    // without any JSON-RPC heartbeat; every Reflection V2 peer answers pings.
    t.idle_timeout = limits_.idle_timeout;
    t.keep_alive_pings = true;
    ws_.set_option(t);
    // The cap is ours (on_read): a message over it is read and dropped, so
    // a handler that takes it (a runtime's link) keeps the connection.
    ws_.read_message_max(0);
    // Pongs to our liveness pings (Beast's keep-alive pings carry no payload).
    ws_.control_callback([this](websocket::frame_type kind, beast::string_view payload) {
      if (kind != websocket::frame_type::pong || payload != probe_payload)
        return;
      for (auto& f : std::exchange(pong_waiters_, {}))
        f();
    });
    if (role == beast::role_type::server)
      ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "actor-host"); }));
    else
      ws_.set_option(websocket::stream_base::decorator(
        [](websocket::request_type& req) { req.set(http::field::user_agent, "actor-host"); }));
    error_code ignored;
    beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay{true}, ignored);
  }

  void on_accept(error_code ec, const session_factory& factory,
                 std::function<void(std::string)> on_fail) {
    if (ec) {
      spdlog::debug("websocket handshake with {} failed: {}", peer_, ec.message());
      if (on_fail)
        on_fail("websocket handshake failed: " + ec.message());
      return;
    }
    handler_ = factory(shared_from_this());
    // The upgrade's headers and query (~0.7 KB) would stay for the
    // connection's life; a route whose handler has read them by now lets go.
    if (!keep_upgrade_)
      upgrade_.reset();
    do_read();
  }

  // The next read, unless the reader paused us: then the read waits for
  // resume_reading (no read outstanding, so TCP pushes back on the peer).
  void read_next() {
    if (read_paused_) {
      read_parked_ = true;
      return;
    }
    do_read();
  }

  // Closing: a read must be outstanding again so that its completion reports
  // the end to the handler.
  void unpark() {
    read_paused_ = false;
    if (read_parked_) {
      read_parked_ = false;
      do_read();
    }
  }

  void do_read() {
    // A message comes in parts (usually one): each part is checked against
    // the cap before the next is read.
    ws_.async_read_some(buffer_, 0,
                        beast::bind_front_handler(&ws_session::on_read, shared_from_this()));
  }

  std::string_view read_view() const {
    auto data = buffer_.cdata();
    return {static_cast<const char*>(data.data()), data.size()};
  }

  void on_read(error_code ec, std::size_t) {
    tail_scope tail{tail_scope::reading}; // its actors run at the end (handler_tail.hpp)
    if (ec)
      return on_done(ec);
    using outcome = detail::message_reader::outcome;
    // Beast has checked a text message's UTF-8.
    auto r = messages_.add(read_view(), ws_.got_text(), ws_.is_message_done(), handler_, closing_,
                           *counters_, false);
    buffer_.consume(buffer_.size());
    switch (r) {
      case outcome::more:
      case outcome::bad_utf8:
        break;
      case outcome::too_big:
        // The rest is read and dropped while the socket closes (1009).
        if (!closing_)
          spdlog::warn("closed {}: message larger than {} bytes", peer_,
                       limits_.max_frame_bytes);
        on_close_request(static_cast<std::uint16_t>(websocket::close_code::too_big),
                         "message too big");
        return do_read();
      case outcome::refuse_binary:
        spdlog::warn("closing {}: binary frame (only JSON text frames are accepted)", peer_);
        on_close_request(static_cast<std::uint16_t>(websocket::close_code::bad_payload),
                         "binary frames are not supported");
        return do_read();
    }
    if (!ws_.is_message_done())
      return do_read();
    read_next();
  }

  void on_done(error_code ec) {
    closed_ = true;
    std::string reason;
    if (ec == websocket::error::closed)
      reason = "closed by peer";
    else
      reason = ec.message();
    if (messages_.oversize_closing())
      reason = "message larger than " + std::to_string(limits_.max_frame_bytes) + " bytes";
    if (auto h = std::move(handler_)) {
      if (ec == websocket::error::closed)
        h->on_peer_close(static_cast<std::uint16_t>(ws_.reason().code),
                         std::string{ws_.reason().reason.c_str()});
      h->on_closed(std::move(reason));
    }
  }

  bool write_stopped() const {
    return closed_ || closing_;
  }

  // A pending read, started again if none is, reports the end.
  void drop_socket() {
    unpark();
    error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

  // Writes the queued frames, as many as one batch holds, with one
  // async_write on the socket: frames are encoded here (FIN, no extensions,
  // masked on the client side), Beast is bypassed for data.
  void do_write() {
    if (!ws_.is_open()) {
      // Beast got or sent a close frame: nothing may follow it (Beast's own
      // write would fail with websocket::error::closed here).
      q_.drop();
      return;
    }
    if (ws_.next_layer().beast_writing())
      return; // on_beast_idle resumes
    enc_.encode(q_.begin(), q_.end());
    writing_ = true;
    ws_.next_layer().raw_begin();
    // Through TLS when the connection has it: the flex stream, not the socket.
    asio::async_write(ws_.next_layer().next_layer(), enc_.buffers(),
                      beast::bind_front_handler(&ws_session::on_write, shared_from_this()));
  }

  void on_write(error_code ec, std::size_t) {
    writing_ = false;
    // A control frame Beast wanted to write during the batch goes first.
    ws_.next_layer().raw_end();
    if (!written(ec))
      return;
    if (q_.queued() > 0)
      return do_write();
    if (closing_ && !closed_)
      do_close();
  }

  void on_close_request(std::uint16_t code, std::string reason) {
    if (closing_ || closed_)
      return;
    closing_ = true;
    unpark();
    close_code_ = code;
    close_text_ = std::move(reason);
    // Otherwise on_write closes once the queue has drained.
    if (!writing_ && q_.queued() == 0)
      do_close();
  }

  void do_close() {
    // Beast's close_reason holds a fixed 123-byte reason: built only now.
    websocket::close_reason why(static_cast<websocket::close_code>(close_code_), close_text_);
    ws_.async_close(why, [self = shared_from_this()](error_code) {
      // nop: the pending read completes with websocket::error::closed
    });
  }

  websocket::stream<write_gate> ws_;
  const io_strand strand_; // ws_'s, by its concrete type
  ws_limits limits_;
  std::string peer_;
  std::unique_ptr<upgrade_request> upgrade_; // client side: none
  bool keep_upgrade_ = true;
  frame_handler_ptr handler_;
  beast::flat_buffer buffer_; // one read's bytes (Beast prepares 1,536)
  detail::message_reader messages_; // the message being read, in its pieces
  // Strand only from here on.
  std::uint16_t close_code_ = 1000;
  std::string close_text_;
  bool read_paused_ = false;
  bool read_parked_ = false; // paused with no read outstanding
  bool closing_ = false;
  bool closed_ = false;
  static constexpr const char* probe_payload = "actor-host-probe";
  std::vector<std::function<void()>> pong_waiters_;
  bool pinging_ = false;
};


} // namespace

void run_server_websocket(flex_stream&& stream, http_request_message&& req, upgrade_request up,
                          std::string peer, const session_factory& factory, bool keep_upgrade,
                          ws_limits limits, std::shared_ptr<socket_counters> counters) {
  if (!stream.is_tls())
    return detail::run_lean_server_websocket(std::move(stream), req, std::move(up),
                                             std::move(peer), factory, keep_upgrade, limits,
                                             std::move(counters));
  auto s = std::make_shared<ws_session>(std::move(stream), limits, std::move(counters),
                                        std::move(peer));
  s->accept(std::move(req), std::move(up), factory, keep_upgrade);
}

void run_client_websocket(flex_stream&& stream, std::string peer, const std::string& host,
                          const std::string& target, session_factory factory,
                          std::function<void(std::string)> on_fail, ws_limits limits,
                          std::shared_ptr<socket_counters> counters) {
  auto s = std::make_shared<ws_session>(std::move(stream), limits, std::move(counters),
                                        std::move(peer));
  s->handshake(host, target, std::move(factory), std::move(on_fail));
}

} // namespace actor_host::net
