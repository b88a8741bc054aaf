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

} // namespace actor_host::net
