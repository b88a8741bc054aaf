#pragma once

// Private to net/: what both WebSocket sessions (ws_session.cpp on Beast,
// lean_ws_session.cpp) do with the pieces of a message they read.

#include "net/detail/message_meter.hpp"
#include "net/detail/message_parts.hpp"
#include "net/socket_counters.hpp"
#include "net/transport.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace actor_host::net::detail {

/// A message is read in pieces (frames, reads). Each piece is counted
/// against the frame cap before the next is read, collected apart from the
/// read buffer, and the whole message goes to the frame handler, unless
/// the session is closing. The session acts on what add() returns.
class message_reader {
public:
  explicit message_reader(std::size_t cap) : meter_(cap) {
  }

  enum class outcome {
    more,          ///< nothing to do (the message goes on, or went to the handler)
    too_big,       ///< over the cap and no handler takes it: close with 1009 (once);
                   ///< the rest of the message is read and dropped
    refuse_binary, ///< a binary message the handler did not take: close with 1003
    bad_utf8,      ///< a text message that is not UTF-8: fail with 1007
  };

  /// A piece of a text or binary message; `last` ends it. `check_utf8`: the
  /// session has no other UTF-8 check of text messages (Beast checks them).
  outcome add(std::string_view piece, bool text, bool last, const frame_handler_ptr& handler,
              bool closing, socket_counters& counters, bool check_utf8);

  /// A message went over the cap with no handler to take it: the socket
  /// closes for it.
  bool oversize_closing() const {
    return oversize_close_;
  }

private:
  message_parts parts_;
  message_meter meter_;
  bool oversize_close_ = false;
};

} // namespace actor_host::net::detail
