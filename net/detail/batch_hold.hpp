#pragma once

// Internal to net/: a write batch that waits for the reads already possible
// before it goes (http_response.cpp, ws_session.cpp).

#include "net/detail/flex_stream.hpp"

#include <boost/asio/post.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>

namespace actor_host::net::detail {

/// Set while a socket's read handler hands a message on
/// (message_reader.cpp): what it writes is a spliced stream's.
inline thread_local bool in_read_handler = false;

class read_handler_scope {
public:
  read_handler_scope() : outer_(std::exchange(in_read_handler, true)) {
  }
  ~read_handler_scope() {
    in_read_handler = outer_;
  }
  read_handler_scope(const read_handler_scope&) = delete;
  read_handler_scope& operator=(const read_handler_scope&) = delete;

private:
  bool outer_;
};

/// A spliced stream's chunks are written to the caller's connection by the
/// runtime socket's read handler, on the I/O thread. A read handler sees one
/// frame, and the post that wakes the caller's strand is queued ahead of the
/// next frame's read completion: taken at once, every batch would hold one
/// chunk and cost a sendmsg while twenty more frames wait in the read buffer.
/// So a batch whose wake-up was posted from a read handler lets the reads
/// already possible run first: it posts itself again, behind them, while
/// they keep adding to it, up to max_looks times or max_bytes. A batch
/// posted by an actor goes at once (on CAF's threads or on the I/O thread
/// between socket handlers: its writes batch by themselves, one wake-up for
/// all an actor turn writes), and so does any batch once the session was
/// posted something else (a head, the body's end, a close) that must not
/// overtake it: those go through post_in_order.
class batch_hold {
public:
  struct ticket {
    std::uint64_t order = 0;
    bool from_io = false;
  };

  static constexpr int max_looks = 64;
  static constexpr std::size_t max_bytes = 64 * 1024;

  /// Any thread: the ticket of a batch's wake-up, about to be posted.
  ticket issue() {
    const bool from_io = in_read_handler;
    std::lock_guard<std::mutex> g{mtx_};
    return {order_, from_io};
  }

  /// Any thread: a post to the session that stays behind every batch
  /// posted before it.
  template <class F>
  void post_in_order(const io_strand& strand, F&& f) {
    std::lock_guard<std::mutex> g{mtx_};
    ++order_;
    boost::asio::post(strand, std::forward<F>(f));
  }

  /// On the strand, as the batch's wake-up with ticket `t` runs and the
  /// batch holds `bytes`: true when it was posted again (`again(ticket)`
  /// makes the handler), so it is not to be taken now.
  template <class Again>
  bool wait(const io_strand& strand, ticket t, std::size_t bytes, Again&& again) {
    if (!t.from_io)
      return false;
    std::lock_guard<std::mutex> g{mtx_};
    const bool grew = looks_ == 0 || bytes > seen_;
    if (t.order != order_ || !grew || looks_ >= max_looks || bytes >= max_bytes) {
      looks_ = 0;
      seen_ = 0;
      return false;
    }
    ++looks_;
    seen_ = bytes;
    boost::asio::post(strand, again(ticket{order_, true}));
    return true;
  }

private:
  std::mutex mtx_;
  std::uint64_t order_ = 0;
  int looks_ = 0;
  std::size_t seen_ = 0;
};

} // namespace actor_host::net::detail
