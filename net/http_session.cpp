#include "net/detail/http_session.hpp"

#include "net/access_policy.hpp"
#include "net/detail/ws_session.hpp"
#include "net/handler_tail.hpp"
#include "net/http_head.hpp"
#include "wire/url.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

namespace actor_host::net {

namespace {

// Field names are tokens (Beast refuses anything else), so ASCII is all
// there is to lower; std::tolower is a call per character.
char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// The fields of `req` by lower-case name (the last of a repeated one wins)
/// and, in `duplicate` if asked, the first is_singleton_header name it
/// carries twice ("" if none).
std::map<std::string, std::string> collect_headers(const http_request_message& req,
                                                   std::string* duplicate) {
  std::map<std::string, std::string> out;
  for (auto& f : req) {
    auto raw = f.name_string();
    std::string name(raw.size(), '\0');
    std::transform(raw.begin(), raw.end(), name.begin(), ascii_lower);
    auto [at, fresh] = out.try_emplace(std::move(name));
    if (!fresh && duplicate && duplicate->empty() && is_singleton_header(at->first))
      *duplicate = at->first;
    at->second.assign(f.value().data(), f.value().size());
  }
  return out;
}

} // namespace

// Request-side views of a parsed head (declared in detail/ws_session.hpp:
// upgrades are described with them).
std::map<std::string, std::string> lower_case_headers(const http_request_message& req) {
  return collect_headers(req, nullptr);
}

upgrade_request describe_upgrade(const http_request_message& req) {
  upgrade_request up;
  up.target = std::string{req.target()};
  up.headers = lower_case_headers(req);
  wire::split_target(up.target, up.path, up.query);
  return up;
}

namespace {

std::string endpoint_string(const flex_stream::socket_type& s) {
  error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec)
    return "?";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

std::string endpoint_address(const flex_stream::socket_type& s) {
  error_code ec;
  auto ep = s.remote_endpoint(ec);
  return ec ? std::string{} : ep.address().to_string();
}

} // namespace

http_session::http_session(flex_stream&& stream, std::shared_ptr<server::impl> srv)
  : stream_(std::move(stream)), srv_(std::move(srv)) {
  peer_ = endpoint_string(stream_.next_layer().socket());
  peer_address_ = endpoint_address(stream_.next_layer().socket());
  peer_loopback_ = is_loopback_address(peer_address_);
  ++srv_->counters->http_connections;
}

http_session::~http_session() {
  --srv_->counters->http_connections;
  add_out_bytes(-static_cast<std::int64_t>(out_bytes_));
}

void http_session::run() {
  error_code ignored;
  stream_.next_layer().socket().set_option(tcp::no_delay{true}, ignored);
  // Responses are sent at once (write_now.hpp); every other operation on
  // this socket is asynchronous and does not mind.
  stream_.next_layer().socket().non_blocking(true, ignored);
  asio::dispatch(stream_.get_executor(),
                 beast::bind_front_handler(&http_session::do_detect, shared_from_this()));
}

// A TLS listener looks at the first bytes: a ClientHello starts the
// handshake, anything else is refused in plain words.
void http_session::do_detect() {
  if (!srv_->opts.tls)
    return do_read();
  stream_.next_layer().expires_after(
    std::chrono::milliseconds(srv_->opts.tls_handshake_timeout_ms));
  beast::async_detect_ssl(stream_.next_layer(), buffer_,
                          beast::bind_front_handler(&http_session::on_detect,
                                                    shared_from_this()));
}

void http_session::on_detect(error_code ec, bool tls) {
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

void http_session::on_handshake(error_code ec, std::size_t used) {
  if (ec) {
    handshake_failed(describe_tls_error(ec, nullptr));
    return shutdown();
  }
  buffer_.consume(used);
  do_read();
}

void http_session::handshake_failed(const std::string& reason) {
  srv_->counters->tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
  if (auto n = srv_->handshake_log.due())
    spdlog::warn("TLS handshake with {} on port {} failed: {} ({} event(s) in 5 s)", peer_,
                 srv_->bound_port, reason, n);
}

void http_session::do_read() {
  parser_.emplace();
  parser_->body_limit(srv_->opts.max_body_bytes);
  parser_->header_limit(64 * 1024);
  stream_.next_layer().expires_after(std::chrono::milliseconds(srv_->opts.http_idle_timeout_ms));
  if (!stream_.is_tls() && read_head_now())
    return;
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&http_session::on_header,
                                                    shared_from_this()));
}

// Beast's reads post their completion even when the socket or the buffer
// already held the whole request: two more handlers, each after a poll of
// the reactor. On plain TCP what the socket has is read here (the socket is
// non-blocking) and a request that is all there is parsed at once; only the
// rest of one that is not goes to Beast's asynchronous read, which goes on
// from the parser's state and the buffer. True when the head was handed on.
bool http_session::read_head_now() {
  error_code ec;
  if (buffer_.size() == 0) {
    auto n = stream_.next_layer().socket().read_some(buffer_.prepare(4096), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again)
      return false;
    if (ec == asio::error::eof)
      ec = http::error::end_of_stream; // as Beast reports a close between requests
    if (ec) {
      on_header(ec, 0);
      return true;
    }
    buffer_.commit(n);
  }
  // A head that is not all there is not consumed: need_more, and Beast's
  // read takes it from the buffer.
  auto used = parser_->put(buffer_.data(), ec);
  buffer_.consume(used);
  if (ec == http::error::need_more)
    return false;
  on_header(ec, used);
  return true;
}

// The body as far as the buffer holds it; true when the request is done
// (or failed) and was handed on.
bool http_session::read_body_now() {
  parser_->eager(true);
  while (!parser_->is_done() && buffer_.size() > 0) {
    error_code ec;
    auto used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more)
      break;
    if (ec) {
      on_read(ec, 0);
      return true;
    }
    if (used == 0)
      break;
  }
  if (!parser_->is_done())
    return false;
  on_read({}, 0);
  return true;
}

// The access policy sees the head before any body is read.
void http_session::on_header(error_code ec, std::size_t n) {
  if (ec)
    return on_read(ec, n);
  auto& head_req = parser_->get();
  // Read once, for the policy and then the handler (on_read).
  head_ = {};
  head_.method = std::string{head_req.method_string()};
  wire::split_target(head_req.target(), head_.path, head_.query);
  std::string duplicate;
  head_.headers = collect_headers(head_req, &duplicate);
  const auto& path = head_.path;
  const auto& method = head_.method;
  access_request ar{method,        path,
                    &head_.headers, &head_.query,
                    peer_address_, websocket::is_upgrade(head_req),
                    duplicate,     peer_loopback_};
  auto verdict = check_access(srv_->opts.access, ar);
  if (verdict.status != 0) {
    srv_->counters->access_refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("refused {} {} from {}: {} {}", method, loggable_path(path), peer_,
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
  if (auto i = head_.headers.find("origin"); verdict.cors && i != head_.headers.end())
    admitted_origin_ = i->second;
  token_from_query_ = verdict.token_from_query;
  token_path_length_ = verdict.token_path_length;
  if (read_body_now())
    return;
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&http_session::on_read, shared_from_this()));
}

void http_session::on_read(error_code ec, std::size_t) {
  // The handler's actor runs at this handler's end (handler_tail.hpp).
  tail_scope tail{tail_scope::reading};
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
  const bool chunked = parser_->chunked();
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
                           route->factory, route->keep_upgrade,
                           {srv_->opts.max_frame_bytes, srv_->opts.max_write_queue_bytes},
                           srv_->counters);
      return;
    }
  }
  keep_alive_ = req.keep_alive();
  begin_exchange(cors_ok_);
  // The head on_header read; a chunked body's trailer may have added fields.
  http_request hr = std::move(head_);
  if (chunked)
    hr.headers = lower_case_headers(req);
  // The token in the path has done its work: the handler sees the route.
  if (token_path_length_ != 0)
    hr.path.erase(0, token_path_length_);
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
void http_session::begin_exchange(bool cors) {
  active_ = true;
  stream_.next_layer().expires_never();
  // Written only if header_safe (append_response_head checks).
  cors_origin_ = cors ? admitted_origin_ : std::string{};
}

// A read while the handler works tells us when the client hangs up, so a
// long-running call can be cancelled. Bytes of a pipelined next request
// stay in buffer_ for the next parse.
void http_session::watch_peer() {
  if (watching_ || peer_gone_ || buffer_.size() > 64 * 1024)
    return;
  watching_ = true;
  stream_.async_read_some(buffer_.prepare(4096),
                          beast::bind_front_handler(&http_session::on_watch, shared_from_this()));
}

void http_session::on_watch(error_code ec, std::size_t n) {
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

// Idle between requests (after_response): the next request completes the
// watch read (on_watch parses it). The idle timeout is checked lazily: the
// timer armed for the first idle stretch, when it fires during a later one,
// waits for what is left of that.
void http_session::go_idle() {
  idle_since_ = std::chrono::steady_clock::now();
  if (idle_armed_)
    return;
  if (!idle_timer_)
    idle_timer_.emplace(stream_.get_executor());
  wait_idle(std::chrono::milliseconds(srv_->opts.http_idle_timeout_ms));
}

void http_session::wait_idle(std::chrono::steady_clock::duration left) {
  idle_armed_ = true;
  idle_timer_->expires_after(left);
  // Weak: a closed connection's session goes at once, not when this fires.
  idle_timer_->async_wait([weak = weak_from_this()](error_code ec) {
    if (auto self = weak.lock())
      self->on_idle(ec);
  });
}

void http_session::on_idle(error_code ec) {
  idle_armed_ = false;
  // Busy again (a request, or the rest of one under Beast's own timeout):
  // the next idle stretch arms it again.
  if (ec || active_ || !watching_ || peer_gone_)
    return;
  auto limit = std::chrono::milliseconds(srv_->opts.http_idle_timeout_ms);
  auto idle = std::chrono::steady_clock::now() - idle_since_;
  if (idle >= limit) {
    peer_gone_ = true; // so the watch read, ending with the socket, parses nothing
    return shutdown();
  }
  wait_idle(limit - idle);
}

void start_http_session(flex_stream&& stream, std::shared_ptr<server::impl> srv) {
  std::make_shared<http_session>(std::move(stream), std::move(srv))->run();
}

} // namespace actor_host::net
