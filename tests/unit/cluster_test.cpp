#define CAF_SUITE cluster

#include "test_support.hpp"

#include "actors/cluster/cluster_node.hpp"
#include "actors/cluster/cluster_types.hpp"
#include "actors/cluster/gateway.hpp"
#include "obs/metrics.hpp"

// Cluster membership and the merged directory (calls between nodes:
// cluster_gateway_test.cpp),
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
    n.dir = sys.spawn(runtime_directory, n.routes, std::chrono::milliseconds{0});
    n.gateway = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
    cluster_options o;
    o.node_name = name;
    o.beat = 1h; // no timers in these tests but the ones they move to
    cluster_links links;
    links.gateway = caf::actor_cast<gateway_actor>(n.gateway);
    n.node = spawn_cluster_node(sys, o, links, caf::actor_cast<caf::actor>(n.dir), n.view);
    caf::anon_send(n.node, listening_atom_v, name + ".test:7300", "ws://" + name + ".test:3100");
    caf::anon_send(n.dir, cluster_atom_v, n.node, n.gateway, name);
    sched.run();
    return n;
  }

  /// A runtime registered at `n`: a stand-in connection the directory watches.
  caf::actor add_runtime(test_node& n, const std::string& id) {
    auto conn = spawn_dummy();
    auto info = R"({"id":")" + id + R"(","pid":1,"reflectionServerUrl":"ws://x"})";
    caf::anon_send(n.dir, register_atom_v, runtime_registration{id, id, info, nullptr},
                   caf::actor_cast<connection_actor>(conn));
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
  t.remote = {{"x", as_target(r1), "b", "x", nullptr, 0, {}}, {"y", as_target(r2), "c", "y", nullptr, 0, {}}};
  // No local runtime: the cluster's most recent.
  auto r = route_call(t, run_call());
  CAF_CHECK(caf::actor_cast<caf::actor>(r.conn) == r2);
  CAF_CHECK_EQUAL(r.node, "c");
  t.entries = {{"x", as_target(l), {}, "x", nullptr, 0, {}}};
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
  CAF_CHECK_EQUAL(member_str(r.error.object, {"message"}), "Runtime c/x not found");
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

CAF_TEST(keep-majority - a node that reaches a minority is not ready and fails calls for the other side at once) {
  auto a = make_node("a");
  auto b = make_node("b");
  auto c = make_node("c");
  introduce(b.node, a.node);
  introduce(c.node, a.node);
  introduce(c.node, b.node);
  sched.run();
  add_runtime(b, "rt");
  CAF_CHECK(remote_ids(a) == std::vector<std::string>{"b/rt"});
  auto changes = obs::global().cluster_minority_changes.load();
  // b is lost: a and c are two of three, a majority.
  stop(b.node, caf::exit_reason::remote_link_unreachable);
  CAF_CHECK(!contains(a.view->current()->not_ready, "minority"));
  CAF_CHECK(a.routes->current()->partitioned.empty());
  // c too: a alone is one of three.
  stop(c.node, caf::exit_reason::remote_link_unreachable);
  CAF_CHECK(contains(a.view->current()->not_ready,
                     "this node reaches 1 of the 3 nodes of its cluster (a minority"));
  CAF_CHECK_EQUAL(obs::global().cluster_minority.load(), 1);
  CAF_CHECK_EQUAL(obs::global().cluster_minority_changes.load(), changes + 1);
  auto r = route_call(*a.routes->current(), run_call("rt"));
  CAF_CHECK(r.how == call_route::kind::failed);
  CAF_CHECK_EQUAL(member(r.error.object, {"data", "code"}), "14");
  CAF_CHECK(contains(member_str(r.error.object, {"message"}), "runtime rt is not on this side of a partition"));
  // While a is cut off, its runtime x is taken at the majority (b's new
  // incarnation here); when they meet again, a's copy yields.
  auto x = add_runtime(a, "x");
  auto b2 = make_node("b");
  add_runtime(b2, "x");
  auto takeovers = obs::global().runtime_takeovers.load();
  introduce(b2.node, a.node);
  sched.run();
  CAF_CHECK_EQUAL(obs::global().runtime_takeovers.load(), takeovers + 1);
  CAF_CHECK(!contains(a.view->current()->not_ready, "minority"));
  CAF_CHECK_EQUAL(obs::global().cluster_minority.load(), 0);
  CAF_CHECK(a.routes->current()->partitioned.empty());
  stop(x);
  for (auto* n : {&b, &c}) {
    stop(n->dir);
    stop(n->gateway);
  }
  end({&a, &b2});
  check_no_leaks();
}

CAF_TEST(keep-majority - an even split keeps the side with the lowest name and two nodes always serve) {
  auto a = make_node("a");
  auto b = make_node("b");
  introduce(b.node, a.node);
  sched.run();
  // Two nodes: no majority to keep, b serves alone.
  stop(a.node, caf::exit_reason::remote_link_unreachable);
  CAF_CHECK(!contains(b.view->current()->not_ready, "minority"));
  auto c = make_node("c");
  auto d = make_node("d");
  introduce(c.node, b.node);
  introduce(d.node, b.node);
  introduce(d.node, c.node);
  sched.run();
  // b knows a (unreachable), c, d: b, c, d reach three of four.
  CAF_CHECK(!contains(b.view->current()->not_ready, "minority"));
  stop(d.node, caf::exit_reason::remote_link_unreachable);
  // Two of four without a (the lowest name): a minority.
  CAF_CHECK(contains(b.view->current()->not_ready, "reaches 2 of the 4 nodes"));
  // c never met a: it reaches two of the three nodes it knows.
  CAF_CHECK(!contains(c.view->current()->not_ready, "minority"));
  for (auto* n : {&a, &d}) {
    stop(n->dir);
    stop(n->gateway);
  }
  end({&b, &c});
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
  // It still answers while it drains, but that incarnation is not admitted again.
  introduce(b.node, a.node);
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
  caf::anon_send(impostor.node, listening_atom_v, std::string{"elsewhere.test:7300"},
                 std::string{});
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

CAF_TEST_FIXTURE_SCOPE_END()
