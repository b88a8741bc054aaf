#define CAF_SUITE connection_budget

#include <caf/test/unit_test.hpp>

#include "net/connection_budget.hpp"
#include "net/detail/flex_stream.hpp"

#include <memory>
#include <optional>

using namespace actor_host::net;

// The budget and the slots alone: what the accept path of every listener
// does with them, without sockets or threads.

CAF_TEST(two listeners take from one budget) {
  auto budget = std::make_shared<connection_budget>(3);
  auto a = std::make_shared<socket_counters>(); // listener A's counters
  auto b = std::make_shared<socket_counters>(); // listener B's counters
  std::optional<connection_slot> a1, a2, b1;
  CAF_REQUIRE(budget->try_acquire());
  a1.emplace(a, budget);
  CAF_REQUIRE(budget->try_acquire());
  a2.emplace(a, budget);
  CAF_REQUIRE(budget->try_acquire());
  b1.emplace(b, budget);
  CAF_CHECK_EQUAL(budget->in_use(), 3u);
  CAF_CHECK_EQUAL(a->connections.load(), 2);
  CAF_CHECK_EQUAL(b->connections.load(), 1);
  // B has one connection, far below any max_connections, yet the process
  // is full: A's connections count too.
  CAF_CHECK(!budget->try_acquire());
  CAF_CHECK_EQUAL(budget->in_use(), 3u); // a refusal takes nothing
  a1.reset(); // a connection of A closes: B may use its slot
  CAF_CHECK_EQUAL(budget->in_use(), 2u);
  CAF_CHECK_EQUAL(a->connections.load(), 1);
  CAF_REQUIRE(budget->try_acquire());
  connection_slot b2{b, budget};
  CAF_CHECK_EQUAL(b->connections.load(), 2);
  CAF_CHECK(!budget->try_acquire());
}

CAF_TEST(a slot gives its budget back once wherever it moved) {
  auto budget = std::make_shared<connection_budget>(1);
  auto c = std::make_shared<socket_counters>();
  {
    CAF_REQUIRE(budget->try_acquire());
    connection_slot first{c, budget};
    // The HTTP session hands its stream (and slot) to the WebSocket session.
    connection_slot moved{std::move(first)};
    connection_slot assigned;
    assigned = std::move(moved);
    CAF_CHECK_EQUAL(budget->in_use(), 1u);
    CAF_CHECK_EQUAL(c->connections.load(), 1);
  }
  CAF_CHECK_EQUAL(budget->in_use(), 0u);
  CAF_CHECK_EQUAL(c->connections.load(), 0);
  // A slot assigned over another releases the one it held.
  CAF_REQUIRE(budget->try_acquire());
  connection_slot s{c, budget};
  s = connection_slot{};
  CAF_CHECK_EQUAL(budget->in_use(), 0u);
  CAF_CHECK_EQUAL(c->connections.load(), 0);
}

CAF_TEST(a lowered limit keeps what is open and refuses the next) {
  connection_budget budget{2};
  CAF_CHECK(budget.try_acquire());
  CAF_CHECK(budget.try_acquire());
  budget.set_limit(1);
  CAF_CHECK(!budget.try_acquire());
  budget.release();
  CAF_CHECK(!budget.try_acquire()); // 1 open, limit 1
  budget.release();
  CAF_CHECK(budget.try_acquire());
  CAF_CHECK_EQUAL(connection_budget{}.limit(), connection_budget::unlimited);
}
