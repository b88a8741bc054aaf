#define CAF_SUITE services

#include "services_fixture.hpp"

// Services and replicas (docs/API.md): runtimes registered under one name
// share its calls, the least loaded of two random picks first; with a cap on
// calls in flight the service's queue holds what finds every replica full,
// refuses what it cannot hold, and gives up at a call's deadline.

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

std::uint32_t counter_draw() {
  static std::uint32_t n = 0;
  return n++ * 2654435761u;
}

} // namespace

CAF_TEST(the less loaded of two picks wins and the most loaded never does) {
  // Two replicas: the less loaded one, whatever the draws.
  for (int i = 0; i < 20; ++i)
    CAF_CHECK_EQUAL(pick_replica({3, 1}, counter_draw), 1u);
  // Three: two distinct picks never both land on the one most loaded.
  std::array<int, 3> got{};
  for (int i = 0; i < 300; ++i)
    ++got[pick_replica({2, 9, 2}, counter_draw)];
  CAF_CHECK_EQUAL(got[1], 0);
  CAF_CHECK_GREATER(got[0], 0);
  CAF_CHECK_GREATER(got[2], 0);
  CAF_CHECK_EQUAL(pick_replica({7}, counter_draw), 0u);
}

CAF_TEST(a replica that keeps failing is ejected and comes back on a trial call) {
  replica_load l;
  auto t0 = replica_load::clock::now();
  for (int i = 1; i < replica_load::failures_to_eject; ++i)
    CAF_CHECK_EQUAL(l.record(true, t0).count(), 0);
  CAF_CHECK(!l.ejected(t0));
  CAF_CHECK_EQUAL(l.record(true, t0).count(), 10);
  CAF_CHECK(l.ejected(t0 + 9s));
  CAF_CHECK(!l.ejected(t0 + 11s));
  // The trial call after the ejection fails: out again, for longer.
  CAF_CHECK_EQUAL(l.record(true, t0 + 11s).count(), 20);
  CAF_CHECK(l.ejected(t0 + 30s));
  // A success clears the record: five more failures before the next one.
  l.record(false, t0 + 40s);
  CAF_CHECK_EQUAL(l.record(true, t0 + 41s).count(), 0);
  CAF_CHECK(!l.ejected(t0 + 41s));
}

CAF_TEST_FIXTURE_SCOPE(services_tests, services_fixture)

CAF_TEST(an ejected replica gets no balanced calls while others serve) {
  add_replica("svc-1", "svc");
  add_replica("svc-2", "svc");
  add_replica("svc-3", "svc");
  auto& table = *board->current();
  auto now = replica_load::clock::now();
  for (int i = 0; i < replica_load::failures_to_eject; ++i)
    table.entries[0].load->record(true, now);
  std::map<std::string, int> got;
  for (int i = 0; i < 90; ++i) {
    auto x = route_of(run("svc"));
    ++got[x.runtime_id];
    x.load->release();
  }
  CAF_CHECK_EQUAL(got["svc-1"], 0);
  CAF_CHECK_GREATER(got["svc-2"], 0);
  CAF_CHECK_GREATER(got["svc-3"], 0);
  CAF_CHECK(contains(services(), R"({"id":"svc-1","inFlight":0,"state":"ejected"})"));
  // Pinned calls still reach it; with every replica ejected, all serve.
  auto pinned = route_of(run({}, "svc-1"));
  CAF_CHECK_EQUAL(pinned.runtime_id, "svc-1");
  pinned.load->release();
  for (int r = 1; r < 3; ++r)
    for (int i = 0; i < replica_load::failures_to_eject; ++i)
      table.entries[r].load->record(true, now);
  got.clear();
  for (int i = 0; i < 90; ++i) {
    auto x = route_of(run("svc"));
    ++got[x.runtime_id];
    x.load->release();
  }
  CAF_CHECK_GREATER(got["svc-1"], 0);
  finish();
}

CAF_TEST(replicas of a name share its calls and runtimeId still pins) {
  auto a = add_replica("svc-1", "svc");
  auto b = add_replica("svc-2", "svc");
  auto c = add_replica("svc-3", "svc");
  auto other = add_replica("other", "other");
  // Neither field: the most recently registered name ("other") takes it.
  auto r = route_of(run());
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == caf::actor_cast<caf::actor>(other));
  r.load->release();
  // runtimeName picks the service; equal loads spread the calls.
  std::map<std::string, int> got;
  for (int i = 0; i < 300; ++i) {
    auto x = route_of(run("svc"));
    CAF_REQUIRE(x.how == call_route::kind::runtime);
    CAF_REQUIRE(x.load);
    ++got[x.runtime_id];
    x.load->release(); // the call ended
  }
  for (auto id : {"svc-1", "svc-2", "svc-3"}) {
    CAF_MESSAGE(id << ": " << got[id] << " of 300");
    CAF_CHECK_GREATER_OR_EQUAL(got[id], 60);
  }
  // A replica holding calls receives fewer: with 5 in flight on svc-1 and
  // none elsewhere, it is picked only when both draws land on it (never).
  std::vector<replica_load_ptr> held;
  for (int i = 0; i < 5; ++i) {
    auto x = route_of(run({}, "svc-1"));
    CAF_REQUIRE_EQUAL(x.runtime_id, "svc-1");
    held.push_back(x.load);
  }
  got.clear();
  for (int i = 0; i < 60; ++i) {
    auto x = route_of(run("svc"));
    ++got[x.runtime_id];
    x.load->release();
  }
  CAF_CHECK_EQUAL(got["svc-1"], 0);
  for (auto& l : held)
    l->release();
  // The listing shows each service and its replicas.
  auto v = parse_json(services());
  CAF_REQUIRE(v.is_array());
  CAF_REQUIRE_EQUAL(v.as_array().size(), 2u);
  CAF_CHECK_EQUAL(boost::json::serialize(v.as_array()[0].at("name")), R"("svc")");
  CAF_CHECK_EQUAL(v.as_array()[0].at("replicas").as_array().size(), 3u);
  CAF_CHECK_EQUAL(boost::json::serialize(v.as_array()[0].at("default")), "false");
  CAF_CHECK_EQUAL(boost::json::serialize(v.as_array()[1].at("default")), "true");
  // An unknown name is a clear NOT_FOUND.
  r = route_of(run("nope"));
  CAF_CHECK(r.how == call_route::kind::failed);
  CAF_CHECK_EQUAL(member(r.error.object, {"data", "code"}), "5");
  CAF_CHECK(contains(member_str(r.error.object, {"message"}), "No runtime named nope"));
  (void) a;
  (void) b;
  (void) c;
  finish();
}

CAF_TEST(a call counts on its replica until the runtime answers) {
  auto a = add_replica("svc-1", "svc");
  auto r = route_of(run("svc"));
  CAF_REQUIRE(r.load);
  CAF_CHECK_EQUAL(r.load->current(), 1);
  auto req = run("svc");
  req.counted = true;
  caf::send_as(caller, a, call_atom_v, std::move(req), caf::actor_cast<caller_actor>(caller));
  sched.run();
  CAF_CHECK_EQUAL(r.load->current(), 1);
  // A call that reaches the connection uncounted (from another node) counts there.
  caf::send_as(caller, a, call_atom_v, run(), caf::actor_cast<caller_actor>(caller));
  sched.run();
  CAF_CHECK_EQUAL(r.load->current(), 2);
  send_frame(a, R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  CAF_CHECK_EQUAL(r.load->current(), 1);
  send_frame(a, R"({"jsonrpc":"2.0","result":{"result":2},"id":"2"})");
  CAF_CHECK_EQUAL(r.load->current(), 0);
  finish();
}

CAF_TEST(a full service queues then refuses and a queued call gets the next free slot) {
  service_limits limits;
  limits.max_in_flight_per_runtime = 1;
  limits.max_queued_per_service = 1;
  caf::anon_send(dir, limits_atom_v, limits);
  sched.run();
  auto a = add_replica("svc-1", "svc");
  CAF_CHECK_EQUAL(live(actor_kind::service_queue), live_at_start[static_cast<int>(actor_kind::service_queue)] + 1);
  // The first call takes the only slot.
  auto first = route_of(run("svc"));
  CAF_REQUIRE(first.load);
  CAF_CHECK(caf::actor_cast<caf::actor>(first.conn) == caf::actor_cast<caf::actor>(a));
  auto req = run("svc");
  req.counted = true;
  caf::send_as(caller, a, call_atom_v, std::move(req), caf::actor_cast<caller_actor>(caller));
  sched.run();
  CAF_CHECK_EQUAL(transports[0]->size(), 1u);
  // The second finds it full and waits in the queue: no answer yet.
  auto second = route_of(run("svc"));
  CAF_REQUIRE(second.how == call_route::kind::runtime);
  CAF_CHECK(!second.load);
  CAF_CHECK(caf::actor_cast<caf::actor>(second.conn) != caf::actor_cast<caf::actor>(a));
  auto queue = second.conn;
  auto waiting = self->request(queue, caf::infinite, call_atom_v, run("svc"),
                               caf::actor_cast<caller_actor>(caller));
  sched.run();
  CAF_CHECK(self->mailbox().empty());
  CAF_CHECK(contains(services(), R"("queued":1)"));
  // The third is refused at once: RESOURCE_EXHAUSTED, which HTTP sends as 429.
  call_error refusal;
  auto third = self->request(queue, caf::infinite, call_atom_v, run("svc"),
                             caf::actor_cast<caller_actor>(caller));
  sched.run();
  third.receive([&](call_handle&) { CAF_FAIL("a third call was taken"); },
                [&](caf::error& e) {
                  CAF_CHECK(e.category() == caf::atom("refused"));
                  refusal = e.context().get_as<call_error>(0);
                });
  CAF_CHECK_EQUAL(member(refusal.object, {"data", "code"}), "8");
  CAF_CHECK_EQUAL(refusal.status, 8);
  CAF_CHECK_EQUAL(refusal.http, 429);
  CAF_CHECK(contains(member_str(refusal.object, {"message"}), "Service svc is busy"));
  // The runtime answers the first call: the queued one goes out on its slot.
  send_frame(a, R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  CAF_CHECK_EQUAL(transports[0]->size(), 2u);
  CAF_CHECK_EQUAL(member_str(transports[0]->last(), {"method"}), "runAction");
  CAF_CHECK_EQUAL(member_str(transports[0]->last(), {"id"}), "2");
  bool taken = false;
  waiting.receive([&](call_handle& c) { taken = static_cast<bool>(c); },
                  [&](caf::error& e) { CAF_FAIL("the queued call failed: " << sys.render(e)); });
  CAF_CHECK(taken);
  CAF_CHECK(contains(services(), R"("queued":0)"));
  CAF_CHECK(contains(services(), R"("inFlight":1)"));
  finish();
}

CAF_TEST(a queued call gives up at its own deadline) {
  service_limits limits;
  limits.max_in_flight_per_runtime = 1;
  caf::anon_send(dir, limits_atom_v, limits);
  sched.run();
  auto a = add_replica("svc-1", "svc");
  auto first = route_of(run("svc"));
  CAF_REQUIRE(first.load);
  auto waiting = route_of(run("svc"));
  CAF_REQUIRE(!waiting.load);
  std::string refusal;
  auto hdl = self->request(waiting.conn, caf::infinite, call_atom_v, run("svc", {}, 200ms),
                           caf::actor_cast<caller_actor>(caller));
  sched.run();
  CAF_CHECK(self->mailbox().empty());
  sched.advance_time(250ms);
  sched.run();
  hdl.receive([&](call_handle&) { CAF_FAIL("the call was taken"); },
              [&](caf::error& e) { refusal = e.context().get_as<call_error>(0).object; });
  CAF_CHECK_EQUAL(member(refusal, {"data", "code"}), "4");
  CAF_CHECK(contains(member_str(refusal, {"message"}), "waited"));
  first.load->release();
  (void) a;
  finish();
}

CAF_TEST(a queued call with a shorter deadline than the one before it gives up on time) {
  service_limits limits;
  limits.max_in_flight_per_runtime = 1;
  caf::anon_send(dir, limits_atom_v, limits);
  sched.run();
  auto a = add_replica("svc-1", "svc");
  auto first = route_of(run("svc"));
  CAF_REQUIRE(first.load);
  auto queue = route_of(run("svc")).conn;
  auto as_caller = caf::actor_cast<caller_actor>(caller);
  auto patient = self->request(queue, caf::infinite, call_atom_v, run("svc", {}, 10s), as_caller);
  auto hasty = self->request(queue, caf::infinite, call_atom_v, run("svc", {}, 200ms), as_caller);
  sched.run();
  // The wake-up armed for the first (10 s) is armed again for the second.
  sched.advance_time(250ms);
  sched.run();
  std::string refusal;
  hasty.receive([&](call_handle&) { CAF_FAIL("the call was taken"); },
                [&](caf::error& e) { refusal = e.context().get_as<call_error>(0).object; });
  CAF_CHECK_EQUAL(member(refusal, {"data", "code"}), "4");
  CAF_CHECK(contains(services(), R"("queued":1)"));
  sched.advance_time(10s);
  sched.run();
  patient.receive([&](call_handle&) { CAF_FAIL("the call was taken"); },
                  [&](caf::error& e) { refusal = e.context().get_as<call_error>(0).object; });
  CAF_CHECK_EQUAL(member(refusal, {"data", "code"}), "4");
  first.load->release();
  (void) a;
  finish();
}

CAF_TEST(a cancel by trace id alone is asked of every replica and the holder answers) {
  auto a = add_replica("svc-1", "svc");
  auto b = add_replica("svc-2", "svc");
  auto t = make_fake_transport("127.0.0.1:42000");
  auto session = spawn_session(t, dir);
  send_frame(session, R"({"jsonrpc":"2.0","id":"c1","method":"cancelAction","params":{"traceId":"t1"}})");
  for (auto& rt : transports) {
    CAF_REQUIRE_EQUAL(rt->size(), 1u);
    CAF_CHECK_EQUAL(member_str(rt->last(), {"method"}), "cancelAction");
    CAF_CHECK_EQUAL(member_str(rt->last(), {"params", "traceId"}), "t1");
  }
  // svc-1 does not hold the run; svc-2 does.
  send_frame(a, R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Action not found or already completed"},"id":"1"})");
  CAF_CHECK_EQUAL(t->size(), 0u);
  send_frame(b, R"({"jsonrpc":"2.0","result":{"message":"Action cancelled"},"id":"1"})");
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->last(), {"id"}), R"("c1")");
  CAF_CHECK_EQUAL(member_str(t->last(), {"result", "message"}), "Action cancelled");
  // None holds it: the last refusal is the answer.
  send_frame(session, R"({"jsonrpc":"2.0","id":"c2","method":"cancelAction","params":{"traceId":"t2"}})");
  send_frame(a, R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Action not found or already completed"},"id":"2"})");
  send_frame(b, R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Action not found or already completed"},"id":"2"})");
  CAF_REQUIRE_EQUAL(t->size(), 2u);
  CAF_CHECK_EQUAL(member(t->last(), {"id"}), R"("c2")");
  CAF_CHECK(contains(t->last(), "not found"));
  stop(session, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(a call whose replica ended before taking it goes to another replica) {
  auto a = add_replica("svc-1", "svc");
  add_replica("svc-2", "svc");
  // The routes a door read just before svc-1's connection ended: svc-1 is
  // still listed, and it is the balanced pick (svc-2 holds a call).
  auto stale = board->current();
  stop(a, caf::exit_reason::user_shutdown);
  board->publish(*stale);
  auto& b_entry = stale->entries[1];
  CAF_REQUIRE_EQUAL(b_entry.runtime_id, "svc-2");
  CAF_REQUIRE(b_entry.load->try_reserve(0));
  auto t = make_fake_transport("127.0.0.1:42000");
  auto session = spawn_session(t, dir);
  send_frame(session, R"({"jsonrpc":"2.0","id":"r1","method":"runAction","params":{"key":"/flow/x","runtimeName":"svc"}})");
  // The runtime never saw it at svc-1: svc-2 runs it, and its answer is the call's.
  CAF_CHECK_EQUAL(transports[0]->size(), 0u);
  CAF_REQUIRE_EQUAL(transports[1]->size(), 1u);
  CAF_CHECK_EQUAL(member_str(transports[1]->last(), {"method"}), "runAction");
  send_frame(conns[1], R"({"jsonrpc":"2.0","result":{"result":7},"id":"1"})");
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->last(), {"result", "result"}), "7");
  b_entry.load->release();
  CAF_CHECK_EQUAL(b_entry.load->current(), 0);
  CAF_CHECK_EQUAL(stale->entries[0].load->current(), 0);
  stop(session, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(an action its runtime declares idempotent runs again on another replica after UNAVAILABLE) {
  const std::string actions =
    R"({"actions":{"/flow/x":{"key":"/flow/x","name":"x","metadata":{"retry":"idempotent"}},)"
    R"("/flow/y":{"key":"/flow/y","name":"y","metadata":{"retry":"never"}},"/flow/z":{"key":"/flow/z"}}})";
  add_replica("svc-1", "svc", actions);
  add_replica("svc-2", "svc", actions);
  auto routes = board->current();
  CAF_REQUIRE_EQUAL(routes->idempotent_by_service.count("svc"), 1u);
  CAF_CHECK_EQUAL(routes->idempotent_by_service.at("svc").size(), 2u); // one per replica
  CAF_CHECK_EQUAL(routes->idempotent_by_service.at("svc")[0], "/flow/x");
  auto t = make_fake_transport("127.0.0.1:42000");
  auto session = spawn_session(t, dir);
  // The replica that took the run loses its link before any chunk: /flow/x
  // runs once more on the other one; /flow/y (not declared) fails.
  auto run_and_drop = [&](const std::string& key, const std::string& id) -> std::size_t {
    send_frame(session, R"({"jsonrpc":"2.0","id":")" + id
                          + R"(","method":"runAction","params":{"key":")" + key + R"("}})");
    for (std::size_t i = 0; i < transports.size(); ++i)
      if (transports[i]->size() == 1) {
        transports[i]->clear();
        caf::anon_send(conns[i], closed_atom_v, std::string{"gone"});
        sched.run();
        return i;
      }
    CAF_FAIL("no replica got the run");
    return 0;
  };
  auto first = run_and_drop("/flow/x", "r1");
  auto other = 1 - first;
  CAF_REQUIRE_EQUAL(transports[other]->size(), 1u);
  CAF_CHECK_EQUAL(member_str(transports[other]->last(), {"params", "key"}), "/flow/x");
  CAF_CHECK_EQUAL(t->size(), 0u);
  send_frame(conns[other], R"({"jsonrpc":"2.0","result":{"result":1},"id":)"
                             + member(transports[other]->last(), {"id"}) + "}");
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member(t->last(), {"result", "result"}), "1");
  transports[other]->clear();
  // One replica is left: /flow/y on it, dropped, fails UNAVAILABLE.
  run_and_drop("/flow/y", "r2");
  CAF_REQUIRE_EQUAL(t->size(), 2u);
  CAF_CHECK_EQUAL(member(t->last(), {"error", "data", "code"}), "14");
  stop(session, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(replicas at other nodes are balanced on the figures their node reports) {
  // Two replicas of svc, at nodes b and c; none here.
  auto b = caf::actor_cast<connection_actor>(spawn_probe());
  auto c = caf::actor_cast<connection_actor>(spawn_probe());
  caf::anon_send(dir, remote_up_atom_v, std::string{"b"}, std::string{"svc-b"},
                 std::string{R"({"id":"svc-b","pid":1,"name":"svc"})"}, b);
  caf::anon_send(dir, remote_up_atom_v, std::string{"c"}, std::string{"svc-c"},
                 std::string{R"({"id":"svc-c","pid":2,"name":"svc"})"}, c);
  sched.run();
  auto picks = [&](int n) {
    std::map<std::string, int> got;
    for (int i = 0; i < n; ++i) {
      auto r = route_of(run("svc"));
      CAF_REQUIRE(r.how == call_route::kind::runtime);
      ++got[r.runtime_id];
      r.load->release(); // ended (the gateway releases it)
    }
    return got;
  };
  // c's node reports 6 calls in flight there (other nodes' callers): b takes every call.
  caf::anon_send(dir, remote_load_atom_v, std::string{"c"}, std::vector<std::string>{"svc-c"},
                 std::vector<std::int32_t>{6});
  sched.run();
  auto got = picks(40);
  CAF_CHECK_EQUAL(got["svc-b"], 40);
  // Then b is the busy one. A report names only its own node's runtimes.
  caf::anon_send(dir, remote_load_atom_v, std::string{"b"}, std::vector<std::string>{"svc-b"},
                 std::vector<std::int32_t>{9});
  caf::anon_send(dir, remote_load_atom_v, std::string{"b"}, std::vector<std::string>{"svc-c"},
                 std::vector<std::int32_t>{100});
  caf::anon_send(dir, remote_load_atom_v, std::string{"c"}, std::vector<std::string>{"svc-c"},
                 std::vector<std::int32_t>{0});
  sched.run();
  got = picks(40);
  CAF_CHECK_EQUAL(got["svc-c"], 40);
  caf::anon_send(dir, node_lost_atom_v, std::string{"b"});
  caf::anon_send(dir, node_lost_atom_v, std::string{"c"});
  sched.run();
  stop(caf::actor_cast<caf::actor>(b));
  stop(caf::actor_cast<caf::actor>(c));
  finish();
}

CAF_TEST(between nodes an id goes to the node that announced it first) {
  auto b = caf::actor_cast<connection_actor>(spawn_dummy());
  auto d = caf::actor_cast<connection_actor>(spawn_dummy());
  caf::anon_send(dir, remote_up_atom_v, std::string{"b"}, std::string{"onB"},
                 std::string{R"({"id":"onB","pid":1})"}, b);
  sched.run();
  // Another node's runtime claims the same id later: the calls stay with b's.
  caf::anon_send(dir, remote_up_atom_v, std::string{"d"}, std::string{"onB"},
                 std::string{R"({"id":"onB","pid":2})"}, d);
  sched.run();
  for (int i = 0; i < 3; ++i)
    CAF_CHECK_EQUAL(route_of(run({}, "onB")).node, "b");
  CAF_CHECK_EQUAL(route_of(run({}, "d/onB")).node, "d");
  // When b's leaves, the id is d's.
  caf::anon_send(dir, remote_down_atom_v, std::string{"b"}, std::string{"onB"});
  sched.run();
  CAF_CHECK_EQUAL(route_of(run({}, "onB")).node, "d");
  caf::anon_send(dir, node_lost_atom_v, std::string{"d"});
  sched.run();
  stop(caf::actor_cast<caf::actor>(b));
  stop(caf::actor_cast<caf::actor>(d));
  finish();
}

CAF_TEST(host yaml replicas belong to their service whatever name they register) {
  service_limits limits;
  limits.service_of_id["orders-1"] = "orders";
  limits.service_of_id["orders-2"] = "orders";
  caf::anon_send(dir, limits_atom_v, limits);
  sched.run();
  add_replica("orders-1", "12345");
  add_replica("orders-2", "12346");
  auto v = parse_json(services());
  CAF_REQUIRE(v.is_array());
  CAF_REQUIRE_EQUAL(v.as_array().size(), 1u);
  CAF_CHECK_EQUAL(boost::json::serialize(v.as_array()[0].at("name")), R"("orders")");
  CAF_CHECK_EQUAL(v.as_array()[0].at("replicas").as_array().size(), 2u);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
