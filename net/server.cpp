#include "net/server.hpp"

#include "net/access_policy.hpp"
#include "net/io_runtime.hpp"
#include "net/url.hpp"
#include "net/detail/flex_stream.hpp"
#include "net/detail/ws_session.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace actor_host::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

std::string endpoint_string(const tcp::socket& s) {
  error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec)
    return "?";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

std::string reason_phrase(int status) {
  if (status == 499)
    return "Client Closed Request";
  auto r = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
  return r.empty() ? std::string{"Unknown"} : std::string{r};
}

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

std::string refusal(int status, std::string_view text) {
  std::string body{text};
  body += '\n';
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status)
         + "\r\nServer: actor-host\r\nContent-Type: text/plain\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// One descriptor held in reserve: out of descriptors (EMFILE), it is freed
// to accept the waiting connection and close it, so that the backlog does
// not wedge and the acceptor does not spin.
struct spare_fd {
  std::mutex mtx;
  int fd = -1;

  void ensure() {
    std::lock_guard<std::mutex> g{mtx};
    if (fd < 0)
      fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  /// Accepts one pending connection on `listener` with the spare and closes
  /// it after a best-effort `answer`. False if there was no spare.
  bool shed_one(int listener, const std::string& answer) {
    std::lock_guard<std::mutex> g{mtx};
    if (fd < 0)
      return false;
    ::close(fd);
    int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c >= 0) {
      [[maybe_unused]] auto n = ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    }
    fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return c >= 0;
  }
};

spare_fd& spare() {
  static spare_fd s;
  return s;
}

std::string endpoint_address(const tcp::socket& s) {
  error_code ec;
  auto ep = s.remote_endpoint(ec);
  return ec ? std::string{} : ep.address().to_string();
}

// A value with CR, LF or NUL would end the header (or the head) early and let
// whoever chose it write headers of their own.
bool header_safe(std::string_view v) {
  return v.find_first_of(std::string_view{"\r\n\0", 3}) == std::string_view::npos;
}

} // namespace

// -- server state shared by the listener and its sessions -------------------

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
  void on_accept(error_code ec, tcp::socket socket);
  void on_accept_error(error_code ec);
  void refuse(tcp::socket socket);
};

// -- HTTP session ------------------------------------------------------------

class http_session : public std::enable_shared_from_this<http_session> {
public:
  http_session(flex_stream&& stream, std::shared_ptr<server::impl> srv)
    : stream_(std::move(stream)), srv_(std::move(srv)) {
    peer_ = endpoint_string(stream_.next_layer().socket());
    peer_address_ = endpoint_address(stream_.next_layer().socket());
    ++srv_->counters->http_connections;
  }

  ~http_session() {
    --srv_->counters->http_connections;
    srv_->counters->queued_bytes.fetch_sub(static_cast<std::int64_t>(out_bytes_),
                                           std::memory_order_relaxed);
  }

  void run() {
    error_code ignored;
    stream_.next_layer().socket().set_option(tcp::no_delay{true}, ignored);
    asio::dispatch(stream_.get_executor(),
                   beast::bind_front_handler(&http_session::do_detect, shared_from_this()));
  }

  // Called by the responder, always on the strand.
  void head(int status, const std::string& content_type, std::optional<std::size_t> length,
            const http_headers& extra, std::string body) {
    if (peer_gone_ || !active_)
      return;
    std::string h;
    h.reserve(256 + body.size());
    h += "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
    h += "Server: actor-host\r\n";
    if (!content_type.empty() && header_safe(content_type))
      h += "Content-Type: " + content_type + "\r\n";
    if (length)
      h += "Content-Length: " + std::to_string(*length) + "\r\n";
    else
      h += "Transfer-Encoding: chunked\r\n";
    if (!cors_origin_.empty())
      h += "Access-Control-Allow-Origin: " + cors_origin_
           + "\r\nAccess-Control-Expose-Headers: X-Genkit-Trace-Id\r\nVary: Origin\r\n";
    for (auto& [k, v] : extra) {
      if (!header_safe(k) || !header_safe(v)) {
        srv_->counters->unsafe_headers_dropped.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("dropped response header {} to {}: CR, LF or NUL in it", k, peer_);
        continue;
      }
      h += k + ": " + v + "\r\n";
    }
    h += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    h += body;
    enqueue(std::move(h), length.has_value());
  }

  void chunk(std::string data) {
    if (peer_gone_ || !active_ || data.empty())
      return;
    char size[20];
    auto len = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
    std::string c;
    c.reserve(static_cast<std::size_t>(len) + data.size() + 2);
    c.append(size, static_cast<std::size_t>(len));
    c += data;
    c += "\r\n";
    enqueue(std::move(c), false);
  }

  void last_chunk() {
    if (peer_gone_ || !active_)
      return;
    enqueue("0\r\n\r\n", true);
  }

  void set_abort(std::function<void()> fn) {
    if (peer_gone_ && active_) {
      fn();
      return;
    }
    abort_fn_ = std::move(fn);
  }

  asio::any_io_executor strand() {
    return stream_.get_executor();
  }

private:
  // A TLS listener looks at the first bytes: a ClientHello starts the
  // handshake, anything else is refused in plain words.
  void do_detect() {
    if (!srv_->opts.tls)
      return do_read();
    stream_.next_layer().expires_after(
      std::chrono::milliseconds(srv_->opts.tls_handshake_timeout_ms));
    beast::async_detect_ssl(stream_.next_layer(), buffer_,
                            beast::bind_front_handler(&http_session::on_detect,
                                                      shared_from_this()));
  }

  void on_detect(error_code ec, bool tls) {
    if (ec) {
      if (ec == beast::error::timeout)
        handshake_failed("no TLS handshake within "
                         + std::to_string(srv_->opts.tls_handshake_timeout_ms) + " ms");
      return shutdown();
    }
    if (!tls) {
      srv_->counters->plaintext_refused.fetch_add(1, std::memory_order_relaxed);
      if (auto n = srv_->handshake_log.due())
        spdlog::warn("refused plaintext from {} on TLS port {} ({} event(s) in 5 s)", peer_,
                     srv_->bound_port, n);
      auto msg = std::make_shared<std::string>(
        refusal(400, "This port requires TLS: use https:// or wss://"));
      stream_.next_layer().expires_after(std::chrono::seconds(5));
      asio::async_write(stream_.next_layer(), asio::buffer(*msg),
                        [self = shared_from_this(), msg](error_code, std::size_t) {
                          self->shutdown();
                        });
      return;
    }
    stream_.start_tls(srv_->opts.tls->current());
    stream_.tls().async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                                  beast::bind_front_handler(&http_session::on_handshake,
                                                            shared_from_this()));
  }

  void on_handshake(error_code ec, std::size_t used) {
    if (ec) {
      handshake_failed(describe_tls_error(ec, nullptr));
      return shutdown();
    }
    buffer_.consume(used);
    do_read();
  }

  void handshake_failed(const std::string& why) {
    srv_->counters->tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
    if (auto n = srv_->handshake_log.due())
      spdlog::warn("TLS handshake with {} on port {} failed: {} ({} event(s) in 5 s)", peer_,
                   srv_->bound_port, why, n);
  }

  void do_read() {
    parser_.emplace();
    parser_->body_limit(srv_->opts.max_body_bytes);
    parser_->header_limit(64 * 1024);
    stream_.next_layer().expires_after(std::chrono::milliseconds(srv_->opts.http_idle_timeout_ms));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&http_session::on_header,
                                                      shared_from_this()));
  }

  // The access policy sees the head before any body is read.
  void on_header(error_code ec, std::size_t n) {
    if (ec)
      return on_read(ec, n);
    auto& head_req = parser_->get();
    std::string path;
    std::map<std::string, std::string> query;
    split_target(head_req.target(), path, query);
    auto headers = lower_case_headers(head_req);
    auto method = std::string{head_req.method_string()};
    access_request ar{method, path, &headers, &query, peer_address_,
                      websocket::is_upgrade(head_req)};
    auto verdict = check_access(srv_->opts.access, ar);
    if (verdict.status != 0) {
      srv_->counters->access_refused.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("refused {} {} from {}: {} {}", method, path.substr(0, 200), peer_,
                   verdict.status, verdict.message);
      keep_alive_ = false;
      begin_exchange(false);
      std::string body = verdict.message + "\n";
      auto length = body.size();
      head(verdict.status, "text/plain; charset=utf-8", length,
           verdict.status == 401 ? http_headers{{"WWW-Authenticate", "Bearer"}} : http_headers{},
           std::move(body));
      return;
    }
    cors_ok_ = verdict.cors;
    admitted_origin_.clear();
    if (auto i = headers.find("origin"); verdict.cors && i != headers.end())
      admitted_origin_ = i->second;
    token_from_query_ = verdict.token_from_query;
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&http_session::on_read, shared_from_this()));
  }

  void on_read(error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      begin_exchange(cors_ok_);
      std::string body = R"({"error":{"code":-32600,"message":"Invalid request: body larger than )"
                         + std::to_string(srv_->opts.max_body_bytes) + R"( bytes"}})";
      auto length = body.size(); // before the move: argument order is unspecified
      head(413, "application/json", length, {}, std::move(body));
      return;
    }
    if (ec) {
      if (ec != http::error::end_of_stream && ec != beast::error::timeout
          && ec != asio::error::operation_aborted && ec != asio::error::connection_reset)
        spdlog::debug("http read from {}: {}", peer_, ec.message());
      return shutdown();
    }
    auto req = parser_->release();
    if (websocket::is_upgrade(req)) {
      auto up = describe_upgrade(req);
      if (token_from_query_)
        up.query.erase("token"); // the manager's secret goes no further
      if (auto* route = srv_->find_route(up.path)) {
        if (int status = route->check ? route->check(up) : 0; status != 0) {
          // Refused before the upgrade: a plain HTTP answer, then close.
          keep_alive_ = false;
          begin_exchange(cors_ok_);
          std::string body = reason_phrase(status) + "\n";
          auto length = body.size();
          head(status, "text/plain", length, {}, std::move(body));
          return;
        }
        stream_.next_layer().expires_never();
        run_server_websocket(std::move(stream_), std::move(req), std::move(up), peer_,
                             route->factory,
                             {srv_->opts.max_frame_bytes, srv_->opts.max_write_queue_bytes},
                             srv_->counters);
        return;
      }
    }
    keep_alive_ = req.keep_alive();
    begin_exchange(cors_ok_);
    http_request hr;
    hr.method = std::string{req.method_string()};
    split_target(req.target(), hr.path, hr.query);
    hr.headers = lower_case_headers(req);
    hr.body = std::move(req.body());
    hr.peer = peer_;
    if (hr.method == "OPTIONS") {
      // Preflight: only an admitted Origin learns what it may send.
      head(204, "", 0,
           cors_ok_ ? http_headers{{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                                   {"Access-Control-Allow-Headers", "Content-Type, Authorization"}}
                    : http_headers{},
           {});
      return;
    }
    if (!srv_->http) {
      std::string body = "This port serves WebSocket upgrades only.\n";
      head(426, "text/plain", body.size(), {{"Upgrade", "websocket"}}, std::move(body));
      return;
    }
    srv_->http(std::move(hr), make_responder());
    watch_peer();
  }

  // `cors`: the request's Origin passed the access policy, so it may read
  // the answer.
  void begin_exchange(bool cors) {
    active_ = true;
    stream_.next_layer().expires_never();
    cors_origin_.clear();
    if (cors && header_safe(admitted_origin_))
      cors_origin_ = admitted_origin_;
  }

  http_responder_ptr make_responder();

  // A read while the handler works tells us when the client hangs up, so a
  // long-running call can be cancelled. Bytes of a pipelined next request
  // stay in buffer_ for the next parse.
  void watch_peer() {
    if (watching_ || peer_gone_ || buffer_.size() > 64 * 1024)
      return;
    watching_ = true;
    stream_.async_read_some(buffer_.prepare(4096),
                            beast::bind_front_handler(&http_session::on_watch, shared_from_this()));
  }

  void on_watch(error_code ec, std::size_t n) {
    watching_ = false;
    if (ec == asio::error::operation_aborted && !active_ && !peer_gone_)
      return do_read(); // cancelled by after_response to start the next parse
    if (ec) {
      peer_gone_ = true;
      if (active_) {
        if (auto fn = std::move(abort_fn_))
          fn();
      }
      return shutdown();
    }
    buffer_.commit(n);
    if (active_)
      watch_peer();
    else
      do_read();
  }

  void enqueue(std::string data, bool last) {
    add_out_bytes(static_cast<std::int64_t>(data.size()));
    outq_.push_back(std::move(data));
    if (last)
      finishing_ = true;
    // What waits behind the write in flight is what a caller that does not
    // read piles up; one piece of any size (a whole result) always fits.
    if (outq_.size() > 1 && out_bytes_ - inflight_bytes_ > srv_->opts.max_write_queue_bytes)
      return overflow();
    if (!writing_)
      do_write();
  }

  // The caller does not read its response: abort the exchange (the run is
  // cancelled through the abort callback) and drop the connection, so the
  // queue is freed now rather than when the caller leaves.
  void overflow() {
    srv_->counters->write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("dropping HTTP client {}: {} bytes of its response wait to be written "
                 "(max_write_queue_bytes {}); the call is cancelled",
                 peer_, out_bytes_, srv_->opts.max_write_queue_bytes);
    peer_gone_ = true;
    std::deque<std::string>{}.swap(outq_);
    add_out_bytes(-static_cast<std::int64_t>(out_bytes_ - inflight_bytes_));
    if (active_) {
      if (auto fn = std::move(abort_fn_))
        fn();
    }
    shutdown();
  }

  // out_bytes_ and the listener-wide gauge move together.
  void add_out_bytes(std::int64_t delta) {
    out_bytes_ = static_cast<std::size_t>(static_cast<std::int64_t>(out_bytes_) + delta);
    srv_->counters->queued_bytes.fetch_add(delta, std::memory_order_relaxed);
  }

  void do_write() {
    writing_ = true;
    inflight_.swap(outq_);
    bufs_.clear();
    inflight_bytes_ = 0;
    for (auto& s : inflight_) {
      bufs_.emplace_back(asio::buffer(s));
      inflight_bytes_ += s.size();
    }
    asio::async_write(stream_, bufs_,
                      beast::bind_front_handler(&http_session::on_write, shared_from_this()));
  }

  void on_write(error_code ec, std::size_t) {
    writing_ = false;
    inflight_.clear();
    add_out_bytes(-static_cast<std::int64_t>(inflight_bytes_));
    inflight_bytes_ = 0;
    if (ec) {
      add_out_bytes(-static_cast<std::int64_t>(out_bytes_));
      std::deque<std::string>{}.swap(outq_);
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

  void after_response() {
    finishing_ = false;
    active_ = false;
    abort_fn_ = nullptr;
    if (!keep_alive_ && !peer_gone_ && !watching_)
      return linger_close();
    if (!keep_alive_ || peer_gone_)
      return shutdown();
    if (watching_)
      stream_.next_layer().cancel(); // on_watch restarts the parse
    else
      do_read();
  }

  // A refusal (413, 401, ...) may leave the client still sending its body:
  // closing with unread bytes resets the connection, and the client sees
  // ECONNRESET instead of our answer. So stop sending, read and drop what
  // still comes (bounded in bytes and time), then close. TLS has no
  // half-close under the record layer: it closes at once.
  void linger_close() {
    if (stream_.is_tls())
      return shutdown();
    error_code ignored;
    stream_.next_layer().socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.next_layer().expires_after(std::chrono::seconds(2));
    do_drain();
  }

  void do_drain() {
    stream_.next_layer().async_read_some(
      asio::buffer(drain_buf_),
      beast::bind_front_handler(&http_session::on_drain, shared_from_this()));
  }

  void on_drain(error_code ec, std::size_t n) {
    drained_ += n;
    if (ec || drained_ > srv_->opts.max_body_bytes + 64 * 1024)
      return shutdown();
    do_drain();
  }

  void shutdown() {
    error_code ignored;
    auto& s = stream_.next_layer().socket();
    s.shutdown(tcp::socket::shutdown_both, ignored);
    s.close(ignored);
  }

  flex_stream stream_;
  std::shared_ptr<server::impl> srv_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::deque<std::string> outq_;
  std::deque<std::string> inflight_;
  std::array<char, 4096> drain_buf_;
  std::size_t drained_ = 0;
  std::size_t out_bytes_ = 0;      // outq_ and inflight_
  std::size_t inflight_bytes_ = 0;
  std::vector<asio::const_buffer> bufs_;
  std::function<void()> abort_fn_;
  std::string cors_origin_;
  std::string peer_address_;
  std::string admitted_origin_;
  bool cors_ok_ = false;
  bool token_from_query_ = false;
  bool keep_alive_ = true;
  bool active_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool watching_ = false;
  bool peer_gone_ = false;
};

namespace {

class responder_impl : public http_responder {
public:
  explicit responder_impl(std::shared_ptr<http_session> s)
    : session_(std::move(s)), strand_(session_->strand()) {
  }

  void respond(int status, std::string content_type, std::string body,
               http_headers extra) override {
    post([status, ct = std::move(content_type), b = std::move(body),
          x = std::move(extra)](http_session& s) mutable {
      auto n = b.size();
      s.head(status, ct, n, x, std::move(b));
    });
  }

  void start_stream(int status, std::string content_type, http_headers extra) override {
    post([status, ct = std::move(content_type), x = std::move(extra)](http_session& s) {
      s.head(status, ct, std::nullopt, x, {});
    });
  }

  void write(std::string data) override {
    post([d = std::move(data)](http_session& s) mutable { s.chunk(std::move(d)); });
  }

  void finish() override {
    post([](http_session& s) { s.last_chunk(); });
  }

  void on_abort(std::function<void()> fn) override {
    post([f = std::move(fn)](http_session& s) mutable { s.set_abort(std::move(f)); });
  }

private:
  template <class F>
  void post(F&& f) {
    asio::post(strand_, [s = session_, fn = std::forward<F>(f)]() mutable { fn(*s); });
  }

  std::shared_ptr<http_session> session_;
  asio::any_io_executor strand_;
};

} // namespace

http_responder_ptr http_session::make_responder() {
  return std::make_shared<responder_impl>(shared_from_this());
}

// -- listener ------------------------------------------------------------------

void server::impl::do_accept() {
  acceptor.async_accept(asio::make_strand(ioc),
                        beast::bind_front_handler(&impl::on_accept, shared_from_this()));
}

void server::impl::on_accept(error_code ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || !acceptor.is_open())
    return;
  if (ec)
    return on_accept_error(ec);
  if (static_cast<std::size_t>(counters->connections.load(std::memory_order_relaxed))
      >= opts.max_connections) {
    refuse(std::move(socket));
  } else {
    flex_stream s{beast::tcp_stream{std::move(socket)}, connection_slot{counters}};
    std::make_shared<http_session>(std::move(s), shared_from_this())->run();
  }
  do_accept();
}

void server::impl::on_accept_error(error_code ec) {
  counters->accept_errors.fetch_add(1, std::memory_order_relaxed);
  const bool out_of_fds = ec == asio::error::no_descriptors
                          || ec == boost::system::errc::too_many_files_open_in_system;
  // Out of descriptors the pending connection would be offered again at
  // once: accept it with the spare descriptor and close it.
  bool shed = out_of_fds
              && spare().shed_one(acceptor.native_handle(),
                                  refusal(503, "Server out of file descriptors, try again later"));
  if (auto n = accept_log.due())
    spdlog::warn("accept on port {} failed: {} ({} time(s) in 5 s){}", bound_port, ec.message(),
                 n, shed ? "; refusing connections until descriptors are free" : "");
  // Back off instead of spinning on the error.
  retry.expires_after(std::chrono::milliseconds(50));
  retry.async_wait([self = shared_from_this()](error_code e) {
    if (!e)
      self->do_accept();
  });
}

namespace {

// A connection over max_connections: it gets its answer, then what it sent
// is read (and dropped) for a moment so that closing does not reset the
// connection before the answer is read.
class refused_connection : public std::enable_shared_from_this<refused_connection> {
public:
  explicit refused_connection(tcp::socket&& s) : stream_(std::move(s)) {
  }
  void run(std::string answer) {
    error_code ignored;
    auto& sock = stream_.socket();
    sock.non_blocking(true, ignored);
    if (!answer.empty())
      sock.send(asio::buffer(answer), 0, ignored);
    sock.shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(1));
    drain();
  }

private:
  void drain() {
    stream_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](error_code ec,
                                                                            std::size_t) {
      if (!ec)
        self->drain();
    });
  }
  beast::tcp_stream stream_;
  char buf_[512];
};

} // namespace

void server::impl::refuse(tcp::socket socket) {
  counters->connections_refused.fetch_add(1, std::memory_order_relaxed);
  if (auto n = refuse_log.due())
    spdlog::warn("refusing connections on port {}: {} open (max_connections {}); {} refused "
                 "in 5 s",
                 bound_port, counters->connections.load(), opts.max_connections, n);
  // A TLS client could not read a plain answer.
  std::make_shared<refused_connection>(std::move(socket))
    ->run(opts.tls ? std::string{}
                   : refusal(503, "Too many connections (max_connections "
                                    + std::to_string(opts.max_connections)
                                    + " on this port), try again later"));
}

server::server(io_runtime& io, server_options opts)
  : impl_(std::make_shared<impl>(io.context(), std::move(opts))) {
}

server::~server() {
  stop_accepting();
}

void server::on_websocket(std::string path, ws_factory factory) {
  impl_->ws_routes.push_back({std::move(path), false, {}, std::move(factory)});
}

void server::on_websocket_prefix(std::string prefix, upgrade_check check, ws_factory factory) {
  impl_->ws_routes.push_back({std::move(prefix), true, std::move(check), std::move(factory)});
}

void server::on_http(http_handler handler) {
  impl_->http = std::move(handler);
}

std::string server::listen() {
  error_code ec;
  auto address = asio::ip::make_address(impl_->opts.bind, ec);
  if (ec)
    return "invalid bind address '" + impl_->opts.bind + "': " + ec.message();
  auto try_bind = [&](std::uint16_t port) -> error_code {
    error_code e;
    tcp::endpoint ep{address, port};
    auto& a = impl_->acceptor;
    if (a.is_open())
      a.close(e);
    a.open(ep.protocol(), e);
    if (e)
      return e;
    a.set_option(asio::socket_base::reuse_address(true), e);
    a.bind(ep, e);
    if (e)
      return e;
    a.listen(asio::socket_base::max_listen_connections, e);
    return e;
  };
  auto& o = impl_->opts;
  if (o.port == 0 && o.range_first != 0) {
    for (unsigned p = o.range_first; p <= o.range_last; ++p) {
      ec = try_bind(static_cast<std::uint16_t>(p));
      if (!ec)
        break;
    }
    if (ec)
      return "no free port in " + std::to_string(o.range_first) + "-"
             + std::to_string(o.range_last) + " on " + o.bind;
  } else if ((ec = try_bind(o.port))) {
    return "cannot listen on " + o.bind + ":" + std::to_string(o.port) + ": " + ec.message();
  }
  impl_->bound_port = impl_->acceptor.local_endpoint(ec).port();
  spare().ensure();
  impl_->do_accept();
  return {};
}

std::uint16_t server::port() const {
  return impl_->bound_port;
}

void server::stop_accepting() {
  asio::post(impl_->acceptor.get_executor(), [self = impl_] {
    error_code ignored;
    self->acceptor.close(ignored);
    self->retry.cancel();
  });
}

const socket_counters& server::counters() const {
  return *impl_->counters;
}

} // namespace actor_host::net
