#define CAF_SUITE http_run_hub

#include "hub_fixture.hpp"
#include "runtime_frames.hpp"

#include "actors/doors/http/http_run_hub.hpp"
#include "fake_responder.hpp"

// The callers of HTTP runAction: many exchanges per hub, told apart by tag,
// each answered as http_caller answers it (the result with its trace id,
// errors in the route's shape); a client that leaves has its run abandoned
// (before or after the connection accepted it) and nothing written; the
// caller's slot is given back however the exchange ends.

using namespace actor_host;
using namespace actor_host::testing;

namespace {

struct run_hub_fixture : hub_fixture_base<http_run_hub_actor> {
  std::shared_ptr<http_run_starter> starter;
  std::shared_ptr<caller_slots> slots = std::make_shared<caller_slots>(1);

  run_hub_fixture() {
    hub = sys.spawn(http_run_hub, door(dir));
    starter = std::make_shared<http_run_starter>(std::vector<http_run_hub_actor>{hub});
    sched.run();
  }

  http_run_hub_state& hub_state() {
    return deref<http_run_hub_actor::stateful_base<http_run_hub_state>>(hub).state;
  }

  /// A POST of `body` as the door hands it on, holding the caller's one slot.
  std::shared_ptr<fake_responder> post(std::string body, bool tools_shape = true,
                                       std::map<std::string, std::string> headers = {},
                                       bool run = true) {
    auto res = std::make_shared<fake_responder>();
    CAF_REQUIRE(slots->acquire("127.0.0.1"));
    net::http_request req;
    req.method = "POST";
    req.path = tools_shape ? "/api/runAction" : "/api/rpc/runAction";
    req.headers = std::move(headers);
    req.body = std::move(body);
    (*starter)(std::make_shared<http_run>(
      http_run{std::move(req), res, {slots, "127.0.0.1"}, tools_shape}));
    if (run)
      sched.run();
    return res;
  }

  /// The client hangs up (what the session does on its strand).
  void leave(fake_responder& res) {
    std::function<void()> abort;
    {
      std::lock_guard<std::mutex> g{res.mtx};
      abort = res.abort;
    }
    CAF_REQUIRE(abort);
    abort();
  }

  /// Whether the caller's slot is free again (the cap is 1).
  bool slot_free() {
    if (!slots->acquire("127.0.0.1"))
      return false;
    slots->release("127.0.0.1");
    return true;
  }

};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_run_hub_tests, run_hub_fixture)

CAF_TEST(exchanges on one hub are told apart and each gets its own answer) {
  slots = std::make_shared<caller_slots>(2);
  auto a = post(R"({"key":"/flow/echo","input":"a"})");
  auto b = post(R"({"key":"/flow/echo","input":"b"})");
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "input"}), R"("a")");
  CAF_CHECK_EQUAL(member(rt->frame(1), {"params", "input"}), R"("b")");
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 2);
  // Answered in the other order; `a` names its trace only in the result.
  from_runtime(trace_state(R"("2")", "t-b"));
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":"B"},"id":"2"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":"A","telemetry":{"traceId":"t-a"}},"id":"1"})");
  CAF_CHECK_EQUAL(b->answers, 1);
  CAF_CHECK_EQUAL(b->status, 200);
  CAF_CHECK_EQUAL(b->content_type, "application/json");
  CAF_CHECK_EQUAL(b->body, R"({"result":"B"})");
  CAF_CHECK_EQUAL(b->header("X-Genkit-Trace-Id"), "t-b");
  CAF_CHECK_EQUAL(a->answers, 1);
  CAF_CHECK_EQUAL(a->body, R"({"result":"A","telemetry":{"traceId":"t-a"}})");
  CAF_CHECK_EQUAL(a->header("X-Genkit-Trace-Id"), "t-a");
  CAF_CHECK(hub_state().calls.by_tag.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST(errors are answered in the shape of the route and free the slot) {
  auto not_object = post("[1]");
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_CHECK_EQUAL(not_object->status, 400);
  CAF_CHECK(not_object->body.starts_with(R"({"error":{"message":)")); // the tools server's
  CAF_CHECK(slot_free());
  auto as_rpc = post(R"({"key":"/flow/echo","input":1,"runtimeId":"nope"})", false);
  CAF_CHECK_GREATER_OR_EQUAL(as_rpc->status, 400);
  CAF_CHECK(as_rpc->body.starts_with(R"({"error":{"code":)")); // JSON-RPC's error object
  CAF_CHECK(contains(as_rpc->body, "Runtime nope not found"));
  CAF_CHECK(slot_free());
  auto looped = post(R"({"key":"/flow/echo","input":1})", true, {{"x-actor-host-hops", "8"}});
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_CHECK_EQUAL(looped->status, 400);
  CAF_CHECK(contains(looped->body, "came back through a manager 8 times"));
  CAF_CHECK(slot_free());
  auto failing = post(R"({"key":"/flow/echo","input":1})");
  from_runtime(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"boom","data":{"code":8,"message":"too much"}},"id":"1"})");
  CAF_CHECK_EQUAL(failing->status, 429);
  CAF_CHECK_EQUAL(failing->header("Retry-After"), "1");
  CAF_CHECK(contains(failing->body, "too much"));
  CAF_CHECK(slot_free());
  CAF_CHECK(hub_state().calls.by_tag.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  finish();
}

CAF_TEST(a hop count goes on in the params of the run) {
  post(R"({"key":"/flow/echo","input":1})", true, {{"x-actor-host-hops", "2"}});
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "actorHostHops"}), "2");
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  finish();
}

CAF_TEST(a client that leaves after the call was accepted cancels the run) {
  auto res = post(R"({"key":"/flow/echo","input":1})");
  from_runtime(trace_state(R"("1")", "t-5"));
  rt->clear();
  leave(*res);
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK(slot_free());
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"method"}), R"("cancelAction")");
  CAF_CHECK_EQUAL(member_str(rt->frame(0), {"params", "traceId"}), "t-5");
  // The runtime's late answer reaches nobody.
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  CAF_CHECK_EQUAL(res->answers, 0);
  finish();
}

CAF_TEST(a client that leaves before the call was accepted leaves no pending request) {
  // Both are queued before the hub runs: the connection's answer (the
  // pending request) comes after the cancel.
  auto res = post(R"({"key":"/flow/echo","input":1})", true, {}, false);
  leave(*res);
  sched.run();
  CAF_CHECK(hub_state().calls.by_tag.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK(slot_free());
  CAF_CHECK_EQUAL(res->answers, 0);
  finish();
}

CAF_TEST(a hub that goes leaves its exchanges unanswered and abandons their runs) {
  auto res = post(R"({"key":"/flow/echo","input":1})");
  from_runtime(trace_state(R"("1")", "t-3"));
  rt->clear();
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 1);
  stop(hub, caf::exit_reason::user_shutdown);
  hub = nullptr;
  CAF_CHECK_EQUAL(res->answers, 0);
  CAF_CHECK(slot_free());
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"method"}), R"("cancelAction")");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
