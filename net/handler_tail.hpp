#pragma once

// Work deferred to the end of the handler an I/O thread runs.
//
// Every handler asio runs after another one posted it costs a poll of the
// reactor first (`epoll_wait` with a zero timeout: asio polls between
// handlers whenever more are queued), and on the machines measured a system
// call is most of what a small call costs (bench/ANALYSIS.md). A socket's
// read handler that hands frames to actors, and the actors' turns that
// answer, each used to post the next step: the actors' turn, then the wake-up
// of the strand that writes the answer. Within a tail_scope those steps are
// kept and run when the scope ends instead, in the same handler and in the
// order they were deferred: the reads first, then the actors they woke, then
// the writes those actors queued (one write per socket for all of them;
// detail/batch_hold.hpp keeps them in order with what other threads send).

#include <cstdint>
#include <functional>

namespace actor_host::net {

/// Opened by a handler on an I/O thread around what it does (a socket's
/// read handler, a burst of actor turns). Scopes nest; the outermost one
/// runs what was deferred, including what that defers in turn, as it ends.
class tail_scope {
public:
  /// What the outermost scope's handler is (see tail_writes_inline).
  enum kind { reading, bursting };

  explicit tail_scope(kind k) noexcept;
  ~tail_scope();
  tail_scope(const tail_scope&) = delete;
  tail_scope& operator=(const tail_scope&) = delete;

private:
  bool outermost_;
};

/// True while this thread is inside a tail_scope (and while it runs what
/// was deferred to it).
bool tail_open() noexcept;

/// Whether the writes deferred to this tail go inline at its end. Not at a
/// socket read handler's: the other sockets' read handlers that the same
/// reactor poll made ready run first, and what their actors write to the
/// same connection joins one write (at 64 callers one runtime's frames go
/// in one sendmsg, not one each). A burst of actor turns was itself posted
/// behind those handlers, so its writes go at once.
bool tail_writes_inline() noexcept;

/// Runs `fn` at the end of this thread's outermost tail_scope. Only while
/// tail_open().
void defer_to_tail(std::function<void()> fn);

/// Whether the writes a socket read handler's tail defers are posted (so
/// that the other read handlers the same reactor poll made ready add to
/// them) or go at once. A post costs a reactor poll (`epoll_wait` with a zero
/// timeout) before it runs; when other handlers run before it that poll is
/// shared and their writes to the same connection join (64 callers: one
/// sendmsg to the runtime for all), but a lone call (one caller, one frame at
/// a time) has nothing to wait for and paid the poll twice per call
/// (bench/ANALYSIS.md, issue 35). So each I/O thread learns from its own
/// posts: after `to_inline` read tails in a row whose posts no other handler
/// ran before, a read tail's writes go at once; then every `probe_every`th
/// is posted still, and one that other handlers ran before turns posting
/// back on.
class tail_post_policy {
public:
  static constexpr int to_inline = 4;
  static constexpr unsigned probe_every = 16;

  /// At a read handler's tail: post its writes (true) or send them now.
  bool post() noexcept {
    if (posting_)
      return true;
    return ++inline_runs_ % probe_every == 0;
  }

  /// As a posted batch runs: whether other handlers ran since it was posted.
  void ran(bool others_ran) noexcept {
    if (others_ran) {
      posting_ = true;
      useless_ = 0;
    } else if (++useless_ >= to_inline) {
      posting_ = false;
      useless_ = 0;
    }
  }

  bool posting() const noexcept {
    return posting_;
  }

private:
  bool posting_ = true;
  int useless_ = 0;
  unsigned inline_runs_ = 0;
};

/// A batch posted at a read handler's tail, as posted: which thread, and how
/// many handler scopes it had opened.
struct tail_post_mark {
  const void* thread = nullptr;
  std::uint64_t scopes = 0;
};

/// This thread's policy (tail_post_policy) for the read tail now ending:
/// true to post its writes, with `mark` set for tail_post_ran. False outside
/// a read handler's tail (a burst's writes go at once).
bool tail_posts_writes(tail_post_mark& mark) noexcept;

/// As a batch posted under `mark` runs: teaches the thread's policy whether
/// the post was shared with other handlers, once per posting tail (its
/// posts share one poll). Nothing on another thread.
void tail_post_ran(const tail_post_mark& mark) noexcept;

} // namespace actor_host::net
