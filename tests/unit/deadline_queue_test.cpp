#define CAF_SUITE deadline_queue

#include "actors/common/deadline_queue.hpp"

#include <caf/test/unit_test.hpp>

using namespace actor_host;
using namespace std::chrono_literals;

namespace {

const deadline_queue::time_point t0{};

} // namespace

CAF_TEST(only an earlier deadline asks for a new wake-up) {
  deadline_queue q;
  CAF_CHECK(q.add("a", t0 + 5s));
  CAF_CHECK(!q.add("b", t0 + 7s));
  CAF_CHECK(q.add("c", t0 + 2s));
  CAF_CHECK(!q.add("d", t0 + 2s));
  CAF_CHECK_EQUAL(q.size(), 4u);
}

CAF_TEST(take_due returns what is due in deadline order) {
  deadline_queue q;
  q.add("late", t0 + 9s);
  q.add("a", t0 + 3s);
  q.add("b", t0 + 1s);
  CAF_CHECK(q.take_due(t0 + 500ms).empty());
  auto due = q.take_due(t0 + 3s);
  CAF_REQUIRE_EQUAL(due.size(), 2u);
  CAF_CHECK_EQUAL(due[0], "b");
  CAF_CHECK_EQUAL(due[1], "a");
  CAF_CHECK_EQUAL(q.size(), 1u);
}

CAF_TEST(removed ids never come due) {
  deadline_queue q;
  q.add("a", t0 + 1s);
  q.add("b", t0 + 2s);
  q.remove("a");
  q.remove("nope");
  auto due = q.take_due(t0 + 10s);
  CAF_REQUIRE_EQUAL(due.size(), 1u);
  CAF_CHECK_EQUAL(due[0], "b");
  CAF_CHECK(q.empty());
}

CAF_TEST(adding an id again moves its deadline) {
  deadline_queue q;
  q.add("a", t0 + 1s);
  q.add("a", t0 + 4s);
  CAF_CHECK_EQUAL(q.size(), 1u);
  CAF_CHECK(q.take_due(t0 + 2s).empty());
  CAF_CHECK_EQUAL(q.take_due(t0 + 4s).size(), 1u);
}

CAF_TEST(rearm names the next wake-up once) {
  deadline_queue q;
  q.add("a", t0 + 1s);
  q.add("b", t0 + 3s);
  CAF_CHECK(!q.rearm()); // 1 s is armed already
  q.take_due(t0 + 1s);   // the 1 s wake-up fired
  auto next = q.rearm();
  CAF_REQUIRE(next);
  CAF_CHECK(*next == t0 + 3s);
  CAF_CHECK(!q.rearm());
  CAF_CHECK(!q.add("c", t0 + 5s)); // later than the armed 3 s
  q.take_due(t0 + 3s);
  auto last = q.rearm();
  CAF_REQUIRE(last);
  CAF_CHECK(*last == t0 + 5s);
  q.take_due(t0 + 5s);
  CAF_CHECK(!q.rearm());
}
