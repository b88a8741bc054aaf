#define CAF_SUITE deadline_queue

#include "actors/common/call_table.hpp"
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

CAF_TEST(numeric ids keep their order and deadlines) {
  basic_deadline_queue<std::uint64_t> q;
  CAF_CHECK(q.add(7, t0 + 2s));
  CAF_CHECK(q.add(3, t0 + 1s));
  CAF_CHECK(!q.add(9, t0 + 5s));
  q.remove(7);
  CAF_CHECK_EQUAL(q.size(), 2u);
  CAF_CHECK_EQUAL(q.take_due(t0 + 5s), (std::vector<std::uint64_t>{3, 9}));
  CAF_CHECK(q.empty());
}

// A runtime connection keeps its calls by number and finds them by the id's
// text in a frame: only the exact text it wrote finds one.
CAF_TEST(quoted decimals are ids and nothing else is) {
  CAF_CHECK(quoted_decimal(R"("7")") == std::optional<std::uint64_t>{7});
  CAF_CHECK(quoted_decimal(R"("18446744073709551615")")
            == std::optional<std::uint64_t>{18446744073709551615ull});
  for (auto text : {R"(7)", R"("07")", R"("")", R"("7 ")", R"(" 7")", R"("+7")", R"("-7")",
                    R"("7a")", R"("18446744073709551616")", R"('7')", R"("7)", R"(7")"})
    CAF_CHECK(!quoted_decimal(text));
}

CAF_TEST(a call table keyed by number is searched by the id text) {
  basic_call_table<caf::actor, std::uint64_t> calls;
  CAF_CHECK(!calls.add(12, caf::actor{}, std::nullopt));
  CAF_CHECK(calls.add(13, caf::actor{}, t0 + 1s));
  CAF_CHECK_EQUAL(calls.size(), 2u);
  CAF_CHECK_EQUAL(calls.deadlines(), 1u);
  CAF_CHECK(calls.find(R"("12")") != nullptr);
  CAF_CHECK(calls.find("12") == nullptr);
  CAF_CHECK(calls.find(R"("012")") == nullptr);
  calls.take(R"("13")");
  CAF_CHECK_EQUAL(calls.size(), 1u);
  CAF_CHECK_EQUAL(calls.deadlines(), 0u);
  CAF_CHECK(calls.find(R"("13")") == nullptr);
  CAF_CHECK_EQUAL(calls.take_all().size(), 1u);
}
