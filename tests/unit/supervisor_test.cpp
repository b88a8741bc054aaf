#define CAF_SUITE manager_supervisor

#include "test_support.hpp"

#include "actors/manager/manager_supervisor.hpp"

// The supervisor owns the manager's lifecycle: readiness and the drain are
// its behavior (not flags of the process).

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

struct supervisor_fixture : actor_fixture {
  caf::actor sup;
  directory_actor dir = spawn_directory();
  fake_transport_ptr rt = make_fake_transport("127.0.0.1:40001");
  connection_actor conn = spawn_connection(rt, dir);
  caf::actor caller = spawn_probe();

  supervisor_fixture() {
    supervisor_config cfg;
    cfg.drain_timeout = 2s;
    sup = sys.spawn(manager_supervisor, cfg);
    sched.run();
    adopt(sup, dir);
    adopt(sup, conn);
    sched.run();
  }

  std::string readiness() {
    return std::get<0>(ask<std::string>(sup, readiness_atom_v));
  }

  void serve(std::vector<std::string> ids) {
    caf::anon_send(sup, serving_atom_v, dir, std::move(ids), std::vector<caf::actor>{},
                   std::vector<restart_step>{}, std::vector<std::string>{});
    sched.run();
  }

  /// A registered runtime with one run of `caller` in flight.
  void start_run() {
    serve({});
    send_frame(conn, register_frame("rt1"));
    rt->clear();
    caf::send_as(caller, conn, call_atom_v, make_call(1, "runAction", R"({"key":"/flow/x"})"),
                 caf::actor_cast<caller_actor>(caller));
    sched.run();
  }

  void finish() {
    stop(caller);
    ask<caf::ok_atom>(sup, shutdown_atom_v);
    check_no_leaks();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(supervisor_lifecycle_tests, supervisor_fixture)

CAF_TEST(ready once listening and every configured service has registered) {
  CAF_CHECK_EQUAL(readiness(), "not listening");
  serve({"svc"});
  CAF_CHECK_EQUAL(readiness(), "0 of 1 configured services registered");
  send_frame(conn, register_frame("svc"));
  CAF_CHECK_EQUAL(readiness(), "");
  // The service's runtime leaving makes the manager unready again.
  caf::anon_send(conn, closed_atom_v, std::string{"gone"});
  sched.run();
  CAF_CHECK_EQUAL(readiness(), "0 of 1 configured services registered");
  finish();
}

CAF_TEST(the drain waits for calls in flight and then answers) {
  start_run();
  auto hdl = self->request(sup, caf::infinite, stop_atom_v, 15);
  sched.run();
  CAF_CHECK_EQUAL(readiness(), "draining");
  CAF_CHECK(self->mailbox().empty()); // the call still runs
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  CAF_REQUIRE(!self->mailbox().empty());
  hdl.receive([](caf::ok_atom) {}, [&](caf::error& err) { CAF_FAIL(sys.render(err)); });
  CAF_CHECK_EQUAL(events(caller).back().kind, "done");
  CAF_CHECK(events(caller).back().ok);
  finish();
}

CAF_TEST(calls still running when the drain timeout passes are cancelled) {
  start_run();
  auto hdl = self->request(sup, caf::infinite, stop_atom_v, 15);
  sched.run();
  CAF_CHECK(self->mailbox().empty());
  // Past the drain timeout: the call is cancelled and its caller told why.
  advance_time(2s);
  sched.run();
  CAF_REQUIRE(!self->mailbox().empty());
  hdl.receive([](caf::ok_atom) {}, [&](caf::error& err) { CAF_FAIL(sys.render(err)); });
  auto& last = events(caller).back();
  CAF_CHECK_EQUAL(last.kind, "done");
  CAF_CHECK(!last.ok);
  CAF_CHECK_EQUAL(member(last.text, {"data", "code"}), "1"); // CANCELLED
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
