#include "net/detail/ws_session.hpp"

#include "net/detail/beast_names.hpp"
#include "net/detail/message_meter.hpp"
#include "net/detail/write_gate.hpp"
#include "net/detail/ws_frame_encoder.hpp"
#include "net/liveness.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace actor_host::net {

namespace {

// simdjson reads up to this many bytes past the end of a frame.
constexpr std::size_t simdjson_padding = 64;

class ws_session : public transport,
                   public pingable,
                   public std::enable_shared_from_this<ws_session> {
public:
  ws_session(flex_stream&& stream, ws_limits limits, std::shared_ptr<socket_counters> counters,
             std::string peer)
    : ws_(std::move(stream)), strand_(ws_.get_executor()), limits_(limits),
      counters_(std::move(counters)), peer_(std::move(peer)), meter_(limits.max_frame_bytes) {
    ++counters_->websockets;
  }

  ~ws_session() override {
    --counters_->websockets;
    counters_->queued_bytes.fetch_sub(static_cast<std::int64_t>(out_bytes_),
                                      std::memory_order_relaxed);
  }

  void accept(http::request<http::string_body> req, upgrade_request up, session_factory factory) {
    configure(beast::role_type::server);
    upgrade_ = std::move(up);
    factory_ = std::move(factory);
    watch_beast_writes();
    ws_.async_accept(req, beast::bind_front_handler(&ws_session::on_accept, shared_from_this()));
  }

  void handshake(const std::string& host, const std::string& target, session_factory factory,
                 std::function<void(std::string)> on_fail) {
    configure(beast::role_type::client);
    factory_ = std::move(factory);
    on_fail_ = std::move(on_fail);
    watch_beast_writes();
    enc_.use_masks(); // client frames are masked (RFC 6455 §5.3)
    ws_.async_handshake(host, target,
                        beast::bind_front_handler(&ws_session::on_accept, shared_from_this()));
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
    {
      // Frames sent after close() are dropped, as the transport promises.
      std::lock_guard<std::mutex> g{in_mtx_};
      in_closed_ = true;
    }
    asio::post(strand_, [self = shared_from_this(), code, r = std::move(reason)]() mutable {
      self->on_close_request(code, std::move(r));
    });
  }

  void drop() override {
    {
      std::lock_guard<std::mutex> g{in_mtx_};
      in_closed_ = true;
    }
    asio::post(strand_, [self = shared_from_this()] {
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

  const upgrade_request& upgrade() const override {
    return upgrade_;
  }

private:
  // Called from actor threads. Only the send that finds the inbox empty posts
  // to the strand; the others ride along with it (one post per batch).
  void enqueue(out_frame f) {
    bool first;
    {
      std::lock_guard<std::mutex> g{in_mtx_};
      if (in_closed_)
        return;
      first = in_.empty();
      in_.push_back(std::move(f));
    }
    if (first)
      asio::post(strand_, [self = shared_from_this()] { self->on_send(); });
  }

  // When Beast's own control-frame write finishes, a batch that waited for it
  // can go.
  void watch_beast_writes() {
    ws_.next_layer().on_idle([w = weak_from_this()] {
      if (auto self = w.lock())
        self->on_beast_idle();
    });
  }

  void on_beast_idle() {
    if (!writing_ && !outq_.empty())
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

  void on_accept(error_code ec) {
    if (ec) {
      spdlog::debug("websocket handshake with {} failed: {}", peer_, ec.message());
      if (auto f = std::move(on_fail_))
        f("websocket handshake failed: " + ec.message());
      return;
    }
    on_fail_ = nullptr;
    handler_ = factory_(shared_from_this());
    factory_ = nullptr;
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

  // The message being read went over the cap: a handler that takes such
  // messages gets its first and last bytes (message_meter); otherwise the
  // socket is closed (1009) while the rest is read and dropped.
  void begin_oversized() {
    if (ws_.got_text() && handler_ && !closing_ && handler_->takes_oversized())
      return;
    oversize_close_ = true;
    spdlog::warn("closed {}: message larger than {} bytes", peer_, limits_.max_frame_bytes);
    on_close_request(static_cast<std::uint16_t>(websocket::close_code::too_big),
                     "message too big");
  }

  void on_read(error_code ec, std::size_t n) {
    if (ec)
      return on_done(ec);
    if (meter_.add(n))
      begin_oversized();
    if (meter_.over()) {
      auto data = buffer_.cdata();
      if (!oversize_close_)
        meter_.keep({static_cast<const char*>(data.data()), data.size()});
      buffer_.consume(data.size());
    }
    if (!ws_.is_message_done())
      return do_read();
    auto msg = meter_.end();
    n = static_cast<std::size_t>(msg.size);
    if (msg.over) {
      if (oversize_close_)
        return do_read();
      counters_->frames_in.fetch_add(1, std::memory_order_relaxed);
      counters_->bytes_in.fetch_add(n, std::memory_order_relaxed);
      if (handler_ && !closing_)
        handler_->on_oversized(std::move(msg.head), std::move(msg.tail), n);
      return read_next();
    }
    if (!ws_.got_text()) {
      auto data = buffer_.cdata();
      bool taken = handler_ && !closing_
                   && handler_->on_binary({static_cast<const char*>(data.data()), n});
      buffer_.consume(n);
      if (taken) {
        counters_->frames_in.fetch_add(1, std::memory_order_relaxed);
        counters_->bytes_in.fetch_add(n, std::memory_order_relaxed);
        return read_next();
      }
      spdlog::warn("closing {}: binary frame (only JSON text frames are accepted)", peer_);
      on_close_request(static_cast<std::uint16_t>(websocket::close_code::bad_payload),
                       "binary frames are not supported");
      return do_read();
    }
    counters_->frames_in.fetch_add(1, std::memory_order_relaxed);
    counters_->bytes_in.fetch_add(n, std::memory_order_relaxed);
    std::string frame;
    frame.reserve(n + simdjson_padding);
    auto data = buffer_.cdata();
    frame.assign(static_cast<const char*>(data.data()), n);
    buffer_.consume(n);
    if (handler_ && !closing_)
      handler_->on_text(std::move(frame));
    read_next();
  }

  void on_done(error_code ec) {
    closed_ = true;
    std::string reason;
    if (ec == websocket::error::closed)
      reason = "closed by peer";
    else
      reason = ec.message();
    if (oversize_close_)
      reason = "message larger than " + std::to_string(limits_.max_frame_bytes) + " bytes";
    if (auto h = std::move(handler_)) {
      if (ec == websocket::error::closed)
        h->on_peer_close(static_cast<std::uint16_t>(ws_.reason().code),
                         std::string{ws_.reason().reason.c_str()});
      h->on_closed(std::move(reason));
    }
  }

  void on_send() {
    {
      std::lock_guard<std::mutex> g{in_mtx_};
      in_.swap(taken_);
    }
    if (closed_ || closing_) {
      taken_.clear();
      return;
    }
    for (auto& f : taken_) {
      add_out_bytes(static_cast<std::int64_t>(f.payload.size()));
      outq_.push_back(std::move(f));
    }
    taken_.clear();
    // What waits behind the batch in flight counts; one frame of any size
    // (up to the peer's frame limit) always fits.
    const auto in_flight = writing_ ? enc_.frames() : 0;
    if (outq_.size() > in_flight + 1
        && out_bytes_ - (writing_ ? enc_.payload_bytes() : 0) > limits_.max_write_queue_bytes) {
      // The peer does not drain its socket; a close frame would queue behind
      // the same backlog, so drop the connection.
      counters_->write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("dropping {}: {} bytes wait to be written (limit {})", peer_, out_bytes_,
                   limits_.max_write_queue_bytes);
      closing_ = true;
      // Freed now, not when the handler lets go of the transport; a batch
      // in flight still points into its frames.
      if (writing_) {
        outq_.erase(outq_.begin() + static_cast<std::ptrdiff_t>(enc_.frames()), outq_.end());
        add_out_bytes(-static_cast<std::int64_t>(out_bytes_ - enc_.payload_bytes()));
      } else {
        drop_queue();
      }
      unpark();
      error_code ignored;
      beast::get_lowest_layer(ws_).socket().close(ignored);
      return;
    }
    if (!writing_)
      do_write();
  }

  // out_bytes_ and the listener-wide gauge move together.
  void add_out_bytes(std::int64_t delta) {
    out_bytes_ = static_cast<std::size_t>(static_cast<std::int64_t>(out_bytes_) + delta);
    counters_->queued_bytes.fetch_add(delta, std::memory_order_relaxed);
  }

  // Writes the queued frames, as many as one batch holds, with one
  // async_write on the socket: frames are encoded here (FIN, no extensions,
  // masked on the client side), Beast is bypassed for data.
  void do_write() {
    if (!ws_.is_open()) {
      // Beast got or sent a close frame: nothing may follow it (Beast's own
      // write would fail with websocket::error::closed here).
      drop_queue();
      return;
    }
    if (ws_.next_layer().beast_writing())
      return; // on_beast_idle resumes
    enc_.encode(outq_);
    writing_ = true;
    ws_.next_layer().raw_begin();
    // Through TLS when the connection has it: the flex stream, not the socket.
    asio::async_write(ws_.next_layer().next_layer(), enc_.buffers(),
                      beast::bind_front_handler(&ws_session::on_write, shared_from_this()));
  }

  void drop_queue() {
    outq_.clear();
    add_out_bytes(-static_cast<std::int64_t>(out_bytes_));
  }

  void on_write(error_code ec, std::size_t) {
    writing_ = false;
    // A control frame Beast wanted to write during the batch goes first.
    ws_.next_layer().raw_end();
    if (ec) {
      // The read side sees the same failure and reports it.
      drop_queue();
      return;
    }
    counters_->frames_out.fetch_add(enc_.frames(), std::memory_order_relaxed);
    counters_->bytes_out.fetch_add(enc_.payload_bytes(), std::memory_order_relaxed);
    add_out_bytes(-static_cast<std::int64_t>(enc_.payload_bytes()));
    for (std::size_t i = 0; i < enc_.frames(); ++i)
      outq_.pop_front();
    enc_.trim();
    if (!outq_.empty())
      return do_write();
    if (closing_ && !closed_)
      do_close();
  }

  void on_close_request(std::uint16_t code, std::string reason) {
    if (closing_ || closed_)
      return;
    closing_ = true;
    unpark();
    close_reason_ = websocket::close_reason(static_cast<websocket::close_code>(code), reason);
    // Otherwise on_write closes once the queue has drained.
    if (!writing_ && outq_.empty())
      do_close();
  }

  void do_close() {
    ws_.async_close(close_reason_, [self = shared_from_this()](error_code) {
      // nop: the pending read completes with websocket::error::closed
    });
  }

  websocket::stream<write_gate> ws_;
  const io_strand strand_; // ws_'s, by its concrete type
  ws_limits limits_;
  std::shared_ptr<socket_counters> counters_;
  std::string peer_;
  upgrade_request upgrade_;
  session_factory factory_;
  std::function<void(std::string)> on_fail_;
  frame_handler_ptr handler_;
  beast::flat_buffer buffer_;
  detail::message_meter meter_;  // the message being read, against the cap
  bool oversize_close_ = false; // one went over it: the socket closes
  // Filled by actor threads under in_mtx_, swapped out on the strand.
  std::mutex in_mtx_;
  std::vector<out_frame> in_;
  bool in_closed_ = false;
  // Strand only from here on.
  std::vector<out_frame> taken_;
  std::deque<out_frame> outq_; // the first enc_.frames() are being written
  std::size_t out_bytes_ = 0;
  ws_frame_encoder enc_;
  websocket::close_reason close_reason_;
  bool writing_ = false;
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
                          std::string peer, const session_factory& factory, ws_limits limits,
                          std::shared_ptr<socket_counters> counters) {
  auto s = std::make_shared<ws_session>(std::move(stream), limits, std::move(counters),
                                        std::move(peer));
  s->accept(std::move(req), std::move(up), factory);
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
