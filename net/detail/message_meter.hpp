#pragma once

// Private to net/: ws_session's count of the message it is reading against
// the frame cap, and what it keeps of a message over the cap.

#include "net/transport.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace actor_host::net::detail {

/// A message is read in parts; each is counted before the next is read. A
/// message over the cap is dropped as it comes: only its first
/// oversized_head_bytes and last oversized_tail_bytes are kept (for a
/// handler that settles it, transport.hpp), so memory stays within the cap
/// whatever the message's size.
class message_meter {
public:
  explicit message_meter(std::size_t cap) : cap_(cap) {
  }

  /// A part of `n` bytes was read: true when it takes the message over the
  /// cap (once per message). 0 = no cap.
  bool add(std::size_t n) {
    bytes_ += n;
    if (over_ || cap_ == 0 || bytes_ <= cap_)
      return false;
    over_ = true;
    return true;
  }

  bool over() const {
    return over_;
  }

  /// Bytes of the message over the cap, in order: the first call keeps its
  /// head, every call the tail.
  void keep(std::string_view part) {
    if (!kept_head_) {
      kept_head_ = true;
      head_.assign(part.substr(0, oversized_head_bytes));
    }
    if (part.size() >= oversized_tail_bytes) {
      tail_.assign(part.substr(part.size() - oversized_tail_bytes));
      return;
    }
    tail_.append(part);
    if (tail_.size() > oversized_tail_bytes)
      tail_.erase(0, tail_.size() - oversized_tail_bytes);
  }

  struct ended {
    std::uint64_t size = 0;
    bool over = false;
    std::string head; // over the cap and kept: its first bytes
    std::string tail; // ... and its last
  };

  /// The message is complete: what it was; the meter is ready for the next.
  ended end() {
    ended e{bytes_, over_, std::exchange(head_, {}), std::exchange(tail_, {})};
    bytes_ = 0;
    over_ = kept_head_ = false;
    return e;
  }

private:
  std::size_t cap_;
  std::uint64_t bytes_ = 0;
  bool over_ = false;
  bool kept_head_ = false;
  std::string head_;
  std::string tail_;
};

} // namespace actor_host::net::detail
