#pragma once

// Private to net/: where ws_session collects a message that arrives in
// several reads.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace actor_host::net::detail {

/// A message in parts collects here, not in the read buffer: the buffer
/// stays at what Beast prepares per read instead of keeping the largest
/// message's size while the connection idles, and the parts are copied
/// once, not again at the end. Text leaves padded for simdjson.
class message_parts {
public:
  // simdjson reads up to this many bytes past the end of a frame.
  static constexpr std::size_t simdjson_padding = 64;
  // What Beast reads per step at most (its tcp_frame_size).
  static constexpr std::size_t read_chunk_bytes = 1536;

  bool empty() const {
    return s_.empty();
  }

  /// A part that does not end the message.
  void add(std::string_view part) {
    // Usually a small message cut by the end of one read: room for the rest
    // and the padding at once, so it is allocated once.
    if (s_.empty())
      s_.reserve(part.size() + read_chunk_bytes + simdjson_padding);
    s_.append(part);
  }

  /// The parts so far with `last` after them; valid until the next call.
  std::string_view joined(std::string_view last) {
    s_.append(last);
    return s_;
  }

  /// The whole text message of `n` bytes, `last` its final part (all of
  /// it when it came in one read), with room for the padding.
  std::string take_text(std::string_view last, std::size_t n) {
    std::string frame;
    if (s_.empty()) {
      frame.reserve(n + simdjson_padding);
      frame.assign(last);
      return frame;
    }
    s_.reserve(n + simdjson_padding);
    s_.append(last);
    if (s_.capacity() - (n + simdjson_padding) > std::max<std::size_t>(n / 4, 4096)) {
      // Grown by doubling, up to twice its size: what the queues count is
      // the payload, so the frame goes on at about its own size (one copy,
      // as a message in one part costs).
      frame.reserve(n + simdjson_padding);
      frame.assign(s_);
      clear();
      return frame;
    }
    return std::exchange(s_, {});
  }

  /// Forgets the parts and their storage.
  void clear() {
    std::string{}.swap(s_);
  }

private:
  std::string s_;
};

} // namespace actor_host::net::detail
