#pragma once

// Internal to net/: RFC 6455 data frames as the WebSocket session writes
// them itself, many per gather write, bypassing Beast (ws_session.cpp).

#include "net/detail/beast_names.hpp"

#include <boost/asio/buffer.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace actor_host::net {

/// One frame waiting to be written; `binary` selects the opcode, so binary
/// and text frames share one ordered queue. `control` (0x8 close, 0x9 ping,
/// 0xA pong) makes it a control frame instead, for a session that writes
/// its own (lean_ws_session.cpp).
struct out_frame {
  std::string payload;
  bool binary = false;
  std::uint8_t control = 0;
};

/// Writes the RFC 6455 §5.2 header of one final, uncompressed frame with
/// `opcode` into `p` (at most 14 bytes) and returns its size. `mask` is null
/// on the server side.
std::size_t put_frame_header(std::uint8_t* p, std::uint8_t opcode, std::uint64_t n,
                             const std::uint8_t* mask);
/// ... a text or binary frame.
inline std::size_t put_frame_header(std::uint8_t* p, bool binary, std::uint64_t n,
                                    const std::uint8_t* mask) {
  return put_frame_header(p, static_cast<std::uint8_t>(binary ? 0x2 : 0x1), n, mask);
}

/// Encodes the frames at the front of a queue into the buffers of one gather
/// write: FIN, no extensions, masked on the client side.
class ws_frame_encoder {
public:
  /// Client role: every frame from now on is masked (RFC 6455 §5.3).
  void use_masks();

  /// Encodes as many frames from the front of [first, last) as one write
  /// holds (at least one). The buffers point into this encoder and, for
  /// large unmasked payloads, into those payloads' heap storage: both stay
  /// put until the write completes (moving an out_frame does not move a
  /// payload that large, so the container may grow meanwhile).
  template <class It>
  void encode(It first, It last) {
    begin_batch();
    for (; first != last && add(*first); ++first) {
    }
    end_batch();
  }
  template <class Frames>
  void encode(const Frames& q) {
    encode(q.begin(), q.end());
  }

  const std::vector<asio::const_buffer>& buffers() const {
    return bufs_;
  }
  /// Frames and payload bytes in the last encode.
  std::size_t frames() const {
    return frames_;
  }
  std::size_t payload_bytes() const {
    return payload_;
  }

  /// After a write: gives back the memory one huge masked frame took, or,
  /// when nothing waits (`idle`), a batch buffer larger than small frames
  /// need, so an idle connection does not keep its largest batch.
  void trim(bool idle = false);

private:
  void begin_batch();
  /// False if `f` does not fit the batch (it holds one frame at least).
  bool add(const out_frame& f);
  void end_batch();
  void next_mask(std::uint8_t* out);
  void append_local(std::size_t off, std::size_t len);

  struct segment {
    const char* ext; // a large payload in the queue, or null: wbuf_ at off
    std::size_t off;
    std::size_t len;
  };
  std::string wbuf_;
  std::vector<segment> segs_;
  std::vector<asio::const_buffer> bufs_;
  std::size_t frames_ = 0;
  std::size_t payload_ = 0;
  std::size_t bytes_ = 0; // of the batch being encoded, headers included
  std::uint64_t mask_state_ = 0; // non-zero: client role, frames are masked
};

} // namespace actor_host::net
