#pragma once

// Lean WebSocket client for the bench tools (load generator, fake runtime).
//
// Why not net::ws_connect / net::blocking_ws_client: the bench clients must
// cost much less CPU than the system they measure, on the same 2 cores. This
// client writes pre-built frames into one output buffer and flushes it with a
// single write per batch (a stream of 1,000 chunks is a handful of syscalls),
// and hands received payloads to the caller as views into its read buffer.
// Client frames are masked with the all-zero key (RFC 6455 allows any key;
// with zero the payload bytes stay as they are, so frames can be pre-built).
//
// Everything runs on one thread (one loop); nothing here is thread-safe.
// Asio stays behind the pimpl: including this header costs nothing.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

namespace bench {

/// Splits a ws:// URL (wire::parse_url) into what ws_conn::connect takes.
bool split_ws_url(const std::string& url, std::string& host, std::uint16_t& port,
                  std::string& path);

/// One single-threaded event loop (an asio io_context).
class loop {
public:
  loop();
  ~loop();
  loop(const loop&) = delete;
  loop& operator=(const loop&) = delete;

  /// Runs handlers until stop() or until `limit` has passed.
  void run_for(std::chrono::nanoseconds limit);
  void stop();

  /// One-shot timer. Returns an id usable with cancel().
  std::uint64_t after(std::chrono::nanoseconds d, std::function<void()> f);
  void cancel(std::uint64_t timer_id);
  void post(std::function<void()> f);

  struct impl;
  impl& get() { return *impl_; }

private:
  std::unique_ptr<impl> impl_;
};

/// Bytes after every payload view handed out that may be read (simdjson).
constexpr std::size_t read_padding = 64;

class ws_conn {
public:
  struct handlers {
    std::function<void()> on_open;
    /// A complete text message. The view dies when the handler returns; at
    /// least read_padding readable bytes follow it.
    std::function<void(std::string_view)> on_text;
    /// Connection failed or closed (once).
    std::function<void(const std::string&)> on_close;
    /// Everything queued so far has been handed to the kernel.
    std::function<void()> on_drain;
  };

  /// Connects to ws://host:port/path. on_open follows once the upgrade is
  /// done; on_close once if the connection fails or the peer closes it (not
  /// after close()). Send only from on_open on. Handlers must not own the
  /// ws_conn (that would be a cycle).
  /// `read_buffer` is the initial receive buffer (grows for big frames).
  static std::shared_ptr<ws_conn> connect(loop& l, std::string host, std::uint16_t port,
                                          std::string path, handlers h,
                                          std::size_t read_buffer = 256 * 1024);

  /// Closes the socket.
  ~ws_conn();
  ws_conn(const ws_conn&) = delete;
  ws_conn& operator=(const ws_conn&) = delete;

  /// Queues one text frame whose payload is the concatenation of `parts`.
  void send_parts(std::initializer_list<std::string_view> parts);
  void send_text(std::string_view payload) { send_parts({payload}); }

  /// Bytes queued and not yet written.
  std::size_t backlog() const;
  bool is_open() const;

  /// Closes the socket (no closing handshake: bench peers do not care).
  void close();

  struct impl;
  explicit ws_conn(std::shared_ptr<impl> p);

private:
  std::shared_ptr<impl> impl_; // also owned by its pending operations
};

/// Appends one masked (zero key) client text frame to `out`.
void append_client_frame(std::string& out, std::initializer_list<std::string_view> parts);

} // namespace bench
