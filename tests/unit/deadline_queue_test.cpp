#define CAF_SUITE deadline_queue

#include "actors/common/call_table.hpp"
#include "actors/common/deadline_queue.hpp"

#include <caf/test/unit_test.hpp>

#include <map>
#include <set>

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
  CAF_CHECK_EQUAL(q.entries(), 4u);
}

CAF_TEST(take_due returns what is due and still held in deadline order) {
  deadline_queue q;
  std::set<std::string> held{"late", "a", "b"};
  auto holds = [&](const std::string& id, deadline_queue::time_point) { return held.count(id) > 0; };
  q.add("late", t0 + 9s);
  q.add("a", t0 + 3s);
  q.add("gone", t0 + 2s);
  q.add("b", t0 + 1s);
  CAF_CHECK(q.take_due(t0 + 500ms, holds).empty());
  auto due = q.take_due(t0 + 3s, holds);
  CAF_REQUIRE_EQUAL(due.size(), 2u);
  CAF_CHECK_EQUAL(due[0], "b");
  CAF_CHECK_EQUAL(due[1], "a");
  CAF_CHECK_EQUAL(q.entries(), 1u);
}

CAF_TEST(a deadline the owner moved comes due once at its new time) {
  deadline_queue q;
  std::map<std::string, deadline_queue::time_point> owner{{"a", t0 + 4s}};
  auto holds = [&](const std::string& id, deadline_queue::time_point at) {
    auto i = owner.find(id);
    return i != owner.end() && i->second == at;
  };
  q.add("a", t0 + 1s);
  q.add("a", t0 + 4s);
  CAF_CHECK(q.take_due(t0 + 2s, holds).empty());
  CAF_CHECK_EQUAL(q.take_due(t0 + 4s, holds).size(), 1u);
}

CAF_TEST(rearm names the next wake-up once and skips stale entries) {
  deadline_queue q;
  std::set<std::string> held{"a", "b", "c"};
  auto holds = [&](const std::string& id, deadline_queue::time_point) { return held.count(id) > 0; };
  q.add("a", t0 + 1s);
  q.add("stale", t0 + 2s);
  q.add("b", t0 + 3s);
  CAF_CHECK(!q.rearm(holds)); // 1 s is armed already
  q.take_due(t0 + 1s, holds); // the 1 s wake-up fired
  auto next = q.rearm(holds);
  CAF_REQUIRE(next);
  CAF_CHECK(*next == t0 + 3s);
  CAF_CHECK(!q.rearm(holds));
  CAF_CHECK(!q.add("c", t0 + 5s)); // later than the armed 3 s
  q.take_due(t0 + 3s, holds);
  auto last = q.rearm(holds);
  CAF_REQUIRE(last);
  CAF_CHECK(*last == t0 + 5s);
  q.take_due(t0 + 5s, holds);
  CAF_CHECK(!q.rearm(holds));
}

CAF_TEST(compact keeps the live deadlines once stale ones outnumber them) {
  basic_deadline_queue<std::uint64_t> q;
  for (std::uint64_t i = 0; i < 1000; ++i)
    q.add(i, t0 + std::chrono::seconds{i});
  auto live = [](auto&& put) {
    for (std::uint64_t i = 990; i < 1000; ++i)
      put(i, t0 + std::chrono::seconds{i});
  };
  q.compact(500, live); // stale ones are not the majority yet: nothing changes
  CAF_CHECK_EQUAL(q.entries(), 1000u);
  q.compact(10, live);
  CAF_CHECK_EQUAL(q.entries(), 10u);
  auto due = q.take_due(t0 + 2000s, [](std::uint64_t, auto) { return true; });
  CAF_REQUIRE_EQUAL(due.size(), 10u);
  CAF_CHECK_EQUAL(due.front(), 990u);
  CAF_CHECK_EQUAL(due.back(), 999u);
}

CAF_TEST(a call table expires only the calls it still has) {
  basic_call_table<caf::actor, std::uint64_t> calls;
  CAF_CHECK(calls.add(1, caf::actor{}, t0 + 1s));
  CAF_CHECK(!calls.add(2, caf::actor{}, t0 + 2s));
  CAF_CHECK(!calls.add(3, caf::actor{}, t0 + 3s));
  CAF_CHECK(!calls.add(3, caf::actor{}, t0 + 3s)); // the same again: still one deadline
  CAF_CHECK_EQUAL(calls.deadlines(), 3u);
  calls.take(R"("2")");
  CAF_CHECK_EQUAL(calls.deadlines(), 2u);
  CAF_CHECK_EQUAL(calls.due(t0 + 5s).size(), 2u);
  CAF_CHECK_EQUAL(calls.deadlines(), 0u);
  CAF_CHECK_EQUAL(calls.size(), 2u); // expired calls stay until they end
  CAF_CHECK(!calls.rearm());
}

CAF_TEST(a call table answered in full keeps few deadline entries) {
  basic_call_table<caf::actor, std::uint64_t> calls;
  for (std::uint64_t i = 1; i <= 1000; ++i)
    calls.add(i, caf::actor{}, t0 + 1s);
  for (std::uint64_t i = 1; i <= 1000; ++i)
    calls.take("\"" + std::to_string(i) + "\"");
  CAF_CHECK(calls.empty());
  CAF_CHECK_EQUAL(calls.deadlines(), 0u);
  CAF_CHECK(calls.due(t0 + 2s).empty());
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
