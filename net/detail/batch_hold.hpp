#pragma once

// Internal to net/: a write batch that waits for the reads already possible
// before it goes (http_response.cpp, ws_session.cpp).

#include "net/detail/flex_stream.hpp"
#include "net/handler_tail.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

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
/// woken by an actor goes at once (on CAF's threads or, on the I/O thread,
/// at the end of the actors' burst: its writes batch by themselves, one
/// wake-up for all a burst writes), and so does any batch once the session
/// was sent something else (a head, the body's end, a close) that must not
/// overtake it: those go through post_in_order.
class batch_hold {
public:
  struct ticket {
    std::uint64_t order = 0;
    bool from_io = false;
  };

  static constexpr int max_looks = 64;
  static constexpr std::size_t max_bytes = 64 * 1024;

  /// Any thread: wakes the session for a batch. `make(ticket)` makes the
  /// handler, which calls wait() with the ticket.
  template <class Make>
  void wake(const io_strand& strand, Make&& make) {
    std::lock_guard<std::mutex> g{mtx_};
    send(strand, make(ticket{order_, in_read_handler}));
  }

  /// Any thread: a post to the session that stays behind every batch
  /// woken before it. `whole`: a complete answer (an HTTP response with its
  /// body): nothing else joins it on its connection, so at the end of a
  /// read handler's tail it goes at once too (see send).
  template <class F>
  void post_in_order(const io_strand& strand, F&& f, bool whole = false) {
    std::lock_guard<std::mutex> g{mtx_};
    ++order_;
    send(strand, std::forward<F>(f), whole);
  }

  /// Whether nothing was ever sent through this hold: then a step taken on
  /// the strand at once cannot overtake anything of it.
  bool untouched() {
    std::lock_guard<std::mutex> g{mtx_};
    return !sent_;
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
  /// mtx_ held. Outside a read handler but inside a handler's tail_scope
  /// (an actor's burst on the I/O thread, handler_tail.hpp) the post waits
  /// for the scope's end, where a burst's is dispatched: no post, no poll
  /// (a read handler's is posted then, or not: tail_post_policy). What
  /// any thread sends meanwhile joins it, so nothing overtakes it; it is
  /// taken only on the strand, so what comes after is queued behind it.
  template <class F>
  void send(const io_strand& strand, F&& f, bool whole = false) {
    sent_ = true;
    if (!deferred_.empty()) {
      deferred_.emplace_back(std::forward<F>(f));
      return;
    }
    if (in_read_handler || !tail_open()) {
      boost::asio::post(strand, std::forward<F>(f));
      return;
    }
    deferred_.emplace_back(std::forward<F>(f));
    // A whole answer waits for no read: nothing is added to it. What a
    // read handler's tail wakes is posted, so that other sockets' reads add
    // to the same write, while the thread's posts find such reads
    // (tail_post_policy: each post costs a reactor poll).
    defer_to_tail([this, strand, whole] {
      auto run = deferred_run{this};
      tail_post_mark mark;
      if (strand.running_in_this_thread() || (!whole && tail_posts_writes(mark))) {
        run.mark = mark;
        boost::asio::post(strand, std::move(run));
      } else {
        boost::asio::dispatch(strand, std::move(run));
      }
    });
  }

  /// Runs what was deferred, on the strand. Each entry keeps its session,
  /// which owns this, alive until it is taken. Move-only: dropped unrun
  /// (the context stopped), it lets the entries go, so no session is kept.
  struct deferred_run {
    batch_hold* hold;
    tail_post_mark mark; // set when a read tail's policy posted it
    explicit deferred_run(batch_hold* h) : hold(h) {}
    deferred_run(deferred_run&& other) noexcept
      : hold(std::exchange(other.hold, nullptr)), mark(other.mark) {}
    deferred_run(const deferred_run&) = delete;
    deferred_run& operator=(const deferred_run&) = delete;
    deferred_run& operator=(deferred_run&&) = delete;
    ~deferred_run() {
      if (hold != nullptr)
        take(std::exchange(hold, nullptr)); // destroyed outside the lock
    }
    void operator()() {
      tail_post_ran(mark);
      auto fns = take(std::exchange(hold, nullptr));
      for (auto& fn : fns)
        fn();
    }
    static std::vector<std::function<void()>> take(batch_hold* h) {
      std::vector<std::function<void()>> fns;
      std::lock_guard<std::mutex> g{h->mtx_};
      fns.swap(h->deferred_);
      return fns;
    }
  };

  std::mutex mtx_;
  // Sent while a deferred dispatch is pending: run in order by deferred_run.
  std::vector<std::function<void()>> deferred_;
  std::uint64_t order_ = 0;
  bool sent_ = false; // anything, ever (untouched())
  int looks_ = 0;
  std::size_t seen_ = 0;
};

} // namespace actor_host::net::detail
