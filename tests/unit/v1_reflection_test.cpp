#define CAF_SUITE v1_reflection

#include "fake_responder.hpp"
#include "gate.hpp"
#include "test_support.hpp"

#include "actors/runtime/v1_reflection.hpp"
#include "actors/runtime/v1_routes.hpp"
#include "registry/runtime_file.hpp"
#include "wire/jsonrpc.hpp"

// The runtime's Reflection V1 side (actors/runtime/v1_reflection.*,
// v1_routes.*): shapes from ../shared/spec/REFLECTION_V1.md.

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

actions::catalog_ptr make_catalog(const gate_ptr& g) {
  auto cat = std::make_shared<actions::action_catalog>();
  actions::action_descriptor echo;
  echo.type = "flow";
  echo.name = "echo";
  echo.input_schema = R"({"type":"string"})";
  echo.handler = [g](actions::action_context& ctx) {
    g->wait();
    return ctx.input();
  };
  cat->add(std::move(echo));
  actions::action_descriptor count;
  count.type = "flow";
  count.name = "count";
  count.handler = [g](actions::action_context& ctx) -> boost::json::value {
    g->wait();
    for (int i = 0; i < 3; ++i)
      ctx.send_chunk(boost::json::object{{"i", i}});
    return 3;
  };
  cat->add(std::move(count));
  actions::action_descriptor wait;
  wait.type = "flow";
  wait.name = "wait";
  wait.handler = [](actions::action_context& ctx) -> boost::json::value {
    while (!ctx.cancel().wait_for(std::chrono::hours(1))) {
    }
    ctx.throw_if_cancelled();
    return nullptr;
  };
  cat->add(std::move(wait));
  cat->add_value("defaultModel", "defaultModel", R"("m1")");
  return cat;
}

struct v1_fixture : actor_fixture {
  gate_ptr handlers = std::make_shared<gate>();
  actions::catalog_ptr catalog = make_catalog(handlers);
  static constexpr std::size_t max_runs = 2;
  caf::actor hub;
  std::shared_ptr<v1_identity> identity = std::make_shared<v1_identity>();
  net::http_handler routes;

  v1_fixture() {
    hub = sys.spawn(v1_reflection, catalog, caf::actor{}, max_runs);
    identity->runtime_id = "rt-1";
    identity->ready = true;
    routes = make_v1_routes(catalog, hub, identity);
    sched.run();
  }

  ~v1_fixture() {
    handlers->open();
    sys.await_detached_threads();
    if (hub) {
      caf::anon_send_exit(hub, caf::exit_reason::kill);
      sched.run();
    }
  }

  std::shared_ptr<fake_responder> call(std::string method, std::string path, std::string body = {},
                                       std::map<std::string, std::string> query = {}) {
    net::http_request req;
    req.method = std::move(method);
    req.path = std::move(path);
    req.body = std::move(body);
    req.query = std::move(query);
    auto res = std::make_shared<fake_responder>();
    routes(std::move(req), res);
    sched.run();
    return res;
  }

  /// The status alone (a value: a CAF check must not keep a reference into
  /// a temporary response).
  int status(std::string method, std::string path, std::string body = {},
             std::map<std::string, std::string> query = {}) {
    return call(std::move(method), std::move(path), std::move(body), std::move(query))->status;
  }

  void finish_handlers() {
    handlers->open();
    sys.await_detached_threads();
    sched.run();
  }

  void stop_hub() {
    handlers->open();
    auto [ok] = ask<caf::ok_atom>(hub, shutdown_atom_v);
    (void)ok;
    sys.await_detached_threads();
    sched.run();
    hub = nullptr;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(v1_reflection_tests, v1_fixture)

CAF_TEST(the cheap routes answer with the JS runtime shapes) {
  auto health = call("GET", "/api/__health");
  CAF_CHECK_EQUAL(health->status, 200);
  CAF_CHECK_EQUAL(health->body, "OK");
  CAF_CHECK_EQUAL(health->header("X-Genkit-Version"), runtime_genkit_version);
  CAF_CHECK_EQUAL(status("GET", "/api/__health", {}, {{"id", "rt-1"}}), 200);
  auto other = call("GET", "/api/__health", {}, {{"id", "rt-2"}});
  CAF_CHECK_EQUAL(other->status, 503);
  CAF_CHECK_EQUAL(other->body, "Invalid runtime ID");
  auto actions = call("GET", "/api/actions");
  CAF_CHECK(actions->body.starts_with(R"({"/flow/echo":{"key":"/flow/echo")"));
  CAF_CHECK(!contains(actions->body, R"("actions")"));
  auto values = call("GET", "/api/values", {}, {{"type", "defaultModel"}});
  CAF_CHECK_EQUAL(values->body, R"({"defaultModel":"m1"})");
  auto no_type = call("GET", "/api/values");
  CAF_CHECK_EQUAL(no_type->status, 400);
  CAF_CHECK_EQUAL(no_type->body, R"(Query parameter "type" is required.)");
  CAF_CHECK_EQUAL(status("GET", "/api/values", {}, {{"type", "model"}}), 400);
  auto envs = call("GET", "/api/envs");
  CAF_CHECK_EQUAL(envs->body, R"(["dev"])");
  CAF_CHECK_EQUAL(status("GET", "/api/nothing"), 404);
  // Before the port (and so the default id) is known, nothing is served.
  identity->ready = false;
  CAF_CHECK_EQUAL(status("GET", "/api/actions"), 503);
  identity->ready = true;
  stop_hub();
  check_no_leaks();
}

CAF_TEST(a unary run sends its head with the trace id then the result record) {
  auto res = call("POST", "/api/runAction", R"({"key":"/flow/echo","input":"hi"})");
  // The trace began: the head is out before the handler finishes.
  CAF_CHECK(res->streaming);
  CAF_CHECK_EQUAL(res->status, 200);
  CAF_CHECK_EQUAL(res->content_type, "application/json");
  auto trace = res->header("X-Genkit-Trace-Id");
  CAF_CHECK_EQUAL(trace.size(), 32u);
  CAF_CHECK_EQUAL(res->header("X-Genkit-Span-Id").size(), 16u);
  CAF_CHECK(!res->finished);
  finish_handlers();
  CAF_CHECK(res->finished);
  CAF_CHECK_EQUAL(res->body, R"({"result":"hi","telemetry":{"traceId":")" + trace + R"("}})");
  CAF_CHECK_EQUAL(res->answers, 1);
  stop_hub();
  check_no_leaks();
}

CAF_TEST(a streamed run writes one line per chunk and a last record without newline) {
  auto res = call("POST", "/api/runAction", R"({"key":"/flow/count"})", {{"stream", "true"}});
  CAF_CHECK_EQUAL(res->content_type, "text/plain");
  finish_handlers();
  auto trace = res->header("X-Genkit-Trace-Id");
  CAF_CHECK_EQUAL(res->body, "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n{\"result\":3,\"telemetry\":{"
                             "\"traceId\":\"" + trace + "\"}}");
  // Without ?stream=true, chunks are not sent.
  auto quiet = call("POST", "/api/runAction", R"({"key":"/flow/count"})");
  finish_handlers();
  CAF_CHECK(quiet->body.starts_with(R"({"result":3,)"));
  stop_hub();
  check_no_leaks();
}

CAF_TEST(errors have the JS shapes and a bad input fails as a Status in the body) {
  auto unknown = call("POST", "/api/runAction", R"({"key":"/flow/nope"})");
  CAF_CHECK_EQUAL(unknown->status, 404);
  CAF_CHECK_EQUAL(unknown->body, "action /flow/nope not found");
  auto garbage = call("POST", "/api/runAction", "{not json");
  CAF_CHECK_EQUAL(garbage->status, 400);
  CAF_CHECK(contains(garbage->body, R"("code":3)"));
  auto bidi = call("POST", "/api/runAction", R"({"key":"/flow/echo","streamInput":true})");
  CAF_CHECK_EQUAL(bidi->status, 400);
  CAF_CHECK(contains(bidi->body, "needs Reflection V2"));
  // Fails the input schema: answered before any trace, status 200 with {error}.
  auto bad = call("POST", "/api/runAction", R"({"key":"/flow/echo","input":7})");
  CAF_CHECK_EQUAL(bad->status, 200);
  CAF_CHECK(!bad->streaming);
  CAF_CHECK(bad->body.starts_with(R"({"error":{"code":3,"message":"INVALID_ARGUMENT)"));
  stop_hub();
  check_no_leaks();
}

CAF_TEST(cancelAction by trace id ends the run with CANCELLED and answers like JS) {
  auto missing = call("POST", "/api/cancelAction", "{}");
  CAF_CHECK_EQUAL(missing->status, 400);
  CAF_CHECK_EQUAL(missing->body, R"({"error":"traceId is required"})");
  auto unknown = call("POST", "/api/cancelAction", R"({"traceId":"abc"})");
  CAF_CHECK_EQUAL(unknown->status, 404);
  CAF_CHECK_EQUAL(unknown->body, R"({"message":"Action not found or already completed"})");
  auto run = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  auto trace = run->header("X-Genkit-Trace-Id");
  auto cancel = call("POST", "/api/cancelAction", R"({"traceId":")" + trace + R"("})");
  CAF_CHECK_EQUAL(cancel->status, 200);
  CAF_CHECK_EQUAL(cancel->body, R"({"message":"Action cancelled"})");
  sys.await_detached_threads();
  sched.run();
  CAF_CHECK(run->finished);
  CAF_CHECK(run->body.starts_with(R"({"error":{"code":1,"message":"Action was cancelled")"));
  CAF_CHECK(contains(run->body, trace));
  // Finished: its trace id no longer cancels anything.
  CAF_CHECK_EQUAL(status("POST", "/api/cancelAction", R"({"traceId":")" + trace + R"("})"),
                  404);
  stop_hub();
  check_no_leaks();
}

CAF_TEST(a client that goes away cancels its run and shutdown waits for the runs) {
  auto run = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::active_action), 1);
  CAF_REQUIRE(run->abort);
  run->abort(); // as the I/O strand calls it
  sched.run();
  sys.await_detached_threads();
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::active_action), 0);
  CAF_CHECK(!run->finished); // nobody to write to
  // A run in flight at shutdown is cancelled and answered.
  auto second = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  self->request(hub, caf::infinite, shutdown_atom_v); // answered once the runs are down
  sched.run();
  sys.await_detached_threads();
  sched.run();
  CAF_CHECK(second->finished);
  CAF_CHECK(contains(second->body, "Action was cancelled"));
  CAF_CHECK_EQUAL(live_delta(actor_kind::active_action), 0);
  hub = nullptr;
  check_no_leaks();
}

CAF_TEST(runs in flight are capped and one more is answered RESOURCE_EXHAUSTED) {
  auto a = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  auto b = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::active_action), 2);
  auto over = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  int over_status = over->status;
  CAF_CHECK_EQUAL(over_status, 429);
  CAF_CHECK(contains(over->body, R"({"error":{"code":8,)"));
  CAF_CHECK_EQUAL(live_delta(actor_kind::active_action), 2);
  // Runs that end free their slots for the next ones.
  for (auto* run : {&a, &b}) {
    auto trace = (*run)->header("X-Genkit-Trace-Id");
    CAF_CHECK_EQUAL(status("POST", "/api/cancelAction", R"({"traceId":")" + trace + R"("})"), 200);
  }
  sys.await_detached_threads();
  sched.run();
  CAF_CHECK(a->finished && b->finished);
  auto next = call("POST", "/api/runAction", R"({"key":"/flow/wait"})");
  CAF_CHECK(!next->header("X-Genkit-Trace-Id").empty());
  self->request(hub, caf::infinite, shutdown_atom_v); // answered once the run is down
  sched.run();
  sys.await_detached_threads();
  sched.run();
  CAF_CHECK(next->finished);
  hub = nullptr;
  check_no_leaks();
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST(runtime files are written and read with the checks of Genkit s RuntimeManager) {
  registry::runtime_file f;
  f.id = "rt-\"1";
  f.pid = 42;
  f.reflection_server_url = "http://localhost:3100";
  f.timestamp = registry::iso_timestamp(std::chrono::system_clock::time_point{
    std::chrono::milliseconds{1796414024807}});
  CAF_CHECK_EQUAL(f.timestamp, "2026-12-04T19:53:44.807Z");
  f.genkit_version = "cpp/1";
  registry::runtime_file back;
  std::string why;
  CAF_REQUIRE(registry::parse_runtime_file(registry::runtime_file_json(f), back, why));
  CAF_CHECK_EQUAL(back.id, f.id);
  CAF_CHECK_EQUAL(back.pid, 42);
  CAF_CHECK_EQUAL(back.reflection_server_url, f.reflection_server_url);
  CAF_CHECK_EQUAL(back.reflection_api_spec_version, 1);
  // The Go runtime's timestamp, with '_' for ':'.
  CAF_CHECK(registry::parse_runtime_file(
    R"({"id":"g","pid":1,"reflectionServerUrl":"u","timestamp":"2026-12-04T19_53_44Z"})", back, why));
  auto refused = [&](std::string text, std::string_view reason) {
    registry::runtime_file x;
    std::string error;
    CAF_CHECK(!registry::parse_runtime_file(text, x, error));
    CAF_CHECK_EQUAL(error, reason);
  };
  refused(R"({"pid":1,"reflectionServerUrl":"u","timestamp":"2026-12-04T19:53Z"})",
          "'id' must be a non-empty string");
  refused(R"({"id":"a","pid":"1","reflectionServerUrl":"u","timestamp":"2026-12-04T19:53Z"})",
          "'pid' must be a number");
  refused(R"({"id":"a","pid":1,"timestamp":"2026-12-04T19:53Z"})",
          "'reflectionServerUrl' must be a string");
  refused(R"({"id":"a","pid":1,"reflectionServerUrl":"u","timestamp":"yesterday"})",
          "'timestamp' must be a date");
  refused("[1,2]", "not a JSON object");
  refused(std::string(70000, ' '), "larger than 64 KiB");
}
