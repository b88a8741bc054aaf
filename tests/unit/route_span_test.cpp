#define CAF_SUITE route_span

#include "test_support.hpp"

#include "actors/tracing/trace_keeper.hpp"
#include "obs/metrics.hpp"

// The manager's own span of each routed run, from the pending request to
// the trace keeper, and the bound on how many may be on their way.

using namespace actor_host;
using namespace actor_host::testing;

namespace {

struct fixture : actor_fixture {
  caf::actor keeper;
  caf::actor batcher;
  fake_transport_ptr rt = make_fake_transport("127.0.0.1:40001");
  directory_actor dir = spawn_directory();
  connection_actor conn;
  caf::actor caller = spawn_probe();

  fixture() {
    std::string error;
    std::shared_ptr<traces::trace_store> store = traces::trace_store::open(":memory:", {}, error);
    keeper = sys.spawn(trace_keeper, store, caf::actor{});
    auto opts = default_connection_options();
    opts.traces = make_route_span_queue(keeper, [this](auto fun, route_span_queue_ptr q) {
      return batcher = sys.spawn(fun, std::move(q));
    });
    opts.node = "node-a";
    conn = spawn_connection(rt, dir, opts);
    send_frame(conn, register_frame("rt1"));
    rt->clear();
  }

  ~fixture() {
    stop(caller);
    stop(conn, caf::exit_reason::user_shutdown);
    stop(dir);
    stop(batcher);
    stop(keeper);
  }

  /// One run of /flow/x with trace `trace`, answered by the runtime.
  void run(const std::string& trace, int wire_id) {
    caf::send_as(caller, conn, call_atom_v, make_call(1, "runAction", R"({"key":"/flow/x"})", {}),
                 caf::actor_cast<caller_actor>(caller));
    sched.run();
    auto id = std::to_string(wire_id);
    send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":")" + id
                       + R"(","state":{"traceId":")" + trace + R"("}}})");
    send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":1},"id":")" + id + R"("})");
  }

  std::string load(const std::string& trace) {
    auto [found, doc] = ask<bool, std::string>(keeper, trace_get_atom_v, trace);
    return found ? doc : "<none>";
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(route_span_tests, fixture)

CAF_TEST(a routed run leaves the manager span with its runtime node and action) {
  auto queued = obs::global().route_spans_queued.load();
  run("11112222333344445555666677778888", 1);
  // Queued until its batch window ends, then the keeper has it.
  CAF_CHECK_EQUAL(obs::global().route_spans_queued.load(), queued + 1);
  advance_time(route_batch_window);
  sched.run();
  CAF_CHECK_EQUAL(obs::global().route_spans_queued.load(), queued);
  // No runtime span came: after the wait it is the trace's root.
  advance_time(route_span_wait);
  auto doc = load("11112222333344445555666677778888");
  auto spans = parse_json(doc).at("spans").as_object();
  CAF_REQUIRE_EQUAL(spans.size(), 1u);
  auto& attrs = spans.begin()->value().at("attributes").as_object();
  CAF_CHECK_EQUAL(attrs.at("actor-host:runtime").as_string(), "rt1");
  CAF_CHECK_EQUAL(attrs.at("actor-host:node").as_string(), "node-a");
  CAF_CHECK_EQUAL(attrs.at("actor-host:action").as_string(), "/flow/x");
  CAF_CHECK_EQUAL(attrs.at("genkit:type").as_string(), "actor-host");
}

CAF_TEST(route spans over the cap are dropped and counted rather than queued) {
  auto& m = obs::global();
  auto dropped = m.route_spans_dropped.load();
  auto saved = m.route_spans_queued.exchange(max_route_spans_queued);
  run("aaaa2222333344445555666677778888", 1);
  CAF_CHECK_EQUAL(m.route_spans_dropped.load(), dropped + 1);
  CAF_CHECK_EQUAL(m.route_spans_queued.load(), max_route_spans_queued);
  m.route_spans_queued.store(saved);
  advance_time(route_batch_window);
  sched.run();
  advance_time(route_span_wait);
  CAF_CHECK_EQUAL(load("aaaa2222333344445555666677778888"), "<none>");
}

CAF_TEST_FIXTURE_SCOPE_END()
