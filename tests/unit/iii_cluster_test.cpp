#define CAF_SUITE iii_cluster

#include "test_support.hpp"
#include "iii_fixture.hpp"

#include "actors/cluster/cluster_types.hpp"
#include "actors/iii/function_registry.hpp"
#include "actors/iii/worker_connection.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

// One iii engine across the cluster (docs/CLUSTER.md): node a's function
// registry lists node b's functions, workers and trigger types (as node b's
// cluster node hands them over, `fnset`), with their node and the session's
// RBAC filter, and fires the engine's trigger types for their changes.

namespace {

/// Node b's worker wb with functions `ids` and the trigger type
/// harness::tick, its connection `conn`.
iii_node_set node_b_set(const caf::actor& conn, std::vector<std::string> ids) {
  iii_node_set set;
  worker_wire w;
  w.id = "wb";
  w.name = "harness-worker";
  w.runtime = "node";
  set.workers.push_back(w);
  for (auto& id : ids)
    set.functions.push_back({id, id.starts_with("api::") ? R"({"public":true})" : "", conn, "wb",
                             "b's " + id, "", ""});
  set.types.push_back({"harness::tick", "wb", "ticks"});
  return set;
}

worker_wire worker_called(std::string id) {
  worker_wire w;
  w.id = std::move(id);
  return w;
}

struct cluster_engine_fixture : iii_fixture {
  fake_transport_ptr ta = make_fake_transport("127.0.0.1:41001");
  worker_connection_actor caller;
  std::string caller_id;
  caf::actor b_conn; // stands for node b's worker connection
  std::vector<worker_connection_actor> extra;

  cluster_engine_fixture() {
    caller = spawn_worker(ta, opts());
    caller_id = member_str(ta->frame(0), {"worker_id"});
    ta->clear();
    b_conn = spawn_probe();
    // Node a of a cluster (no cluster node or gateway needed to list).
    caf::anon_send(reg, cluster_atom_v, caf::actor{}, caf::actor{}, std::string{"a"});
    sched.run();
  }

  /// `caller` (or `who` on `t`) invokes `fn` with `data`: its invocationresult frame.
  std::string call(const std::string& fn, const std::string& data = "{}",
                   const worker_connection_actor& who = {}, const fake_transport_ptr& t = {}) {
    return invoke(who ? who : caller, t ? t : ta, fn, data);
  }

  void finish() {
    for (auto& w : extra)
      stop(w, caf::exit_reason::user_shutdown);
    stop(caller, caf::exit_reason::user_shutdown);
    stop(b_conn);
    stop_iii_and_check();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(iii_cluster_tests, cluster_engine_fixture)

CAF_TEST(the engine lists list another node s functions workers and trigger types with their node) {
  send_frame(caller, R"({"type":"registerfunction","id":"local_fn"})");
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"}, node_b_set(b_conn, {"greet", "local_fn"}));
  sched.run();
  auto fns = member(call("engine::functions::list"), {"result", "functions"});
  // This node's function of an id wins over another node's.
  CAF_CHECK_EQUAL(ids_in(fns, "function_id"), "greet local_fn ");
  CAF_CHECK_EQUAL(ids_in(fns, "node"), "b a ");
  CAF_CHECK_EQUAL(ids_in(fns, "worker_name"), "harness-worker " + caller_id + " ");
  auto info = call("engine::functions::info", R"({"function_id":"greet"})");
  CAF_CHECK_EQUAL(member_str(info, {"result", "node"}), "b");
  CAF_CHECK_EQUAL(member_str(info, {"result", "worker_id"}), "wb");
  CAF_CHECK_EQUAL(member_str(info, {"result", "description"}), "b's greet");
  auto workers = member(call("engine::workers::list"), {"result", "workers"});
  CAF_CHECK_EQUAL(ids_in(workers, "id"), caller_id + " wb ");
  CAF_CHECK_EQUAL(ids_in(workers, "node"), "a b ");
  CAF_CHECK_EQUAL(ids_in(workers, "runtime"), "node ");
  auto winfo = call("engine::workers::info", R"({"name":"harness-worker"})");
  CAF_CHECK_EQUAL(member_str(winfo, {"result", "worker", "node"}), "b");
  CAF_CHECK_EQUAL(ids_in(member(winfo, {"result", "functions"}), "function_id"), "greet local_fn ");
  CAF_CHECK_EQUAL(ids_in(member(winfo, {"result", "trigger_types"}), "id"), "harness::tick ");
  auto types = member(call("engine::triggers::list"), {"result", "triggers"});
  CAF_CHECK_EQUAL(ids_in(types, "id"),
                  "engine::functions-available engine::workers-available harness::tick ");
  CAF_CHECK_EQUAL(ids_in(types, "node"), "a a b ");
  CAF_CHECK_EQUAL(ids_in(types, "worker_name"), "engine engine harness-worker ");
  // Node b is lost: its entries go.
  caf::anon_send(reg, node_lost_atom_v, std::string{"b"});
  sched.run();
  CAF_CHECK_EQUAL(ids_in(member(call("engine::functions::list"), {"result", "functions"}),
                         "function_id"),
                  "local_fn ");
  CAF_CHECK_EQUAL(ids_in(member(call("engine::workers::list"), {"result", "workers"}), "id"),
                  caller_id + " ");
  CAF_CHECK_EQUAL(member_str(call("engine::functions::info", R"({"function_id":"greet"})"),
                             {"error", "code"}),
                  "NOT_FOUND");
  finish();
}

CAF_TEST(another node s functions are listed through the session s RBAC filter) {
  auto cfg = std::make_shared<registry::worker_rbac_config>();
  cfg->expose_functions = registry::worker_rbac_config::parse_list(
    "engine::functions::list, engine::functions::info, metadata:public=true");
  auto o = opts();
  o.rbac = cfg;
  auto tp = make_fake_transport();
  auto pub = spawn_worker(tp, o);
  extra.push_back(pub);
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"},
                 node_b_set(b_conn, {"api::open", "secret::x"}));
  sched.run();
  CAF_CHECK_EQUAL(ids_in(member(call("engine::functions::list", "{}", pub, tp),
                                {"result", "functions"}),
                         "function_id"),
                  "api::open ");
  CAF_CHECK_EQUAL(member_str(call("engine::functions::info", R"({"function_id":"secret::x"})",
                                  pub, tp),
                             {"error", "code"}),
                  "FORBIDDEN");
  // The trusted caller sees both.
  CAF_CHECK_EQUAL(ids_in(member(call("engine::functions::list"), {"result", "functions"}),
                         "function_id"),
                  "api::open secret::x ");
  finish();
}

CAF_TEST(another node s workers and functions fire the engine s trigger types) {
  send_frame(caller, R"({"type":"registerfunction","id":"on_worker"})");
  send_frame(caller, R"({"type":"registerfunction","id":"on_fns"})");
  send_frame(caller, R"({"type":"registertrigger","id":"w1","trigger_type":"engine::workers-available","function_id":"on_worker","config":{}})");
  send_frame(caller, R"({"type":"registertrigger","id":"f1","trigger_type":"engine::functions-available","function_id":"on_fns","config":{}})");
  ta->clear();
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"}, node_b_set(b_conn, {"greet"}));
  sched.run();
  auto got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member(got[0], {"data"}), R"({"event":"worker_connected","worker_id":"wb"})");
  CAF_CHECK_EQUAL(advance_time(100ms), 1u);
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"function_id"}), "on_fns");
  CAF_CHECK_EQUAL(ids_in(member(got[0], {"data", "functions"}), "function_id"),
                  "greet on_fns on_worker ");
  // The same set again changes nothing; a new name is a metadata update.
  auto set = node_b_set(b_conn, {"greet"});
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"}, set);
  sched.run();
  CAF_CHECK_EQUAL(invocations(ta).size(), 0u);
  set.workers[0].name = "renamed";
  caf::anon_send(reg, fn_set_atom_v, std::string{"b"}, set);
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"data", "event"}), "worker_metadata_updated");
  // greet's row shows its worker's name: the function set changed too.
  CAF_CHECK_EQUAL(advance_time(100ms), 1u);
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK(contains(member(got[0], {"data", "functions"}), R"("worker_name":"renamed")"));
  // Its node is lost: its worker is gone, and so is greet.
  caf::anon_send(reg, node_lost_atom_v, std::string{"b"});
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member(got[0], {"data"}), R"({"event":"worker_disconnected","worker_id":"wb"})");
  CAF_CHECK_EQUAL(advance_time(100ms), 1u);
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(ids_in(member(got[0], {"data", "functions"}), "function_id"),
                  "on_fns on_worker ");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST(a node s iii set is checked and capped before it is kept) {
  caf::actor conn; // not needed by workers and types; functions without one are dropped
  iii_node_set set;
  for (std::size_t i = 0; i <= max_iii_workers_per_node; ++i)
    set.workers.push_back(worker_called("w" + std::to_string(i)));
  set.workers[1].pid = "{broken";
  set.workers[2].name = std::string(1, '\n');
  set.types.push_back({"engine::workers-available", "w0", "mine"});
  set.types.push_back({"t", "w0", "fine"});
  set.functions.push_back({"f", "", conn, "w0", "", "", ""});
  set.functions.push_back({"g", "{not json", conn, "w0", "", "", ""});
  // Dropped: 2 malformed workers (the cap counts the rest), a type named
  // like the engine's, functions without a connection.
  auto dropped = sanitize(set);
  CAF_CHECK_EQUAL(set.workers.size(), max_iii_workers_per_node - 1);
  CAF_CHECK_EQUAL(set.types.size(), 1u);
  CAF_CHECK_EQUAL(set.functions.size(), 0u);
  CAF_CHECK_EQUAL(dropped, 2u + 1u + 2u);
  // One past the cap of workers.
  iii_node_set many;
  for (std::size_t i = 0; i <= max_iii_workers_per_node; ++i)
    many.workers.push_back(worker_called("w" + std::to_string(i)));
  CAF_CHECK_EQUAL(sanitize(many), 1u);
  CAF_CHECK_EQUAL(many.workers.size(), max_iii_workers_per_node);
  iii_node_set big;
  for (std::size_t i = 0; i < max_iii_types_per_node + 5; ++i)
    big.types.push_back({"t" + std::to_string(i), "w", ""});
  CAF_CHECK_EQUAL(sanitize(big), 5u);
  CAF_CHECK_EQUAL(big.types.size(), max_iii_types_per_node);
}
