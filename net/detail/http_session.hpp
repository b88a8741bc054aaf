#pragma once

// Internal to net/: one accepted HTTP connection. Its request side (TLS
// detection, access policy, routing, upgrades) is in http_session.cpp, its
// response side (heads, chunks, the write queue, closing) in
// http_response.cpp. Everything runs on the connection's strand.

#include "net/detail/beast_names.hpp"
#include "net/detail/flex_stream.hpp"
#include "net/detail/server_impl.hpp"
#include "net/http_exchange.hpp"

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace actor_host::net {

class http_session : public std::enable_shared_from_this<http_session> {
public:
  http_session(flex_stream&& stream, std::shared_ptr<server::impl> srv);
  ~http_session();

  void run();

  // Called by the responder, always on the strand.
  void head(int status, const std::string& content_type, std::optional<std::size_t> length,
            const http_headers& extra, std::string body);
  // `pieces`: how many writes of the handler `data` holds (one HTTP chunk).
  void chunk(std::string data, std::size_t pieces = 1);
  void last_chunk();
  void set_abort(std::function<void()> fn);
  // The responder's writes waiting for the strand passed the queue's cap
  // (`held` bytes): dropped as a caller that does not read.
  void inbox_overflow(std::size_t held);
  // The exchange's responder went without finishing its response (`begun`:
  // its head was sent).
  void unanswered(bool begun);
  std::size_t max_write_queue_bytes() const;

  io_strand strand() {
    return stream_.get_executor();
  }

private:
  // Request side (http_session.cpp).
  void do_detect();
  void on_detect(error_code ec, bool tls);
  void on_handshake(error_code ec, std::size_t used);
  void handshake_failed(const std::string& reason);
  void do_read();
  bool read_head_now();
  bool read_body_now();
  void on_header(error_code ec, std::size_t n);
  void on_read(error_code ec, std::size_t);
  void begin_exchange(bool cors);
  void watch_peer();
  void on_watch(error_code ec, std::size_t n);
  void go_idle();
  void wait_idle(std::chrono::steady_clock::duration left);
  void on_idle(error_code ec);

  // Response side (http_response.cpp).
  http_responder_ptr make_responder();
  void enqueue(std::string data, bool last, std::size_t pieces = 1);
  void overflow(std::size_t held);
  void over_budget(std::size_t adding);
  void drop_exchange();
  void add_out_bytes(std::int64_t delta);
  void do_write();
  void on_write(error_code ec, std::size_t);
  void after_response();
  void linger_close();
  void do_drain();
  void on_drain(error_code ec, std::size_t n);
  void shutdown();

  flex_stream stream_;
  std::shared_ptr<server::impl> srv_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // Vectors, not deques: an empty std::deque allocates ~0.6 KB, and a
  // keep-alive connection idles with both empty.
  std::vector<std::string> outq_;
  std::vector<std::string> inflight_; // what the write in flight points into
  // Only a refused request's connection drains (linger_close): made then.
  std::unique_ptr<std::array<char, 4096>> drain_buf_;
  std::size_t drained_ = 0;
  std::size_t out_bytes_ = 0;      // outq_ and inflight_
  std::size_t inflight_bytes_ = 0;
  std::vector<asio::const_buffer> bufs_;
  std::function<void()> abort_fn_;
  // A keep-alive connection between requests: its watch read waits for the
  // next one, and this timer (made at the first idle stretch, armed once a
  // stretch) closes it after http_idle_timeout_ms.
  std::optional<asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>, io_strand>> idle_timer_;
  std::chrono::steady_clock::time_point idle_since_;
  bool idle_armed_ = false;
  std::string cors_origin_;
  std::string peer_address_;
  bool peer_loopback_ = false; // the access policy's question about peer_address_, asked once
  // The request head as on_header read it (method, path, query, headers),
  // handed to the handler with the body by on_read.
  http_request head_;
  std::string admitted_origin_;
  bool cors_ok_ = false;
  bool token_from_query_ = false;
  std::size_t token_path_length_ = 0; // the request came as /t/<token><route>
  bool keep_alive_ = true;
  bool active_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool watching_ = false;
  bool peer_gone_ = false;
};

} // namespace actor_host::net
