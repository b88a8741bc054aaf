#include "net/detail/ws_session.hpp"

#include "net/io_runtime.hpp"
#include "net/liveness.hpp"
#include "net/url.hpp"
#include "net/ws_connect.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

namespace actor_host::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// simdjson reads up to this many bytes past the end of a frame.
constexpr std::size_t simdjson_padding = 64;

// A write takes queued frames until it holds this many bytes (at least one
// frame), so one sendmsg carries many small frames without the batch buffer
// growing without bound.
constexpr std::size_t max_batch_bytes = 256u << 10;
// Payloads at least this large are not copied into the batch buffer (server
// side, unmasked): they go out as their own buffer in the same gather write.
constexpr std::size_t gather_min_bytes = 16u << 10;
// asio hands at most 64 buffers to one sendmsg.
constexpr std::size_t max_batch_buffers = 60;

// Writes the RFC 6455 §5.2 header of one final, uncompressed frame into `p`
// (at most 14 bytes) and returns its size. `mask` is null on the server side.
std::size_t put_frame_header(std::uint8_t* p, bool binary, std::uint64_t n,
                             const std::uint8_t* mask) {
  p[0] = static_cast<std::uint8_t>(0x80 | (binary ? 0x2 : 0x1));
  const std::uint8_t m = mask ? 0x80 : 0;
  std::size_t i;
  if (n < 126) {
    p[1] = static_cast<std::uint8_t>(m | n);
    i = 2;
  } else if (n <= 0xffff) {
    p[1] = static_cast<std::uint8_t>(m | 126);
    p[2] = static_cast<std::uint8_t>(n >> 8);
    p[3] = static_cast<std::uint8_t>(n);
    i = 4;
  } else {
    p[1] = static_cast<std::uint8_t>(m | 127);
    for (int k = 0; k < 8; ++k)
      p[2 + k] = static_cast<std::uint8_t>(n >> (56 - 8 * k));
    i = 10;
  }
  if (mask) {
    std::memcpy(p + i, mask, 4);
    i += 4;
  }
  return i;
}

// The layer under Beast's websocket::stream. ws_session writes data frames
// itself, many per sendmsg, straight to the socket; Beast still writes
// control frames on its own: the pong and the close echo from inside a read,
// keep-alive pings from its timer, our close. Beast serialises only its own
// writers, so this layer keeps the two writers apart at frame granularity:
// a Beast write that starts during one of our batches waits for it, and a
// batch waits until no Beast write is outstanding. Beast writes one control
// frame per composed async_write, whose next write_some is started inside
// the completion of the previous one, so "no write_some outstanding" means
// "between frames". Everything here runs on the session's strand.
class write_gate {
  struct deferred_write {
    virtual ~deferred_write() = default;
    virtual void start() = 0;
  };
  template <class F>
  struct deferred_write_impl final : deferred_write {
    explicit deferred_write_impl(F&& f) : f_(std::move(f)) {
    }
    void start() override {
      f_();
    }
    F f_;
  };
  // Shared with the completion handlers: Beast's impl (and this layer in it)
  // may be destroyed while the last handler runs.
  struct state {
    int beast_writes = 0;
    bool raw_writing = false;
    std::unique_ptr<deferred_write> deferred; // Beast has one writer at a time
    std::function<void()> on_idle;
  };

public:
  using executor_type = flex_stream::executor_type;

  explicit write_gate(flex_stream&& stream)
    : next_(std::move(stream)), st_(std::make_shared<state>()) {
  }

  executor_type get_executor() noexcept {
    return next_.get_executor();
  }
  flex_stream& next_layer() noexcept {
    return next_;
  }
  const flex_stream& next_layer() const noexcept {
    return next_;
  }

  template <class MutableBuffers, class Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    return next_.async_read_some(buffers, std::forward<Handler>(handler));
  }

  template <class ConstBuffers, class Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    return asio::async_initiate<Handler, void(error_code, std::size_t)>(
      [this](auto h, const ConstBuffers& b) {
        auto ex = asio::get_associated_executor(h, next_.get_executor());
        auto done = asio::bind_executor(
          ex, [st = st_, h = std::move(h)](error_code ec, std::size_t n) mutable {
            std::move(h)(ec, n); // may start the frame's next write_some
            if (--st->beast_writes == 0 && st->on_idle)
              st->on_idle();
          });
        ++st_->beast_writes;
        if (!st_->raw_writing)
          return next_.async_write_some(b, std::move(done));
        auto start = [this, b, done = std::move(done)]() mutable {
          next_.async_write_some(b, std::move(done));
        };
        st_->deferred = std::make_unique<deferred_write_impl<decltype(start)>>(std::move(start));
      },
      handler, buffers);
  }

  /// Called when the last outstanding Beast write completes.
  void on_idle(std::function<void()> f) {
    st_->on_idle = std::move(f);
  }
  bool beast_writing() const {
    return st_->beast_writes > 0;
  }
  void raw_begin() {
    st_->raw_writing = true;
  }
  void raw_end() {
    st_->raw_writing = false;
    if (auto d = std::move(st_->deferred))
      d->start();
  }

private:
  flex_stream next_;
  std::shared_ptr<state> st_;
};

// Beast's websocket::stream tears down through its next layer (found by
// ADL). Only the asynchronous form: the sessions never close synchronously.
template <class Handler>
void async_teardown(beast::role_type role, write_gate& s, Handler&& handler) {
  using beast::websocket::async_teardown;
  async_teardown(role, s.next_layer(), std::forward<Handler>(handler));
}

// One frame waiting to be written; `binary` selects the opcode, so binary
// and text frames share one ordered queue.
struct out_frame {
  std::string payload;
  bool binary = false;
};

class ws_session : public transport,
                   public pingable,
                   public std::enable_shared_from_this<ws_session> {
public:
  ws_session(flex_stream&& stream, ws_limits limits, std::shared_ptr<socket_counters> counters,
             std::string peer)
    : ws_(std::move(stream)), strand_(ws_.get_executor()), limits_(limits),
      counters_(std::move(counters)), peer_(std::move(peer)) {
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
    // Client frames are masked (RFC 6455 §5.3); the key only has to be
    // unpredictable to scripts in a browser, not cryptographically strong.
    mask_state_ = (static_cast<std::uint64_t>(std::random_device{}()) << 32)
                  | std::random_device{}() | 1u;
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
    t.idle_timeout = std::chrono::seconds(120);
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(limits_.max_frame_bytes);
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
    ws_.async_read(buffer_, beast::bind_front_handler(&ws_session::on_read, shared_from_this()));
  }

  void on_read(error_code ec, std::size_t n) {
    if (ec)
      return on_done(ec);
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
    else if (ec == websocket::error::message_too_big)
      reason = "message larger than " + std::to_string(limits_.max_frame_bytes) + " bytes";
    else
      reason = ec.message();
    if (ec == websocket::error::message_too_big)
      spdlog::warn("closed {}: {}", peer_, reason);
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
    const auto in_flight = writing_ ? batch_frames_ : 0;
    if (outq_.size() > in_flight + 1
        && out_bytes_ - (writing_ ? batch_payload_ : 0) > limits_.max_write_queue_bytes) {
      // The peer does not drain its socket; a close frame would queue behind
      // the same backlog, so drop the connection.
      counters_->write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("dropping {}: {} bytes wait to be written (limit {})", peer_, out_bytes_,
                   limits_.max_write_queue_bytes);
      closing_ = true;
      // Freed now, not when the handler lets go of the transport; a batch
      // in flight still points into its frames.
      if (writing_) {
        outq_.erase(outq_.begin() + static_cast<std::ptrdiff_t>(batch_frames_), outq_.end());
        add_out_bytes(-static_cast<std::int64_t>(out_bytes_ - batch_payload_));
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
    build_batch();
    writing_ = true;
    ws_.next_layer().raw_begin();
    // Through TLS when the connection has it: the flex stream, not the socket.
    asio::async_write(ws_.next_layer().next_layer(), batch_bufs_,
                      beast::bind_front_handler(&ws_session::on_write, shared_from_this()));
  }

  void build_batch() {
    const bool masked = mask_state_ != 0;
    wbuf_.clear();
    segs_.clear();
    batch_frames_ = 0;
    batch_payload_ = 0;
    std::size_t bytes = 0;
    auto append_local = [this](std::size_t off, std::size_t len) {
      if (!segs_.empty() && segs_.back().ext == nullptr
          && segs_.back().off + segs_.back().len == off)
        segs_.back().len += len;
      else
        segs_.push_back({nullptr, off, len});
    };
    for (auto& f : outq_) {
      const std::size_t n = f.payload.size();
      if (batch_frames_ > 0 && (bytes + n > max_batch_bytes || segs_.size() + 2 > max_batch_buffers))
        break;
      std::uint8_t mask[4];
      if (masked)
        next_mask(mask);
      const std::size_t off = wbuf_.size();
      wbuf_.resize(off + 14);
      auto h = put_frame_header(reinterpret_cast<std::uint8_t*>(wbuf_.data() + off), f.binary, n,
                                masked ? mask : nullptr);
      wbuf_.resize(off + h);
      if (!masked && n >= gather_min_bytes) {
        append_local(off, h);
        segs_.push_back({f.payload.data(), 0, n});
      } else {
        wbuf_.resize(off + h + n);
        auto* dst = wbuf_.data() + off + h;
        if (masked)
          for (std::size_t i = 0; i < n; ++i)
            dst[i] = static_cast<char>(f.payload[i] ^ static_cast<char>(mask[i & 3]));
        else
          std::memcpy(dst, f.payload.data(), n);
        append_local(off, h + n);
      }
      bytes += h + n;
      ++batch_frames_;
      batch_payload_ += n;
    }
    // wbuf_ is complete: only now are pointers into it stable.
    batch_bufs_.clear();
    for (auto& sg : segs_)
      batch_bufs_.emplace_back(sg.ext ? sg.ext : wbuf_.data() + sg.off, sg.len);
  }

  void next_mask(std::uint8_t* out) {
    // xorshift64
    auto& x = mask_state_;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(out, &x, 4);
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
    counters_->frames_out.fetch_add(batch_frames_, std::memory_order_relaxed);
    counters_->bytes_out.fetch_add(batch_payload_, std::memory_order_relaxed);
    add_out_bytes(-static_cast<std::int64_t>(batch_payload_));
    for (std::size_t i = 0; i < batch_frames_; ++i)
      outq_.pop_front();
    if (wbuf_.capacity() > 4 * max_batch_bytes)
      std::string{}.swap(wbuf_); // after one huge masked frame
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
  const asio::any_io_executor strand_;
  ws_limits limits_;
  std::shared_ptr<socket_counters> counters_;
  std::string peer_;
  upgrade_request upgrade_;
  session_factory factory_;
  std::function<void(std::string)> on_fail_;
  frame_handler_ptr handler_;
  beast::flat_buffer buffer_;
  // Filled by actor threads under in_mtx_, swapped out on the strand.
  std::mutex in_mtx_;
  std::vector<out_frame> in_;
  bool in_closed_ = false;
  // Strand only from here on.
  std::vector<out_frame> taken_;
  std::deque<out_frame> outq_; // the first batch_frames_ are being written
  std::size_t out_bytes_ = 0;
  struct segment {
    const char* ext; // a large payload in outq_, or null: wbuf_ at off
    std::size_t off;
    std::size_t len;
  };
  std::string wbuf_;
  std::vector<segment> segs_;
  std::vector<asio::const_buffer> batch_bufs_;
  std::size_t batch_frames_ = 0;
  std::size_t batch_payload_ = 0;
  std::uint64_t mask_state_ = 0; // non-zero: client role, frames are masked
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


// Resolves, connects and hands the socket to a client-side session.
class connector : public std::enable_shared_from_this<connector> {
public:
  connector(asio::io_context& ioc, parsed_url url, connect_options opts, session_factory factory,
            std::function<void(std::string)> on_fail)
    : resolver_(asio::make_strand(ioc)), stream_(resolver_.get_executor()), url_(std::move(url)),
      opts_(opts), factory_(std::move(factory)), on_fail_(std::move(on_fail)) {
  }

  void run() {
    resolver_.async_resolve(url_.host, url_.port,
                            beast::bind_front_handler(&connector::on_resolve, shared_from_this()));
  }

private:
  void on_resolve(error_code ec, tcp::resolver::results_type results) {
    if (ec)
      return on_fail_("cannot resolve " + url_.host + ": " + ec.message());
    stream_.expires_after(opts_.timeout);
    stream_.async_connect(results,
                          beast::bind_front_handler(&connector::on_connect, shared_from_this()));
  }

  void on_connect(error_code ec, tcp::endpoint ep) {
    if (ec)
      return on_fail_("cannot connect to " + host_header(url_) + ": " + ec.message());
    peer_ = ep.address().to_string() + ":" + std::to_string(ep.port());
    flex_.emplace(std::move(stream_));
    if (!opts_.tls)
      return open();
    flex_->start_tls(opts_.tls->box);
    verify_server_name(flex_->tls(), url_.host);
    flex_->tls().async_handshake(asio::ssl::stream_base::client,
                                 beast::bind_front_handler(&connector::on_tls,
                                                           shared_from_this()));
  }

  void on_tls(error_code ec) {
    if (ec)
      return on_fail_("TLS handshake with " + host_header(url_)
                      + " failed: " + describe_tls_error(ec, &flex_->tls()));
    open();
  }

  void open() {
    flex_->next_layer().expires_never();
    auto s = std::make_shared<ws_session>(std::move(*flex_),
                                          ws_limits{opts_.max_frame_bytes,
                                                    opts_.max_write_queue_bytes},
                                          opts_.counters ? opts_.counters
                                                         : std::make_shared<socket_counters>(),
                                          std::move(peer_));
    flex_.reset();
    s->handshake(host_header(url_), url_.target, std::move(factory_), std::move(on_fail_));
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  std::optional<flex_stream> flex_;
  std::string peer_;
  parsed_url url_;
  connect_options opts_;
  session_factory factory_;
  std::function<void(std::string)> on_fail_;
};

} // namespace

std::map<std::string, std::string> lower_case_headers(const http_request_message& req) {
  std::map<std::string, std::string> out;
  for (auto& f : req) {
    std::string name{f.name_string()};
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out[name] = std::string{f.value()};
  }
  return out;
}

upgrade_request describe_upgrade(const http_request_message& req) {
  upgrade_request up;
  up.target = std::string{req.target()};
  up.headers = lower_case_headers(req);
  split_target(up.target, up.path, up.query);
  return up;
}

void run_server_websocket(flex_stream&& stream, http_request_message&& req, upgrade_request up,
                          std::string peer, const session_factory& factory, ws_limits limits,
                          std::shared_ptr<socket_counters> counters) {
  auto s = std::make_shared<ws_session>(std::move(stream), limits, std::move(counters),
                                        std::move(peer));
  s->accept(std::move(req), std::move(up), factory);
}

void ws_connect(io_runtime& io, const std::string& url, connect_options opts,
                session_factory on_open, std::function<void(std::string)> on_fail) {
  auto parsed = parse_url(url);
  const bool secure = parsed && (parsed->scheme == "wss" || parsed->scheme == "https");
  std::string why;
  if (!parsed)
    why = "unsupported manager URL '" + url + "' (expected ws://host:port or wss://host:port)";
  else if (secure && !opts.tls)
    why = "manager URL '" + url + "' needs TLS but no TLS client context was given";
  else if (!secure && opts.tls)
    opts.tls = nullptr; // ws:// stays plain even with --tls-ca-file
  if (!why.empty()) {
    asio::post(io.context(), [f = std::move(on_fail), why] { f(why); });
    return;
  }
  std::make_shared<connector>(io.context(), std::move(*parsed), opts, std::move(on_open),
                              std::move(on_fail))
    ->run();
}

} // namespace actor_host::net
