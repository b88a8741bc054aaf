#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace actor_host::net {

/// What a server-side WebSocket's upgrade request asked for (empty on the
/// client side): for handlers that decide by headers or query (iii RBAC).
struct upgrade_request {
  std::string target;                         // raw path and query, not decoded
  std::map<std::string, std::string> headers; // lower-case names
  std::string path;                           // decoded path of `target`
  std::map<std::string, std::string> query;   // decoded query of `target`
};

/// Outbound half of a message connection: a WebSocket session, or a fake in
/// tests. Every member is thread-safe: actors call it from scheduler threads
/// while the socket lives on an I/O thread.
class transport {
public:
  virtual ~transport() = default;

  /// Queues one text frame. Frames are written in call order. A transport that
  /// is closing or closed drops the frame.
  virtual void send_text(std::string frame) = 0;

  /// Queues one binary frame, in the same order as the text frames.
  virtual void send_binary(std::string frame) = 0;

  /// Flow control: stops reading from the peer until `resume_reading`, so
  /// that TCP pushes back on it. Called by a frame handler (on the socket's
  /// strand) it holds before the next frame is read; from elsewhere, a frame
  /// being read may still be delivered. Transports without flow control
  /// ignore both.
  virtual void pause_reading() {
  }
  virtual void resume_reading() {
  }

  /// Read-side backpressure: the consumer of the frames this transport's
  /// handler delivered says it has processed one (see frame_bridge's
  /// read window). Transports without a window ignore it.
  virtual void frame_processed() {
  }

  /// Writes what is queued, then closes with `code`. Idempotent.
  virtual void close(std::uint16_t code = 1000, std::string reason = {}) = 0;

  /// Drops the connection at once, without a close handshake: for a peer
  /// known to be gone (a half-open socket). Idempotent.
  virtual void drop() {
    close(1001, "going away");
  }

  /// "ip:port" of the peer, for logs.
  virtual const std::string& peer() const = 0;

  /// The upgrade request of a server-side socket.
  virtual const upgrade_request& upgrade() const {
    static const upgrade_request none;
    return none;
  }
};

using transport_ptr = std::shared_ptr<transport>;

/// Inbound half: where a session delivers what it reads. Called on the
/// session's I/O strand, one call at a time, never after `on_closed`.
class frame_handler {
public:
  virtual ~frame_handler() = default;

  /// One complete text frame. The string has spare capacity for simdjson's
  /// padding, so handlers may parse it in place.
  virtual void on_text(std::string frame) = 0;

  /// One complete binary frame. Returns false to refuse it, which closes the
  /// socket (1003): only handlers of binary protocols accept them.
  virtual bool on_binary(std::string_view) {
    return false;
  }

  /// Whether a text message over the frame cap is for this handler to
  /// settle (on_oversized) rather than a reason to close the socket (1009).
  /// A runtime's link takes them: one answer too large for the cap fails
  /// its own call, not every call on the link.
  virtual bool takes_oversized() const {
    return false;
  }

  /// A text message over the cap, read and dropped: its first and last
  /// bytes (at most oversized_head_bytes and oversized_tail_bytes) and its
  /// size. Memory held is bounded by the cap whatever the message's size.
  virtual void on_oversized(std::string /*head*/, std::string /*tail*/, std::uint64_t /*size*/) {
  }

  /// The peer sent a close frame with this code and reason (called once,
  /// just before `on_closed`): for protocols whose close reason means
  /// something, e.g. iii channels' `stream_complete`.
  virtual void on_peer_close(std::uint16_t /*code*/, std::string /*reason*/) {
  }

  /// The socket is gone (peer close, error, or our own close completed).
  virtual void on_closed(std::string reason) = 0;
};

using frame_handler_ptr = std::shared_ptr<frame_handler>;

inline constexpr std::size_t oversized_head_bytes = 64 * 1024;
inline constexpr std::size_t oversized_tail_bytes = 4 * 1024;

/// Makes the handler for a freshly opened WebSocket; runs on its strand
/// before the first read.
using session_factory = std::function<frame_handler_ptr(transport_ptr)>;

} // namespace actor_host::net
