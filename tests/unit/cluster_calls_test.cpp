#define CAF_SUITE cluster_calls

#include "test_support.hpp"

#include "actors/cluster/gateway.hpp"
#include "actors/cluster/gateway_state.hpp"
#include "obs/metrics.hpp"

#include <set>

// A front door's calls for another node's runtime, as the entry node's
// gateway runs them (actors/cluster/gateway.cpp): no actor per call at the
// entry node, the gateway as the caller's handle (input, abort) by call id,
// one monitor per caller however many calls it has, the replica load the
// door counted released when the call ends. Both nodes' actors live in one
// deterministic actor system, as in cluster_gateway_test.cpp.

using namespace actor_host;
using namespace actor_host::testing;

namespace {

/// A front door's caller stand-in: starts a call on the call path for the
/// caller it is given, and keeps what the hand-off answered.
struct door_state {
  std::vector<call_handle> taken;
  std::vector<call_end> refused;
  static inline const char* name = "test_door";
};

caf::behavior door_actor(caf::stateful_actor<door_state>* self, front_door door) {
  return {
    [self, door](call_request& req, caller_actor& caller) {
      start_call(
        self, door, std::move(req), std::move(caller),
        [self](call_handle c) { self->state.taken.push_back(std::move(c)); },
        [self](call_end e) { self->state.refused.push_back(std::move(e)); });
    },
  };
}

using gateway_state_t = gateway_actor::stateful_base<gateway_detail::gateway_state>;

/// Node b owns runtime rt-b (a real connection over a fake socket); node a's
/// routes list it, counted on `load`, and node a's gateway knows b's.
struct cross_node_fixture : actor_fixture {
  route_board_ptr owner_routes = std::make_shared<route_board>();
  directory_actor owner_dir;
  caf::actor owner_gw;
  caf::actor entry_gw;
  fake_transport_ptr rt = make_fake_transport();
  connection_actor conn;
  replica_load_ptr load = std::make_shared<replica_load>();
  directory_actor entry_dir;
  caf::actor door_hdl; // the door_actor

  cross_node_fixture() {
    owner_dir = sys.spawn(runtime_directory, owner_routes, std::chrono::milliseconds{0});
    owner_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
    sched.run();
    conn = spawn_connection(rt, owner_dir);
    send_frame(conn, register_frame("rt-b"));
    rt->clear();
    entry_gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
    caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
    route_table t;
    t.self_node = "a";
    t.gateway = entry_gw;
    t.remote = {{"rt-b", caf::actor_cast<call_target_actor>(conn), "b", "rt-b", load, 0, {}}};
    board->publish(t);
    entry_dir = spawn_directory();
    door_hdl = sys.spawn(door_actor, door(entry_dir));
    sched.run();
  }

  door_state& door_st() {
    return deref<caf::stateful_actor<door_state>>(door_hdl).state;
  }

  gateway_detail::gateway_state& entry_st() {
    return deref<gateway_state_t>(entry_gw).state;
  }

  /// A bidi run of rt-b for `caller`; its wire id at the owner's runtime.
  std::string start(const caf::actor& caller, std::uint64_t tag) {
    auto req = make_call(tag, "runAction", R"({"key":"/flow/bidi","streamInput":true})");
    caf::anon_send(door_hdl, std::move(req), caf::actor_cast<caller_actor>(caller));
    sched.run();
    auto wire_id = member(rt->last(), {"id"});
    send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)"
                       + wire_id + R"(,"state":{"traceId":"t-)" + std::to_string(tag) + R"("}}})");
    return wire_id;
  }

  void answer(const std::string& wire_id) {
    send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":1},"id":)" + wire_id + "}");
  }

  std::size_t watched(const caf::actor& caller) {
    return entry_st().callers.calls_of(caller.address());
  }

  void finish() {
    for (auto& x : {door_hdl, entry_gw, owner_gw})
      stop(x);
    stop(conn);
    stop(entry_dir);
    stop(owner_dir);
    CAF_CHECK_EQUAL(obs::global().remote_calls_outbound.load(), 0);
    CAF_CHECK_EQUAL(obs::global().remote_calls_inbound.load(), 0);
    check_no_leaks();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_calls_tests, cross_node_fixture)

CAF_TEST(cross node calls spawn no actor at the entry node and reach the owner s run by call id) {
  auto a = spawn_probe();
  auto b = spawn_probe();
  auto running = sys.registry().running();
  auto pending = live_delta(actor_kind::pending_request);
  std::vector<std::string> wire;
  for (std::uint64_t tag = 1; tag <= 3; ++tag)
    wire.push_back(start(a, tag));
  wire.push_back(start(b, 4));
  auto& taken = door_st().taken;
  CAF_REQUIRE_EQUAL(taken.size(), 4u);
  CAF_CHECK(door_st().refused.empty());
  // The gateway is every call's handle, each by an id of its own.
  std::set<std::uint64_t> ids;
  for (auto& c : taken) {
    CAF_CHECK(caf::actor_cast<caf::actor>(c.actor) == entry_gw);
    CAF_CHECK(!c.own_actor());
    ids.insert(c.id);
  }
  CAF_CHECK_EQUAL(ids.size(), 4u);
  CAF_CHECK_EQUAL(entry_st().out.at(taken[0].id).target, "rt-b");
  CAF_CHECK_EQUAL(entry_st().out.at(taken[0].id).node, "b");
  // Four calls, four actors more: the owner's pending requests, none here.
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), pending + 4);
  CAF_CHECK_EQUAL(sys.registry().running(), running + 4);
  CAF_CHECK_EQUAL(load->current(), 4);
  // Each caller is watched once, with its number of calls.
  CAF_CHECK_EQUAL(entry_st().callers.size(), 2u);
  CAF_CHECK_EQUAL(watched(a), 3u);
  CAF_CHECK_EQUAL(watched(b), 1u);
  // Bidi input by the call's handle reaches its run, and only that one.
  rt->clear();
  caf::anon_send(taken[1].actor, input_atom_v, taken[1].id, std::string{"7"});
  caf::anon_send(taken[1].actor, end_input_atom_v, taken[1].id);
  sched.run();
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member_str(rt->frame(0), {"method"}), "sendInputStreamChunk");
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "requestId"}), wire[1]);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "chunk"}), "7");
  CAF_CHECK_EQUAL(member_str(rt->frame(1), {"method"}), "endInputStream");
  // One of a's calls ends: a stays watched for its other two; the call is
  // off the replica's load.
  answer(wire[0]);
  CAF_CHECK_EQUAL(render(events(a)),
                  R"(trace 1 t-1 | trace 2 t-2 | trace 3 t-3 | done 1 ok {"result":1})");
  CAF_CHECK_EQUAL(watched(a), 2u);
  CAF_CHECK_EQUAL(load->current(), 3);
  // One is aborted by its handle: cancelled at the owner.
  rt->clear();
  caf::anon_send(taken[1].actor, abort_atom_v, taken[1].id);
  sched.run();
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member_str(rt->last(), {"method"}), "cancelAction");
  CAF_CHECK_EQUAL(member_str(rt->last(), {"params", "traceId"}), "t-2");
  CAF_CHECK_EQUAL(watched(a), 1u);
  CAF_CHECK_EQUAL(load->current(), 2);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), pending + 2);
  // a dies without a word: its last run is abandoned (and cancelled) at the
  // owner; b's goes on.
  rt->clear();
  stop(a);
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member_str(rt->last(), {"params", "traceId"}), "t-3");
  CAF_CHECK_EQUAL(entry_st().callers.size(), 1u);
  CAF_CHECK_EQUAL(watched(b), 1u);
  CAF_CHECK_EQUAL(load->current(), 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), pending + 1);
  // b's call ends: nothing is watched or counted any more.
  answer(wire[3]);
  CAF_CHECK_EQUAL(render(events(b)), R"(trace 4 t-4 | done 4 ok {"result":1})");
  CAF_CHECK(entry_st().callers.empty());
  CAF_CHECK(entry_st().out.empty());
  CAF_CHECK_EQUAL(load->current(), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), pending);
  // Input for a call that ended is dropped.
  rt->clear();
  caf::anon_send(taken[3].actor, input_atom_v, taken[3].id, std::string{"8"});
  sched.run();
  CAF_CHECK_EQUAL(rt->size(), 0u);
  stop(b);
  finish();
}

CAF_TEST(a call without a link and a gateway that ends leave no load and tell the caller) {
  auto a = spawn_probe();
  // Node b's gateway is gone from a's view: the call is taken and ends at
  // once, UNAVAILABLE, off the load the door counted.
  caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, caf::actor{});
  sched.run();
  caf::anon_send(door_hdl, make_call(1, "runAction", R"({"key":"/flow/x"})"),
                 caf::actor_cast<caller_actor>(a));
  sched.run();
  CAF_CHECK_EQUAL(door_st().taken.size(), 1u);
  CAF_CHECK(door_st().refused.empty());
  CAF_REQUIRE_EQUAL(events(a).size(), 1u);
  CAF_CHECK_EQUAL(member(events(a)[0].text, {"data", "code"}), "14");
  CAF_CHECK(contains(events(a)[0].text, "no link to the node"));
  CAF_CHECK_EQUAL(load->current(), 0);
  CAF_CHECK(entry_st().callers.empty());
  CAF_CHECK(entry_st().out.empty());
  events(a).clear();
  // Linked again, a call in flight; then node a shuts down: the gateway
  // fails the call as a closed connection and releases its load.
  caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
  sched.run();
  start(a, 2);
  CAF_REQUIRE_EQUAL(door_st().taken.size(), 2u);
  CAF_CHECK_EQUAL(load->current(), 1);
  stop(entry_gw, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(load->current(), 0);
  CAF_REQUIRE_EQUAL(events(a).size(), 2u);
  CAF_CHECK_EQUAL(render(events(a)).substr(0, 25), "trace 2 t-2 | done 2 fail");
  CAF_CHECK(contains(events(a)[1].text, "Runtime rt-b connection closed"));
  // The owner's gateway abandons the run the ended gateway made.
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  stop(a);
  finish();
}

CAF_TEST(an idempotent run that finds no link to its replica s node runs on another one) {
  // Service svc: rt-z at node z, which this node has no link to, and rt-b,
  // which reports more calls, so rt-z is picked first.
  auto z_conn = spawn_dummy();
  auto z_load = std::make_shared<replica_load>();
  load->reported.store(5);
  route_table t;
  t.self_node = "a";
  t.gateway = entry_gw;
  t.remote = {{"rt-b", caf::actor_cast<call_target_actor>(conn), "b", "svc", load, 0, {}},
              {"rt-z", caf::actor_cast<call_target_actor>(z_conn), "z", "svc", z_load, 0, {}}};
  board->publish(t);
  call_policy policy;
  policy.idempotent_actions = {"/flow/x"};
  auto retrying = sys.spawn(door_actor, door(entry_dir, policy));
  auto a = spawn_probe();
  auto lost = obs::global().remote_calls_lost.load();
  caf::anon_send(retrying, make_call(1, "runAction", R"({"key":"/flow/x"})"),
                 caf::actor_cast<caller_actor>(a));
  sched.run();
  // Ended UNAVAILABLE at z at once, so routed again, past rt-z, to rt-b.
  CAF_CHECK_EQUAL(obs::global().remote_calls_lost.load(), lost + 1);
  CAF_CHECK_EQUAL(z_load->current(), 0);
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member_str(rt->last(), {"method"}), "runAction");
  answer(member(rt->last(), {"id"}));
  CAF_CHECK_EQUAL(render(events(a)), R"(done 1 ok {"result":1})");
  CAF_CHECK_EQUAL(load->current(), 0);
  for (auto& x : {retrying, a, z_conn})
    stop(x);
  finish();
}

CAF_TEST(the bidi index keeps a gateway s call until its opener closes it or dies) {
  auto opener = spawn_dummy();
  call_handle call{caf::actor_cast<call_actor>(entry_gw), 42};
  caf::send_as(opener, entry_dir, bidi_open_atom_v, std::string{"t1"}, call);
  sched.run();
  auto [found, got] = ask<bool, call_handle>(entry_dir, bidi_find_atom_v, std::string{"t1"});
  CAF_CHECK(found);
  CAF_CHECK(got == call);
  // The gateway lives on; the entry goes with the one that opened it.
  stop(opener);
  CAF_CHECK(!std::get<0>(ask<bool, call_handle>(entry_dir, bidi_find_atom_v, std::string{"t1"})));
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
