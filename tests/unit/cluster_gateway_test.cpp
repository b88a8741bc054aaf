#define CAF_SUITE cluster_gateway

#include "test_support.hpp"

#include "actors/cluster/cluster_types.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/iii/function_registry.hpp"
#include "obs/metrics.hpp"

// Calls between two cluster nodes through their gateways (actors/cluster/
// gateway.cpp), with both nodes' actors in one deterministic actor system:
// a lost node is the death of its gateway with remote_link_unreachable, as
// CAF kills a lost node's proxies.

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

/// Another node's worker connection, as its proxy takes invocations.
struct owner_state {
  caller_actor caller;
  std::uint64_t tag = 0;
  std::string function_id;
  static inline const char* name = "owner";
};

caf::behavior owner_stub(caf::stateful_actor<owner_state>* self) {
  return {
    [self](execute_atom, caller_actor& caller, std::uint64_t tag, invocation_request& req) {
      self->state.caller = std::move(caller);
      self->state.tag = tag;
      self->state.function_id = req.function_id;
    },
  };
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_gateway_tests, actor_fixture)

CAF_TEST(a call to another node passes both gateways in order and a lost node fails it with UNAVAILABLE) {
  // The owner's side: a real connection with a registered runtime, and its gateway.
  auto owner_routes = std::make_shared<route_board>();
  auto owner_dir = sys.spawn(runtime_directory, owner_routes, std::chrono::milliseconds{0});
  auto owner_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
  sched.run();
  auto rt = make_fake_transport();
  auto conn = spawn_connection(rt, owner_dir);
  send_frame(conn, register_frame("rt-b"));
  rt->clear();
  // The entry node: its gateway knows b's; its routes list rt-b as node b's.
  auto entry_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
  caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
  route_table t;
  t.self_node = "a";
  t.gateway = entry_gw;
  t.remote = {{"rt-b", caf::actor_cast<call_target_actor>(conn), "b", "rt-b", nullptr, 0, {}}};
  board->publish(t);
  auto entry_dir = spawn_directory();
  auto probe = spawn_probe();
  auto caller = caf::actor_cast<caller_actor>(probe);
  auto req = make_call(5, "runAction", R"({"key":"/flow/streamCount","input":3})");
  bool failed = false;
  // Started from an actor context, as every front door's caller does.
  std::vector<caf::actor> starters;
  auto start = [&](call_handle& out) {
    out = {};
    events(probe).clear();
    starters.push_back(sys.spawn([&](caf::event_based_actor* s) -> caf::behavior {
      start_call(s, door(entry_dir), req, caller, [&](call_handle c) { out = std::move(c); },
                 [&](call_end) { failed = true; });
      return {[](int) {}};
    }));
    sched.run();
  };
  auto pending_of_last_frame = [&]() {
    return deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.find(
      member(rt->last(), {"id"}));
  };
  auto& gauges = obs::global();
  call_handle call;
  start(call);
  CAF_CHECK(!failed);
  CAF_REQUIRE(call);
  // The entry gateway is the call's handle: no actor of its own.
  CAF_CHECK(caf::actor_cast<caf::actor>(call.actor) == entry_gw);
  CAF_CHECK_NOT_EQUAL(call.id, 0u);
  CAF_CHECK_EQUAL(gauges.remote_calls_outbound.load(), 1);
  CAF_CHECK_EQUAL(gauges.remote_calls_inbound.load(), 1);
  // The request reached the runtime; its answers come back in order.
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  auto wire_id = member(rt->frame(0), {"id"});
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)" + wire_id
                     + R"(,"state":{"traceId":"t-1"}}})");
  for (int i = 1; i <= 3; ++i)
    send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)" + wire_id
                       + R"(,"chunk":)" + std::to_string(i) + "}}");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":3},"id":)" + wire_id + "}");
  CAF_CHECK_EQUAL(render(events(probe)),
                  R"(trace 5 t-1 | chunk 5 1 | chunk 5 2 | chunk 5 3 | done 5 ok {"result":3})");
  CAF_CHECK_EQUAL(gauges.remote_calls_outbound.load(), 0);
  CAF_CHECK_EQUAL(gauges.remote_calls_inbound.load(), 0);
  // Bidi input, sent before the owner's connection took the call: held by
  // the owner's gateway, then by the pending request until the run starts,
  // and forwarded in order.
  start(call);
  CAF_REQUIRE(call);
  for (auto chunk : {"1", "2"})
    caf::anon_send(call.actor, input_atom_v, call.id, std::string{chunk});
  caf::anon_send(call.actor, end_input_atom_v, call.id);
  sched.run();
  wire_id = member(rt->last(), {"id"});
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)" + wire_id
                     + R"(,"state":{"traceId":"t-2"}}})");
  CAF_REQUIRE_EQUAL(rt->size(), 5u);
  CAF_CHECK_EQUAL(member(rt->frame(2), {"params", "chunk"}), "1");
  CAF_CHECK_EQUAL(member(rt->frame(3), {"params", "chunk"}), "2");
  CAF_CHECK_EQUAL(member_str(rt->frame(4), {"method"}), "endInputStream");
  // The caller dies: the run is abandoned at the owner and nothing stays.
  stop(probe);
  CAF_CHECK(pending_of_last_frame() == nullptr);
  CAF_CHECK_EQUAL(gauges.remote_calls_outbound.load(), 0);
  CAF_CHECK_EQUAL(gauges.remote_calls_inbound.load(), 0);
  probe = spawn_probe();
  caller = caf::actor_cast<caller_actor>(probe);
  // Node b is lost mid-run: CAF kills its proxies (its gateway's among
  // them) with remote_link_unreachable.
  auto lost = gauges.remote_calls_lost.load();
  start(call);
  CAF_REQUIRE(call);
  CAF_REQUIRE(pending_of_last_frame() != nullptr);
  stop(owner_gw, caf::exit_reason::remote_link_unreachable);
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  auto& done = events(probe).back();
  CAF_CHECK_EQUAL(done.kind, "done");
  CAF_CHECK(!done.ok);
  CAF_CHECK_EQUAL(member(done.text, {"data", "code"}), "14");
  CAF_CHECK(contains(member_str(done.text, {"message"}), "on node b is unreachable"));
  CAF_CHECK_EQUAL(gauges.remote_calls_lost.load(), lost + 1);
  // ... and the owner's pending request, whose caller was that gateway, is
  // abandoned with it.
  CAF_CHECK(pending_of_last_frame() == nullptr);
  CAF_CHECK(!failed);
  // New calls for b fail at once while it has no gateway: taken, then
  // ended UNAVAILABLE (an idempotent run is then routed once more).
  start(call);
  CAF_CHECK(call);
  CAF_CHECK(!failed);
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK_EQUAL(member(events(probe)[0].text, {"data", "code"}), "14");
  CAF_CHECK(contains(events(probe)[0].text, "no link to the node"));
  // A gateway that ends without a lost link (b shutting down) may still
  // have answers on the way: its calls get a grace, then fail.
  auto third = [&](call_handle& out) {
    owner_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
    caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
    start(out);
    CAF_REQUIRE(out);
    stop(owner_gw, caf::exit_reason::user_shutdown);
  };
  third(call);
  CAF_CHECK(events(probe).empty());
  // The late answer, as BASP would deliver it after the news.
  caf::send_as(owner_gw, entry_gw, gw_events_atom_v,
               std::vector<gw_event>{{gw_event::done_ok, call.id, R"({"late":true})", {}}});
  sched.run();
  CAF_CHECK_EQUAL(render(events(probe)), R"(done 5 ok {"late":true})");
  sched.trigger_timeouts();
  sched.run();
  CAF_CHECK_EQUAL(events(probe).size(), 1u);
  third(call);
  CAF_CHECK(events(probe).empty());
  sched.advance_time(std::chrono::seconds(2));
  sched.run();
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK(!events(probe)[0].ok);
  CAF_CHECK(contains(events(probe)[0].text, "connection closed before the response"));
  CAF_CHECK_EQUAL(gauges.remote_calls_outbound.load(), 0);
  for (auto& x : starters)
    stop(x);
  for (auto& x : {probe, entry_gw})
    stop(x);
  stop(conn);
  stop(entry_dir);
  stop(owner_dir);
  check_no_leaks();
  CAF_CHECK_EQUAL(gauges.remote_calls_inbound.load(), 0);
}

CAF_TEST(calls another node made are abandoned when its gateway is lost) {
  auto owner_routes = std::make_shared<route_board>();
  auto owner_dir = sys.spawn(runtime_directory, owner_routes, std::chrono::milliseconds{0});
  auto owner_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
  auto entry_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
  auto probe_for_abort = spawn_dummy();
  sched.run();
  auto rt = make_fake_transport();
  auto conn = spawn_connection(rt, owner_dir);
  send_frame(conn, register_frame("rt-b"));
  rt->clear();
  // The entry gateway's call, as it hands it on.
  auto call = [&](gw_request::kind_t kind) {
    return std::vector<gw_request>{{kind, 42, "rt-b", caf::actor_cast<caf::actor>(conn),
                                    make_call(0, "runAction", R"({"key":"/flow/slow","input":1})"),
                                    {}}};
  };
  caf::send_as(entry_gw, owner_gw, gw_requests_atom_v, call(gw_request::call));
  sched.run();
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 1);
  CAF_CHECK_EQUAL(obs::global().remote_calls_inbound.load(), 1);
  // A message naming a call it did not make, from another sender, is ignored.
  caf::anon_send(owner_gw, gw_requests_atom_v, call(gw_request::abort));
  caf::send_as(probe_for_abort, owner_gw, gw_requests_atom_v, call(gw_request::abort));
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 1);
  stop(entry_gw, caf::exit_reason::remote_link_unreachable);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(obs::global().remote_calls_inbound.load(), 0);
  stop(owner_gw);
  stop(probe_for_abort);
  stop(conn);
  stop(owner_dir);
  check_no_leaks();
}

namespace {

/// Node a's function registry knowing node b's function greet (owned by a
/// stub worker connection at b), and the two nodes' gateways:
/// (registry, owner, entry gateway, owner gateway, probe).
template <class Fixture>
auto make_iii_pair(Fixture& f, const std::string& metadata) {
  auto reg = caf::actor_cast<caf::actor>(f.sys.spawn(function_registry));
  auto owner = f.sys.spawn(owner_stub);
  auto entry_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(f.sys));
  auto owner_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(f.sys));
  auto probe = f.spawn_probe();
  f.sched.run();
  caf::anon_send(reg, cluster_atom_v, caf::actor{}, entry_gw, std::string{"a"});
  caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
  iii_node_set fns;
  fns.functions.push_back({"greet", metadata, owner, "wb", "", "", ""});
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"}, fns);
  f.sched.run();
  return std::make_tuple(reg, owner, entry_gw, owner_gw, probe);
}

/// No call in flight either way, the actors stopped, nothing left behind.
template <class Fixture, class... Actors>
void expect_settled(Fixture& f, const Actors&... actors) {
  CAF_CHECK_EQUAL(obs::global().remote_calls_outbound.load(), 0);
  CAF_CHECK_EQUAL(obs::global().remote_calls_inbound.load(), 0);
  (f.stop(actors), ...);
  f.check_no_leaks();
}

} // namespace

CAF_TEST(another node s iii function is invoked through both gateways and a lost node answers invocation_failed) {
  auto [reg, owner, entry_gw, owner_gw, probe] = make_iii_pair(*this, R"({"team":"b"})");
  // The front door learns the node, to hand the call to its gateway.
  auto [conn, id, node] = ask<worker_connection_actor, std::string, std::string>(
    reg, route_iii_atom_v, std::string{"greet"});
  CAF_CHECK(caf::actor_cast<caf::actor>(conn) == owner);
  CAF_CHECK_EQUAL(node, "b");
  // A worker's call: the owner gets it from its gateway, and answers it.
  auto& st = deref<caf::stateful_actor<owner_state>>(owner).state;
  invocation_request req;
  req.function_id = "greet";
  caf::anon_send(reg, invoke_atom_v, caf::actor_cast<caller_actor>(probe), std::uint64_t{7}, req);
  sched.run();
  CAF_CHECK_EQUAL(st.function_id, "greet");
  CAF_REQUIRE(st.caller);
  CAF_CHECK(caf::actor_cast<caf::actor>(st.caller) == owner_gw);
  CAF_CHECK_EQUAL(obs::global().remote_calls_outbound.load(), 1);
  caf::anon_send(st.caller, done_atom_v, st.tag, succeeded(R"({"hi":1})"));
  sched.run();
  CAF_CHECK_EQUAL(render(events(probe)), R"(done 7 ok {"hi":1})");
  CAF_CHECK_EQUAL(obs::global().remote_calls_outbound.load(), 0);
  CAF_CHECK_EQUAL(obs::global().remote_calls_inbound.load(), 0);
  // Again; the node is lost before it answers.
  events(probe).clear();
  caf::anon_send(reg, invoke_atom_v, caf::actor_cast<caller_actor>(probe), std::uint64_t{8}, req);
  sched.run();
  CAF_CHECK_EQUAL(obs::global().remote_calls_outbound.load(), 1);
  stop(owner_gw, caf::exit_reason::remote_link_unreachable);
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK_EQUAL(render(events(probe)).substr(0, 11), "done 8 fail");
  CAF_CHECK_EQUAL(member_str(events(probe)[0].text, {"code"}), "invocation_failed");
  CAF_CHECK(contains(events(probe)[0].text, "greet on node b is unreachable"));
  CAF_CHECK_EQUAL(obs::global().remote_calls_outbound.load(), 0);
  st.caller = nullptr;
  // Its node is lost: the function is gone.
  caf::anon_send(reg, node_lost_atom_v, std::string{"b"});
  sched.run();
  auto err = ask_refusal(reg, route_iii_atom_v, std::string{"greet"});
  CAF_REQUIRE(err.has_value());
  CAF_CHECK(contains(err->message, "not found"));
  CAF_CHECK_EQUAL(err->status, 5); // NOT_FOUND
  stop(probe);
  stop(reg);
  stop(entry_gw);
  stop(owner);
  check_no_leaks();
}

CAF_TEST(an invocation that reaches a worker gone meanwhile is answered and not lost) {
  auto [reg, owner, entry_gw, owner_gw, probe] = make_iii_pair(*this, "");
  // The worker leaves before node b's new function set reaches node a.
  stop(owner);
  invocation_request req;
  req.function_id = "greet";
  caf::anon_send(reg, invoke_atom_v, caf::actor_cast<caller_actor>(probe), std::uint64_t{9}, req);
  sched.run();
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK_EQUAL(render(events(probe)).substr(0, 11), "done 9 fail");
  CAF_CHECK_EQUAL(member_str(events(probe)[0].text, {"code"}), "function_not_found");
  expect_settled(*this, probe, reg, entry_gw, owner_gw);
}

CAF_TEST(a call or invocation naming a connection that ended on its node is answered and not lost) {
  // Over BASP a handle to an actor that has ended arrives null on its own
  // node: the owner gateway gets a call for no connection at all.
  auto [reg, owner, entry_gw, owner_gw, probe] = make_iii_pair(*this, "");
  caf::anon_send(caf::actor_cast<gateway_actor>(entry_gw), call_atom_v, std::string{"b"},
                 std::string{"rt-b"}, caf::actor{}, replica_load_ptr{},
                 make_call(0, "runAction", R"({"key":"/flow/echo","input":1})"),
                 caf::actor_cast<caller_actor>(probe));
  sched.run();
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK_EQUAL(render(events(probe)).substr(0, 11), "done 0 fail");
  CAF_CHECK(contains(events(probe)[0].text, "Runtime rt-b connection closed"));
  events(probe).clear();
  invocation_request req;
  req.function_id = "greet";
  caf::anon_send(entry_gw, execute_atom_v, std::string{"b"}, caf::actor{},
                 caf::actor_cast<caller_actor>(probe), std::uint64_t{11}, req);
  sched.run();
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK_EQUAL(render(events(probe)).substr(0, 12), "done 11 fail");
  CAF_CHECK_EQUAL(member_str(events(probe)[0].text, {"code"}), "function_not_found");
  expect_settled(*this, probe, reg, entry_gw, owner_gw, owner);
}

CAF_TEST_FIXTURE_SCOPE_END()
