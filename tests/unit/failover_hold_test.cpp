#define CAF_SUITE failover_hold

#include "services_fixture.hpp"

#include "actors/dispatch/failover_hold.hpp"
#include "obs/metrics.hpp"

// The cluster failover hold (docs/CLUSTER.md): calls for a runtime of a lost
// node wait for it to register again, bounded, each with its deadline.

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(failover_hold_tests, services_fixture)

CAF_TEST(calls for a runtime of a lost node wait in the failover hold and go on when it is back) {
  // A directory that marks a lost node's runtimes as moving for an hour.
  stop(dir);
  dir = sys.spawn(runtime_directory, board, std::chrono::milliseconds{3600000});
  sched.run();
  failover_hold_limits limits;
  limits.max_calls = 2;
  auto hold = sys.spawn(failover_hold, door(dir), limits);
  sched.run();
  caf::anon_send(dir, subscribe_atom_v, caf::actor_cast<caf::actor>(hold));
  auto at_b = caf::actor_cast<connection_actor>(spawn_dummy());
  caf::anon_send(dir, remote_up_atom_v, std::string{"b"}, std::string{"mover"},
                 std::string{R"({"id":"mover","pid":1})"}, at_b);
  sched.run();
  CAF_CHECK(route_of(run({}, "mover")).how == call_route::kind::runtime);
  caf::anon_send(dir, node_lost_atom_v, std::string{"b"});
  sched.run();
  // Not listed, but moving (by id and by its service); others fail as before.
  CAF_CHECK(route_of(run({}, "mover")).how == call_route::kind::hold);
  CAF_CHECK(route_of(run("mover")).how == call_route::kind::hold);
  CAF_CHECK(route_of(run({}, "never-seen")).how == call_route::kind::failed);
  auto as_caller = caf::actor_cast<caller_actor>(caller);
  auto refusal_of = [&](auto& hdl) {
    std::string refusal;
    hdl.receive([&](call_handle&) { CAF_FAIL("the call was taken"); },
                [&](caf::error& e) { refusal = e.context().get_as<call_error>(0).object; });
    return refusal;
  };
  // Two calls wait; a third finds the hold full (UNAVAILABLE at once).
  auto first = self->request(hold, caf::infinite, call_atom_v, run({}, "mover"), as_caller);
  auto second = self->request(hold, caf::infinite, call_atom_v, run({}, "mover", 200ms),
                              as_caller);
  sched.run();
  CAF_CHECK(self->mailbox().empty());
  auto third = self->request(hold, caf::infinite, call_atom_v, run({}, "mover"), as_caller);
  sched.run();
  auto full = refusal_of(third);
  CAF_CHECK_EQUAL(member(full, {"data", "code"}), "14");
  CAF_CHECK(contains(member_str(full, {"message"}), "failover hold is full"));
  // The second's own deadline passes while it waits.
  sched.advance_time(250ms);
  sched.run();
  auto late = refusal_of(second);
  CAF_CHECK_EQUAL(member(late, {"data", "code"}), "4");
  // The runtime registers again (here): the first goes to it, right
  // behind the answer to its register.
  auto t = make_fake_transport("127.0.0.1:41999");
  auto back = spawn_connection(t, dir, default_connection_options());
  transports.push_back(t);
  conns.push_back(back);
  send_frame(back, register_frame("mover", R"("1")", "4242", "mover"));
  CAF_REQUIRE_EQUAL(t->size(), 2u);
  CAF_CHECK_EQUAL(member(t->frame(0), {"result"}), "{}");
  CAF_CHECK_EQUAL(member_str(t->frame(1), {"method"}), "runAction");
  bool taken = false;
  first.receive([&](call_handle& c) { taken = static_cast<bool>(c); },
                [&](caf::error& e) { CAF_FAIL("the held call failed: " << sys.render(e)); });
  CAF_CHECK(taken);
  CAF_CHECK_EQUAL(obs::global().failover_held.load(), 0);
  stop(caf::actor_cast<caf::actor>(hold));
  stop(caf::actor_cast<caf::actor>(at_b));
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
