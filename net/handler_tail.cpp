#include "net/handler_tail.hpp"

#include <vector>

namespace actor_host::net {

namespace {

thread_local bool open = false;
thread_local bool writes_inline = false;
thread_local std::vector<std::function<void()>> deferred;
// Outermost scopes opened on this thread: handlers that ran (tail_post_mark).
thread_local std::uint64_t scopes = 0;
thread_local tail_post_policy policy;

} // namespace

tail_scope::tail_scope(kind k) noexcept : outermost_(!open) {
  if (outermost_) {
    writes_inline = k == bursting;
    ++scopes;
  }
  open = true;
}

tail_scope::~tail_scope() {
  if (!outermost_)
    return;
  // What runs here may defer more: it runs in this loop too. Each item is
  // moved out before it runs, as the vector may grow under it.
  for (std::size_t i = 0; i < deferred.size(); ++i) {
    auto fn = std::move(deferred[i]);
    fn();
  }
  deferred.clear();
  open = false;
}

bool tail_open() noexcept {
  return open;
}

bool tail_writes_inline() noexcept {
  return writes_inline;
}

void defer_to_tail(std::function<void()> fn) {
  deferred.push_back(std::move(fn));
}

bool tail_posts_writes(tail_post_mark& mark) noexcept {
  if (writes_inline || !policy.post())
    return false;
  mark = tail_post_mark{&scopes, scopes};
  return true;
}

void tail_post_ran(const tail_post_mark& mark) noexcept {
  // A tail's posts share the reactor poll before the first of them (a
  // runtime's read waking 64 callers' sessions pays one poll): the first
  // one to run says whether it was shared, the others say nothing.
  thread_local std::uint64_t judged = 0;
  if (mark.thread != &scopes || mark.scopes == judged)
    return;
  judged = mark.scopes;
  policy.ran(scopes != mark.scopes);
}

} // namespace actor_host::net
