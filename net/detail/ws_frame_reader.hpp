#pragma once

// Internal to net/: RFC 6455 frames as a server reads them from a client,
// for the lean WebSocket session (lean_ws_session.cpp). No socket here: the
// session feeds what one read brought, the fuzzer and the unit tests feed
// bytes directly.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace actor_host::net::detail {

/// What the reader finds, in order. A `false` return stops the feed right
/// after the piece it was given (the session paused reading).
class ws_frame_sink {
public:
  virtual ~ws_frame_sink() = default;
  /// A piece of a text or binary message's payload, unmasked, as it came:
  /// a message may come in many pieces (frames, reads); `last` ends it.
  virtual bool on_data(std::string_view piece, bool text, bool last) = 0;
  /// A whole control frame (ping 0x9, pong 0xA, close 0x8), unmasked. A
  /// close frame's payload is checked (code and UTF-8 reason) first.
  virtual bool on_control(std::uint8_t opcode, std::string_view payload) = 0;
};

/// Incremental: a frame may be cut anywhere between two feeds. Payloads are
/// unmasked in place and handed on without a copy; only a header cut by
/// the end of a read (at most 14 bytes) and a control frame's payload cut
/// likewise (at most 125) are kept. Clients must mask (§5.1); no extension
/// is ever agreed, so the reserved bits must be clear. Sizes are the
/// session's to cap: the reader holds nothing per payload byte.
class ws_frame_reader {
public:
  /// Consumes bytes from `data` until they run out, `sink` says stop, or
  /// the peer broke the protocol (failed()). Returns how many it consumed.
  std::size_t feed(char* data, std::size_t n, ws_frame_sink& sink);

  /// The close code for the protocol error found (1002 or 1007), or 0.
  std::uint16_t failed() const {
    return fail_code_;
  }
  /// What was wrong, for the log and the close frame's reason.
  const char* failure() const {
    return fail_what_;
  }

  /// A text or binary message is in progress (its last frame not read).
  bool in_message() const {
    return in_message_;
  }

  /// Whether a close frame's payload is one a peer may send (§5.5.1, §7.4):
  /// empty, or a valid code and a UTF-8 reason.
  static bool valid_close_payload(std::string_view payload);

private:
  bool start_frame();
  void fail(std::uint16_t code, const char* what);
  void unmask(char* p, std::size_t n);

  std::uint8_t hdr_[14];
  std::uint8_t hdr_len_ = 0;
  std::uint8_t opcode_ = 0; // of the frame being read
  bool fin_ = false;
  bool in_payload_ = false;
  bool in_message_ = false;
  bool message_text_ = false;
  std::uint8_t mask_[4] = {0, 0, 0, 0};
  std::uint8_t mask_off_ = 0;
  std::uint16_t fail_code_ = 0;
  const char* fail_what_ = "";
  std::uint64_t remaining_ = 0; // payload bytes of the frame not read yet
  std::string control_;         // a control frame's payload cut by a read
};

} // namespace actor_host::net::detail
