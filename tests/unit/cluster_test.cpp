#define CAF_SUITE cluster

#include "test_support.hpp"

#include "actors/cluster/cluster_node.hpp"
#include "actors/cluster/cluster_types.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/manager/function_registry.hpp"
#include "obs/metrics.hpp"

// Cluster membership, the merged directory and the cross-node call relay,
// with every node in one deterministic actor system: nodes are introduced
// directly (as a dial would after CAF's connect) and a lost link is the
// death of the other node's actors, as CAF's proxies die when BASP loses a
// node (exit_reason::remote_link_unreachable).

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

/// One manager's cluster side: its directory (with its own route board) and
/// its cluster node.
struct test_node {
  std::string name;
  route_board_ptr routes = std::make_shared<route_board>();
  cluster_board_ptr view = std::make_shared<cluster_board>();
  directory_actor dir;
  caf::actor gateway;
  caf::actor node;
};

struct cluster_fixture : actor_fixture {
  test_node make_node(const std::string& name) {
    test_node n;
    n.name = name;
    n.dir = sys.spawn(runtime_directory, n.routes);
    n.gateway = spawn_cluster_gateway(sys);
    cluster_options o;
    o.node_name = name;
    o.beat = 1h; // no timers in these tests but the ones they move to
    cluster_links links;
    links.gateway = n.gateway;
    n.node = spawn_cluster_node(sys, o, links, caf::actor_cast<caf::actor>(n.dir), n.view);
    caf::anon_send(n.node, listening_atom_v, name + ".test:7300");
    caf::anon_send(n.dir, cluster_atom_v, n.node, n.gateway, name);
    sched.run();
    return n;
  }

  /// A runtime registered at `n`: a stand-in connection the directory watches.
  caf::actor add_runtime(test_node& n, const std::string& id) {
    auto conn = spawn_dummy();
    auto info = R"({"id":")" + id + R"(","pid":1,"reflectionServerUrl":"ws://x"})";
    caf::anon_send(n.dir, register_atom_v, id, info, caf::actor_cast<connection_actor>(conn));
    sched.run();
    return conn;
  }

  std::string status_of(const test_node& at, const std::string& node) {
    auto v = parse_json(at.view->current()->json);
    for (auto& n : v.at("nodes").as_array())
      if (n.at("name").as_string() == node)
        return std::string{n.at("status").as_string()};
    return "<unknown>";
  }

  std::vector<std::string> remote_ids(const test_node& at) {
    std::vector<std::string> out;
    for (auto& e : at.routes->current()->remote)
      out.push_back(e.node + "/" + e.runtime_id);
    return out;
  }

  void end(std::initializer_list<test_node*> nodes) {
    for (auto* n : nodes) {
      stop(n->node);
      stop(n->dir);
      stop(n->gateway);
    }
  }
};

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

call_request run_call(std::string runtime_id = {}) {
  call_request c;
  c.key = "/flow/x";
  c.runtime_id = std::move(runtime_id);
  return c;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_tests, cluster_fixture)

CAF_TEST(cluster routing takes local first then the cluster most recent and node/id exactly) {
  auto l = spawn_dummy();
  auto r1 = spawn_dummy();
  auto r2 = spawn_dummy();
  auto as_target = [](const caf::actor& a) { return caf::actor_cast<call_target_actor>(a); };
  route_table t;
  t.self_node = "a";
  t.remote = {{"x", as_target(r1), "b"}, {"y", as_target(r2), "c"}};
  // No local runtime: the cluster's most recent.
  auto r = route_call(t, run_call());
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == r2);
  CAF_CHECK_EQUAL(r.node, "c");
  t.entries = {{"x", as_target(l), {}}};
  r = route_call(t, run_call());
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == l);
  CAF_CHECK_EQUAL(r.node, "");
  // An id two nodes hold: this node's; node/id names the other one.
  r = route_call(t, run_call("x"));
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == l);
  r = route_call(t, run_call("b/x"));
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == r1);
  CAF_CHECK_EQUAL(r.runtime_id, "x");
  CAF_CHECK_EQUAL(r.node, "b");
  r = route_call(t, run_call("a/x"));
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == l);
  r = route_call(t, run_call("y"));
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == r2);
  r = route_call(t, run_call("c/x"));
  CAF_CHECK(r.how == call_route::kind::failed);
  CAF_CHECK_EQUAL(member_str(r.error, {"message"}), "Runtime c/x not found");
  for (auto& x : {l, r1, r2})
    stop(x);
  check_no_leaks();
}

CAF_TEST(two nodes list each other runtimes and follow their changes) {
  auto a = make_node("a");
  auto b = make_node("b");
  auto rt1 = add_runtime(a, "rt1"); // before the join: in the hello snapshot
  introduce(b.node, a.node);
  sched.run();
  CAF_CHECK_EQUAL(status_of(a, "b"), "up");
  CAF_CHECK_EQUAL(status_of(b, "a"), "up");
  CAF_CHECK_EQUAL(a.view->current()->not_ready, "");
  CAF_CHECK(remote_ids(b) == std::vector<std::string>{"a/rt1"});
  auto rt2 = add_runtime(b, "rt2"); // after: an event
  auto rt3 = add_runtime(a, "rt2"); // the same id at another node
  CAF_CHECK(remote_ids(a) == std::vector<std::string>{"b/rt2"});
  CAF_CHECK(remote_ids(b) == (std::vector<std::string>{"a/rt1", "a/rt2"}));
  // Listings name each runtime's node and its qualified id.
  auto list = std::get<0>(ask<std::string>(b.dir, list_atom_v));
  auto v = parse_json(list);
  CAF_REQUIRE(v.is_array());
  CAF_REQUIRE_EQUAL(v.as_array().size(), 3u);
  auto first = boost::json::serialize(v.as_array()[0]);
  CAF_CHECK_EQUAL(member_str(first, {"id"}), "rt2");
  CAF_CHECK_EQUAL(member_str(first, {"node"}), "b");
  CAF_CHECK_EQUAL(member_str(first, {"qualifiedId"}), "b/rt2");
  auto last = boost::json::serialize(v.as_array()[2]);
  CAF_CHECK_EQUAL(member_str(last, {"qualifiedId"}), "a/rt2");
  CAF_CHECK_EQUAL(member(last, {"pid"}), "1");
  // A runtime that leaves is unlisted everywhere.
  stop(rt1);
  CAF_CHECK(remote_ids(b) == std::vector<std::string>{"a/rt2"});
  CAF_CHECK_EQUAL(member(a.view->current()->json, {"nodes"}).find("\"runtimes\":1") != std::string::npos, true);
  for (auto& x : {rt2, rt3})
    stop(x);
  CAF_CHECK(remote_ids(a).empty());
  CAF_CHECK(remote_ids(b).empty());
  end({&a, &b});
  check_no_leaks();
}

CAF_TEST(a third node joining through one member meets every member) {
  auto a = make_node("a");
  auto b = make_node("b");
  introduce(b.node, a.node);
  sched.run();
  auto c = make_node("c");
  auto rt = add_runtime(b, "rt-b");
  introduce(c.node, a.node);
  sched.run();
  // Without a middleman, c cannot dial b's address: a introduced c to b, and
  // b dials back in production. Here c is handed b as a dial would.
  introduce(c.node, b.node);
  sched.run();
  CAF_CHECK_EQUAL(status_of(c, "a"), "up");
  CAF_CHECK_EQUAL(status_of(c, "b"), "up");
  CAF_CHECK_EQUAL(status_of(a, "c"), "up");
  CAF_CHECK_EQUAL(status_of(b, "c"), "up");
  CAF_CHECK(remote_ids(c) == std::vector<std::string>{"b/rt-b"});
  stop(rt);
  end({&a, &b, &c});
  check_no_leaks();
}

CAF_TEST(a node whose link is lost takes its runtimes with it) {
  auto a = make_node("a");
  auto b = make_node("b");
  auto rt = add_runtime(a, "rt1");
  introduce(b.node, a.node);
  sched.run();
  CAF_CHECK(remote_ids(b) == std::vector<std::string>{"a/rt1"});
  auto changes = obs::global().cluster_membership_changes.load();
  stop(a.node, caf::exit_reason::remote_link_unreachable);
  CAF_CHECK_EQUAL(status_of(b, "a"), "unreachable");
  CAF_CHECK(remote_ids(b).empty());
  CAF_CHECK_EQUAL(obs::global().cluster_membership_changes.load(), changes + 1);
  stop(rt);
  stop(a.dir);
  stop(a.gateway);
  end({&b});
  check_no_leaks();
}

CAF_TEST(a node that leaves is down at once) {
  auto a = make_node("a");
  auto b = make_node("b");
  introduce(b.node, a.node);
  sched.run();
  caf::anon_send(a.node, leave_atom_v, std::string{"a"});
  sched.run();
  CAF_CHECK_EQUAL(status_of(b, "a"), "down");
  end({&a, &b});
  check_no_leaks();
}

CAF_TEST(a second live node under a taken name is refused) {
  auto a = make_node("a");
  auto b = make_node("b");
  introduce(b.node, a.node);
  sched.run();
  auto refused = obs::global().cluster_hellos_refused.load();
  auto impostor = make_node("b"); // another incarnation, another address
  // The impostor's address differs from b's, so a refuses it.
  caf::anon_send(impostor.node, listening_atom_v, std::string{"elsewhere.test:7300"});
  sched.run();
  introduce(impostor.node, a.node);
  sched.run();
  CAF_CHECK_EQUAL(obs::global().cluster_hellos_refused.load(), refused + 1);
  CAF_CHECK_EQUAL(status_of(a, "b"), "up");
  CAF_CHECK(contains(impostor.view->current()->not_ready, "in use by the live node at b.test:7300"));
  end({&a, &b, &impostor});
  check_no_leaks();
}

CAF_TEST(a node of another protocol version is refused) {
  auto a = make_node("a");
  auto stranger = spawn_dummy();
  auto refused = obs::global().cluster_hellos_refused.load();
  member_card card{"z", "z.test:7300", 7, cluster_protocol_version + 1, stranger, stranger};
  caf::anon_send(a.node, hello_atom_v, card, std::vector<runtime_record>{});
  sched.run();
  CAF_CHECK_EQUAL(obs::global().cluster_hellos_refused.load(), refused + 1);
  CAF_CHECK_EQUAL(status_of(a, "z"), "<unknown>");
  stop(stranger);
  end({&a});
  check_no_leaks();
}

CAF_TEST(records a peer sends are checked before they are listed) {
  auto a = make_node("a");
  auto b = make_node("b");
  introduce(b.node, a.node);
  sched.run();
  auto conn = spawn_dummy();
  // Only b speaks for b's runtimes: this comes from nobody.
  caf::anon_send(a.node, rt_up_atom_v, std::string{"b"},
                 runtime_record{"forged", R"({"id":"forged"})", conn});
  sched.run();
  CAF_CHECK(remote_ids(a).empty());
  // A node's snapshot: ids with control characters, RuntimeInfo that is not
  // a JSON object, and records without a connection are dropped.
  auto c_node = spawn_dummy();
  member_card card{"c", "c.test:7300", 9, cluster_protocol_version, c_node, c_node};
  std::vector<runtime_record> records{
    {"bad\nid", R"({"id":"x"})", conn},
    {"not-json", R"({"id":tru})", conn},
    {"no-conn", R"({"id":"no-conn"})", caf::actor{}},
    {"good", R"({"id":"good"})", conn},
  };
  caf::anon_send(a.node, hello_atom_v, card, records);
  sched.run();
  CAF_CHECK(remote_ids(a) == std::vector<std::string>{"c/good"});
  stop(c_node);
  CAF_CHECK(remote_ids(a).empty());
  stop(conn);
  end({&a, &b});
  check_no_leaks();
}

CAF_TEST(a call to another node passes both gateways in order and a lost node fails it with UNAVAILABLE) {
  // The owner's side: a real connection with a registered runtime, and its gateway.
  auto owner_routes = std::make_shared<route_board>();
  auto owner_dir = sys.spawn(runtime_directory, owner_routes);
  auto owner_gw = spawn_cluster_gateway(sys);
  sched.run();
  auto rt = make_fake_transport();
  auto conn = spawn_connection(rt, owner_dir);
  send_frame(conn, register_frame("rt-b"));
  rt->clear();
  // The entry node: its gateway knows b's; its routes list rt-b as node b's.
  auto entry_gw = spawn_cluster_gateway(sys);
  caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
  route_table t;
  t.self_node = "a";
  t.gateway = entry_gw;
  t.remote = {{"rt-b", caf::actor_cast<call_target_actor>(conn), "b"}};
  board->publish(t);
  auto entry_dir = spawn_directory();
  auto probe = spawn_probe();
  auto caller = caf::actor_cast<caller_actor>(probe);
  auto req = make_call(5, "runAction", R"({"key":"/flow/streamCount","input":3})");
  bool failed = false;
  // Started from an actor context, as every front door's caller does.
  std::vector<caf::actor> starters;
  auto start = [&](caf::actor& out) {
    out = nullptr;
    events(probe).clear();
    starters.push_back(sys.spawn([&](caf::event_based_actor* s) -> caf::behavior {
      start_call(s, door(entry_dir), req, caller,
                 [&](call_actor c) { out = caf::actor_cast<caf::actor>(c); },
                 [&](bool, std::string) { failed = true; });
      return {[](int) {}};
    }));
    sched.run();
  };
  auto pending_of_last_frame = [&]() {
    return deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.find(
      member(rt->last(), {"id"}));
  };
  auto& gauges = obs::global();
  caf::actor call;
  start(call);
  CAF_CHECK(!failed);
  CAF_REQUIRE(call);
  CAF_CHECK_EQUAL(live_delta(actor_kind::remote_call), 1);
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
  CAF_CHECK_EQUAL(live_delta(actor_kind::remote_call), 0);
  CAF_CHECK_EQUAL(gauges.remote_calls_outbound.load(), 0);
  CAF_CHECK_EQUAL(gauges.remote_calls_inbound.load(), 0);
  // Bidi input, sent before the owner's connection took the call: held by
  // the owner's gateway, then by the pending request until the run starts,
  // and forwarded in order.
  start(call);
  CAF_REQUIRE(call);
  for (auto chunk : {"1", "2"})
    caf::anon_send(caf::actor_cast<call_actor>(call), input_atom_v, std::string{chunk});
  caf::anon_send(caf::actor_cast<call_actor>(call), end_input_atom_v);
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
  CAF_CHECK_EQUAL(live_delta(actor_kind::remote_call), 0);
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
  // New calls for b fail at once while it has no gateway.
  start(call);
  CAF_REQUIRE_EQUAL(events(probe).size(), 1u);
  CAF_CHECK(contains(events(probe)[0].text, "no link to the node"));
  // A gateway that ends without a lost link (b shutting down) may still
  // have answers on the way: its calls get a grace, then fail.
  auto third = [&](caf::actor& out) {
    owner_gw = spawn_cluster_gateway(sys);
    caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
    start(out);
    CAF_REQUIRE(out);
    stop(owner_gw, caf::exit_reason::user_shutdown);
  };
  third(call);
  CAF_CHECK(events(probe).empty());
  // The late answer, as BASP would deliver it after the news.
  caf::send_as(owner_gw, entry_gw, gw_events_atom_v,
               std::vector<gw_event>{{gw_event::done_ok, call.id(), R"({"late":true})"}});
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
  auto owner_dir = sys.spawn(runtime_directory, owner_routes);
  auto owner_gw = spawn_cluster_gateway(sys);
  auto entry_gw = spawn_cluster_gateway(sys);
  auto probe_for_abort = spawn_dummy();
  sched.run();
  auto rt = make_fake_transport();
  auto conn = spawn_connection(rt, owner_dir);
  send_frame(conn, register_frame("rt-b"));
  rt->clear();
  // The entry gateway's call, as its relay would hand it on.
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

CAF_TEST(another node s iii function is invoked through both gateways and a lost node answers invocation_failed) {
  auto reg = sys.spawn(function_registry);
  auto owner = sys.spawn(owner_stub);
  auto entry_gw = spawn_cluster_gateway(sys);
  auto owner_gw = spawn_cluster_gateway(sys);
  auto probe = spawn_probe();
  sched.run();
  caf::anon_send(reg, cluster_atom_v, caf::actor{}, entry_gw, std::string{"a"});
  caf::anon_send(entry_gw, gateway_atom_v, std::string{"b"}, owner_gw);
  std::vector<function_record> fns{{"greet", R"({"team":"b"})", owner}};
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"}, fns);
  sched.run();
  // The front door learns the node, to put a relay in between.
  auto [ok, conn, id, node] = ask<bool, worker_connection_actor, std::string, std::string>(
    reg, route_iii_atom_v, std::string{"greet"});
  CAF_CHECK(ok);
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
  caf::anon_send(st.caller, done_atom_v, st.tag, true, std::string{R"({"hi":1})"});
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
  auto [ok2, conn2, err, node2] = ask<bool, worker_connection_actor, std::string, std::string>(
    reg, route_iii_atom_v, std::string{"greet"});
  CAF_CHECK(!ok2);
  CAF_CHECK(contains(err, "not found"));
  stop(probe);
  stop(reg);
  stop(entry_gw);
  stop(owner);
  check_no_leaks();
}

CAF_TEST_FIXTURE_SCOPE_END()
