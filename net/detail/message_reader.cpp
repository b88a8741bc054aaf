#include "net/detail/message_reader.hpp"

#include "net/detail/batch_hold.hpp"

#include <simdjson.h>

namespace actor_host::net::detail {

namespace {

void count(socket_counters& c, std::size_t n) {
  c.frames_in.fetch_add(1, std::memory_order_relaxed);
  c.bytes_in.fetch_add(n, std::memory_order_relaxed);
}

} // namespace

message_reader::outcome message_reader::add(std::string_view piece, bool text, bool last,
                                            const frame_handler_ptr& handler, bool closing,
                                            socket_counters& counters, bool check_utf8) {
  auto r = outcome::more;
  // A runtime's link takes a text message over the cap (transport.hpp).
  if (meter_.add(piece.size())
      && !(text && handler && !closing && handler->takes_oversized())) {
    oversize_close_ = true;
    r = outcome::too_big;
  }
  if (meter_.over()) {
    // The head kept is the message's first bytes.
    if (!oversize_close_)
      meter_.keep(parts_.empty() ? piece : parts_.joined(piece));
    parts_.clear();
  } else if (!last) {
    parts_.add(piece);
  }
  if (!last)
    return r;
  auto msg = meter_.end();
  const auto n = static_cast<std::size_t>(msg.size);
  if (msg.over) {
    if (!oversize_close_) {
      count(counters, n);
      if (handler && !closing)
        handler->on_oversized(std::move(msg.head), std::move(msg.tail), n);
    }
    return r;
  }
  if (!text) {
    const auto payload = parts_.empty() ? piece : parts_.joined(piece);
    const bool taken = handler && !closing && handler->on_binary(payload);
    parts_.clear();
    if (!taken)
      return outcome::refuse_binary;
    count(counters, n);
    return r;
  }
  std::string frame = parts_.take_text(piece, n);
  if (check_utf8 && !simdjson::validate_utf8(frame.data(), frame.size()))
    return outcome::bad_utf8;
  count(counters, n);
  if (handler && !closing) {
    read_handler_scope reading; // its writes may wait for the next reads (batch_hold.hpp)
    handler->on_text(std::move(frame));
  }
  return r;
}

} // namespace actor_host::net::detail
