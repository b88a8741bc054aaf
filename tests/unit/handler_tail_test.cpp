#define CAF_SUITE handler_tail

#include <caf/test/unit_test.hpp>

#include "net/handler_tail.hpp"

#include <string>

// How deferred strand wake-ups keep their order: batch_hold_test.

using actor_host::net::defer_to_tail;
using actor_host::net::tail_open;
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
