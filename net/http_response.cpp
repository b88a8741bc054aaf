#include "net/detail/http_session.hpp"

#include "net/detail/batch_hold.hpp"
#include "net/detail/write_now.hpp"
#include "net/http_head.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <utility>

namespace actor_host::net {

// Called by the responder, always on the strand.
void http_session::head(int status, const std::string& content_type,
                        std::optional<std::size_t> length, const http_headers& extra,
                        std::string body) {
  if (peer_gone_ || !active_)
    return;
  std::string h;
  h.reserve(256 + body.size());
  std::vector<std::string> dropped;
  append_response_head(h, {status, content_type, length, cors_origin_, &extra, keep_alive_},
                       &dropped);
  for (auto& k : dropped) {
    srv_->counters->unsafe_headers_dropped.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("dropped response header {} to {}: CR, LF or NUL in it", k, peer_);
  }
  h += body;
  enqueue(std::move(h), length.has_value());
}

void http_session::chunk(std::string data, std::size_t pieces) {
  if (peer_gone_ || !active_ || data.empty())
    return;
  char size[20];
  auto len = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string c;
  c.reserve(static_cast<std::size_t>(len) + data.size() + 2);
  c.append(size, static_cast<std::size_t>(len));
  c += data;
  c += "\r\n";
  enqueue(std::move(c), false, pieces);
}

void http_session::last_chunk() {
  if (peer_gone_ || !active_)
    return;
  enqueue("0\r\n\r\n", true);
}

void http_session::set_abort(std::function<void()> fn) {
  if (peer_gone_ && active_) {
    fn();
    return;
  }
  abort_fn_ = std::move(fn);
}

void http_session::enqueue(std::string data, bool last, std::size_t pieces) {
  auto budget = srv_->opts.max_response_bytes_total;
  if (budget > 0
      && srv_->counters->response_bytes.load(std::memory_order_relaxed)
             + static_cast<std::int64_t>(data.size())
           > static_cast<std::int64_t>(budget))
    return over_budget(data.size());
  add_out_bytes(static_cast<std::int64_t>(data.size()));
  outq_.push_back(std::move(data));
  if (last)
    finishing_ = true;
  // What waits behind the write in flight is what a caller that does not
  // read piles up; one piece of any size (a whole result) always fits, a
  // batch of several (the responder's lines) counts as what it was made of.
  if ((outq_.size() > 1 || pieces > 1)
      && out_bytes_ - inflight_bytes_ > srv_->opts.max_write_queue_bytes)
    return overflow(out_bytes_);
  if (!writing_)
    do_write();
}

// The caller does not read its response: abort the exchange (the run is
// cancelled through the abort callback) and drop the connection, so the
// queue is freed now rather than when the caller leaves.
// `held`: the bytes waiting in the queue or, seen by the responder, in its
// inbox in front of the strand.
void http_session::overflow(std::size_t held) {
  srv_->counters->write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("dropping HTTP client {}: {} bytes of its response wait to be written "
               "(max_write_queue_bytes {}); the call is cancelled",
               peer_, held, srv_->opts.max_write_queue_bytes);
  drop_exchange();
}

// Nothing answered and nothing will: the actor that held the exchange
// ended (a hub the supervisor stopped at shutdown drops what reaches it
// after) or a handler forgot it. The client hears now, not when the process
// exits: 503 if no head went out, else the connection is cut, since a
// chunked body cannot say it failed.
void http_session::unanswered(bool begun) {
  if (peer_gone_ || !active_)
    return;
  srv_->counters->unanswered_exchanges.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("HTTP exchange with {} dropped unanswered by its handler{}", peer_,
               begun ? " after its response began: connection closed" : ": answered 503");
  if (begun)
    return drop_exchange();
  // The API's error shape, as the 413 the session answers itself.
  std::string body = R"({"error":{"code":-32000,"message":"Request dropped unanswered: the )"
                     R"(server is stopping or its handler ended; try again"}})";
  auto n = body.size();
  head(503, "application/json", n, {}, std::move(body));
}

void http_session::inbox_overflow(std::size_t held) {
  if (!peer_gone_)
    overflow(held);
}

std::size_t http_session::max_write_queue_bytes() const {
  return srv_->opts.max_write_queue_bytes;
}

// The response will not be written: what waits goes now, the exchange is
// aborted (its run cancelled) and the connection dropped.
void http_session::drop_exchange() {
  peer_gone_ = true;
  std::vector<std::string>{}.swap(outq_);
  add_out_bytes(-static_cast<std::int64_t>(out_bytes_ - inflight_bytes_));
  if (active_) {
    if (auto fn = std::move(abort_fn_))
      fn();
  }
  shutdown();
}

// The listener's responses hold max_response_bytes_total already: this one
// is aborted like a reader that does not drain (its run cancelled), so
// slow readers together cannot pin more.
void http_session::over_budget(std::size_t adding) {
  srv_->counters->response_budget_overflows.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("dropping HTTP client {}: its response ({} more bytes) would pass the {} bytes "
               "all responses of this listener may hold (max_response_bytes_total); the call "
               "is cancelled",
               peer_, adding, srv_->opts.max_response_bytes_total);
  drop_exchange();
}

// out_bytes_ and the listener-wide gauges move together.
void http_session::add_out_bytes(std::int64_t delta) {
  out_bytes_ = static_cast<std::size_t>(static_cast<std::int64_t>(out_bytes_) + delta);
  srv_->counters->queued_bytes.fetch_add(delta, std::memory_order_relaxed);
  srv_->counters->response_bytes.fetch_add(delta, std::memory_order_relaxed);
}

void http_session::do_write() {
  writing_ = true;
  inflight_.swap(outq_);
  bufs_.clear();
  inflight_bytes_ = 0;
  for (auto& s : inflight_) {
    bufs_.emplace_back(asio::buffer(s));
    inflight_bytes_ += s.size();
  }
  if (stream_.is_tls()) {
    asio::async_write(stream_, bufs_,
                      beast::bind_front_handler(&http_session::on_write, shared_from_this()));
    return;
  }
  // Plain TCP: sent at once (write_now.hpp); a response that fits the
  // socket's buffer completes here, with no handler posted for it.
  detail::write_now(stream_.next_layer().socket(), bufs_,
                    [self = shared_from_this()](error_code ec) { self->on_write(ec, 0); });
}

void http_session::on_write(error_code ec, std::size_t) {
  writing_ = false;
  inflight_.clear();
  add_out_bytes(-static_cast<std::int64_t>(inflight_bytes_));
  inflight_bytes_ = 0;
  if (ec) {
    add_out_bytes(-static_cast<std::int64_t>(out_bytes_));
    std::vector<std::string>{}.swap(outq_);
    peer_gone_ = true;
    if (active_) {
      if (auto fn = std::move(abort_fn_))
        fn();
    }
    return shutdown();
  }
  if (!outq_.empty())
    return do_write();
  if (finishing_)
    after_response();
}

void http_session::after_response() {
  finishing_ = false;
  active_ = false;
  abort_fn_ = nullptr;
  // The connection may idle now (keep-alive): the write queue's storage goes.
  std::vector<std::string>{}.swap(inflight_);
  std::vector<asio::const_buffer>{}.swap(bufs_);
  if (!keep_alive_ && !peer_gone_ && !watching_)
    return linger_close();
  if (!keep_alive_ || peer_gone_)
    return shutdown();
  // The watch read takes the next request as it comes: cancelling it and
  // starting the parse's own read cost a handler, a timer and a recv that
  // finds nothing, per request.
  if (watching_ && buffer_.size() == 0)
    return go_idle();
  if (watching_)
    stream_.next_layer().cancel(); // on_watch parses what is buffered
  else
    do_read();
}

// A refusal (413, 401, ...) may leave the client still sending its body:
// closing with unread bytes resets the connection, and the client sees
// ECONNRESET instead of our answer. So stop sending, read and drop what
// still comes (bounded in bytes and time), then close. TLS has no
// half-close under the record layer: it closes at once.
void http_session::linger_close() {
  if (stream_.is_tls())
    return shutdown();
  error_code ignored;
  stream_.next_layer().socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.next_layer().expires_after(std::chrono::seconds(2));
  drain_buf_ = std::make_unique<std::array<char, 4096>>();
  do_drain();
}

void http_session::do_drain() {
  stream_.next_layer().async_read_some(
    asio::buffer(*drain_buf_),
    beast::bind_front_handler(&http_session::on_drain, shared_from_this()));
}

void http_session::on_drain(error_code ec, std::size_t n) {
  drained_ += n;
  if (ec || drained_ > srv_->opts.max_body_bytes + 64 * 1024)
    return shutdown();
  do_drain();
}

void http_session::shutdown() {
  error_code ignored;
  auto& s = stream_.next_layer().socket();
  s.shutdown(tcp::socket::shutdown_both, ignored);
  s.close(ignored);
}

namespace {

// Thread-safe: actors call it from scheduler threads, the session lives on
// its strand. Body writes collect in an inbox and only the write that finds
// it empty posts to the strand, which takes everything collected by then as
// one HTTP chunk (one queue entry, one write): a stream of small NDJSON
// lines costs a post, a chunk and a syscall per batch, not per line; a
// batch written from the I/O thread (a spliced stream) first lets the reads
// already possible add to it (batch_hold.hpp). The other calls are posted
// in order; a write's bytes never go out after a call made after it.
class responder_impl : public http_responder,
                       public std::enable_shared_from_this<responder_impl> {
public:
  explicit responder_impl(std::shared_ptr<http_session> s)
    : session_(std::move(s)), strand_(session_->strand()),
      max_held_(session_->max_write_queue_bytes()) {
  }

  // Every post holds the responder, so none is still waiting here: this
  // one cannot overtake what the handler sent.
  ~responder_impl() override {
    auto stage = stage_.load(std::memory_order_relaxed);
    if (stage == stage_finished)
      return;
    boost::asio::post(strand_, [s = std::move(session_), begun = stage == stage_begun] {
      s->unanswered(begun);
    });
  }

  // The body's batch, posted to the strand.
  auto drain_handler(detail::batch_hold::ticket t) {
    return [r = shared_from_this(), t] { r->drain(t); };
  }

  void respond(int status, std::string content_type, std::string body,
               http_headers extra) override {
    stage_.store(stage_finished, std::memory_order_relaxed);
    post(
      [status, ct = std::move(content_type), b = std::move(body),
       x = std::move(extra)](http_session& s) mutable {
        auto n = b.size();
        s.head(status, ct, n, x, std::move(b));
      },
      true);
  }

  void start_stream(int status, std::string content_type, http_headers extra) override {
    stage_.store(stage_begun, std::memory_order_relaxed);
    post([status, ct = std::move(content_type), x = std::move(extra)](http_session& s) {
      s.head(status, ct, std::nullopt, x, {});
    });
  }

  // The writes waiting for the strand have their own cap: while the I/O
  // thread is behind, the session's check of its queue does not run, and a
  // caller that does not read would let the actors fill body_ without bound.
  // One write of any size always fits, as in the queue.
  void write(std::string data) override {
    if (data.empty())
      return; // an empty chunk would end the body
    bool first;
    std::size_t held = 0;
    {
      std::lock_guard<std::mutex> g{mtx_};
      if (overflowed_)
        return;
      first = body_.empty();
      if (!first && body_.size() + data.size() > max_held_) {
        overflowed_ = true;
        held = body_.size() + data.size();
        std::string{}.swap(body_);
        pieces_ = 0;
      } else if (first) {
        body_ = std::move(data);
        ++pieces_;
      } else {
        body_ += data;
        ++pieces_;
      }
    }
    if (held > 0) {
      post([held](http_session& s) { s.inbox_overflow(held); });
    } else if (first) {
      hold_.wake(strand_, [this](detail::batch_hold::ticket t) { return drain_handler(t); });
    }
  }

  void finish() override {
    stage_.store(stage_finished, std::memory_order_relaxed);
    post([](http_session& s) { s.last_chunk(); });
  }

  void on_abort(std::function<void()> fn) override {
    // Set by the request's handler itself (on the strand, before it wrote
    // anything): nothing of this exchange can be queued to overtake, so it
    // is set now rather than posted, a handler and a reactor poll fewer.
    if (strand_.running_in_this_thread() && hold_.untouched())
      return session_->set_abort(std::move(fn));
    post([f = std::move(fn)](http_session& s) mutable { s.set_abort(std::move(f)); });
  }

private:

  void drain(detail::batch_hold::ticket t) {
    std::size_t waiting;
    {
      std::lock_guard<std::mutex> g{mtx_};
      waiting = body_.size();
    }
    if (hold_.wait(strand_, t, waiting, [this](auto next) { return drain_handler(next); }))
      return;
    std::string batch;
    std::size_t pieces;
    {
      std::lock_guard<std::mutex> g{mtx_};
      batch.swap(body_);
      pieces = std::exchange(pieces_, 0);
    }
    if (batch.empty())
      return; // taken by an inbox overflow: an empty chunk would end the body
    session_->chunk(std::move(batch), pieces);
  }

  // Everything but the body's batches: none of it may overtake a batch
  // posted before it (hold_).
  // `whole`: the complete response (batch_hold::post_in_order).
  template <class F>
  void post(F&& f, bool whole = false) {
    // The responder too: its hold_ may run this later (batch_hold.hpp).
    hold_.post_in_order(
      strand_,
      [r = shared_from_this(), fn = std::forward<F>(f)]() mutable { fn(*r->session_); }, whole);
  }

  std::shared_ptr<http_session> session_;
  // Concrete: a post per batch, so no type-erased executor per chunk.
  io_strand strand_;
  const std::size_t max_held_; // the session's max_write_queue_bytes
  std::mutex mtx_;
  std::string body_;      // written since the last drain
  std::size_t pieces_ = 0; // how many writes made it
  bool overflowed_ = false; // body_ passed max_held_: the rest is dropped
  detail::batch_hold hold_;
  // How far the handler got; read by the destructor, after the last owner
  // let go (ordered by the reference count).
  static constexpr int stage_none = 0, stage_begun = 1, stage_finished = 2;
  std::atomic<int> stage_{stage_none};
};

} // namespace

http_responder_ptr http_session::make_responder() {
  return std::make_shared<responder_impl>(shared_from_this());
}

} // namespace actor_host::net
