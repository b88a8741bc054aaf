#define CAF_SUITE handler_tail

#include <caf/test/unit_test.hpp>

#include "net/handler_tail.hpp"

#include <string>
#include <thread>
#include <vector>

// How deferred strand wake-ups keep their order: batch_hold_test.

using actor_host::net::defer_to_tail;
using actor_host::net::tail_open;
using actor_host::net::tail_post_policy;
using actor_host::net::tail_scope;

CAF_TEST(deferred work runs in order when the outermost scope ends) {
  std::string log;
  CAF_CHECK(!tail_open());
  {
    tail_scope outer{tail_scope::bursting};
    CAF_CHECK(tail_open());
    defer_to_tail([&] {
      log += "a";
      // Deferred while the tail runs: runs in the same tail, after the rest.
      defer_to_tail([&] { log += "c"; });
    });
    {
      tail_scope inner{tail_scope::reading};
      defer_to_tail([&] { log += "b"; });
    }
    CAF_CHECK_EQUAL(log, ""); // the inner scope's end runs nothing
  }
  CAF_CHECK_EQUAL(log, "abc");
  CAF_CHECK(!tail_open());
}

CAF_TEST(the post policy writes at once after posts nothing shared) {
  tail_post_policy p;
  CAF_CHECK(p.post());
  for (int i = 0; i < tail_post_policy::to_inline - 1; ++i)
    p.ran(false);
  CAF_CHECK(p.posting());
  p.ran(true); // one shared post starts the count again
  for (int i = 0; i < tail_post_policy::to_inline - 1; ++i)
    p.ran(false);
  CAF_CHECK(p.posting());
  p.ran(false);
  CAF_CHECK(!p.posting());
  // Every probe_every-th batch is posted still, as a probe.
  unsigned posts = 0;
  for (unsigned i = 0; i < 3 * tail_post_policy::probe_every; ++i)
    posts += p.post() ? 1 : 0;
  CAF_CHECK_EQUAL(posts, 3u);
  p.ran(false); // a probe nothing else ran before: still at once
  CAF_CHECK(!p.posting());
  p.ran(true);
  CAF_CHECK(p.posting());
  CAF_CHECK(p.post());
}

CAF_TEST(one read tail posting to many sessions counts once) {
  // A runtime's read that wakes many callers' sessions pays one reactor poll
  // for all its posts: judged as one, nothing else ran before them.
  using actor_host::net::tail_post_mark;
  using actor_host::net::tail_post_ran;
  using actor_host::net::tail_posts_writes;
  std::vector<bool> posted;
  std::thread t{[&] { // the policy is the thread's own: a fresh one posts
    for (int i = 0; i < tail_post_policy::to_inline; ++i) {
      std::vector<tail_post_mark> marks(3);
      bool all = true;
      {
        tail_scope reading{tail_scope::reading};
        for (auto& m : marks)
          all = tail_posts_writes(m) && all;
      }
      posted.push_back(all);
      for (auto& m : marks)
        tail_post_ran(m); // as the posts run, nothing between
    }
    tail_post_mark m;
    tail_scope reading{tail_scope::reading};
    posted.push_back(tail_posts_writes(m));
  }};
  t.join();
  std::vector<bool> expected(tail_post_policy::to_inline, true);
  expected.push_back(false);
  CAF_CHECK_EQUAL(posted, expected);
}
