#define CAF_SUITE grpc_caller

#include "hub_fixture.hpp"
#include "runtime_frames.hpp"

#include "actors/doors/grpc/grpc_caller.hpp"

// The callers of gRPC calls: many calls per hub, told apart by tag; a
// client that leaves has its run abandoned (before or after the runtime's
// connection accepted it); a hub that goes fails what it still holds.

using namespace actor_host;
using namespace actor_host::testing;

namespace {

/// What the door's end of one call heard, in order.
struct recording_sink final : grpc_door::call_sink {
  std::vector<std::string> events;
  void trace(std::string id) override {
    events.push_back("trace " + id);
  }
  void chunk(std::string json) override {
    events.push_back("chunk " + json);
  }
  void output(std::string json) override {
    events.push_back("output " + json);
  }
  void fail(int code, std::string message) override {
    events.push_back("fail " + std::to_string(code) + " " + message);
  }
};

struct hub_fixture : hub_fixture_base<grpc_caller_actor> {
  hub_fixture() {
    hub = sys.spawn(grpc_caller, door(dir));
    sched.run();
  }

  grpc_caller_state& hub_state() {
    return deref<grpc_caller_actor::stateful_base<grpc_caller_state>>(hub).state;
  }

  std::shared_ptr<recording_sink> start(std::uint64_t tag, std::string params,
                                        bool stream = false, bool stream_input = false) {
    auto sink = std::make_shared<recording_sink>();
    grpc_door::call_start cs;
    cs.key = "/flow/echo";
    cs.params = std::move(params);
    cs.stream = stream;
    cs.stream_input = stream_input;
    caf::anon_send(hub, call_atom_v, tag, std::move(cs),
                   std::shared_ptr<grpc_door::call_sink>{sink});
    sched.run();
    return sink;
  }

};

std::string joined(const std::vector<std::string>& events) {
  std::string out;
  for (auto& e : events)
    out += (out.empty() ? "" : " | ") + e;
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(grpc_caller_tests, hub_fixture)

CAF_TEST(calls on one hub are told apart and each ends at its own sink) {
  auto a = start(7, R"({"key":"/flow/echo","input":"a"})");
  auto b = start(8, R"({"key":"/flow/echo","input":"b"})", true);
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "input"}), R"("a")");
  CAF_CHECK_EQUAL(member(rt->frame(1), {"params", "stream"}), "true");
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 2);
  // Answered in the other order.
  from_runtime(trace_state(R"("2")", "t-b"));
  from_runtime(R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"2","chunk":"x"}})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":"B","telemetry":{"traceId":"t-b"}},"id":"2"})");
  from_runtime(trace_state(R"("1")", "t-a"));
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":"A","telemetry":{"traceId":"t-a"}},"id":"1"})");
  CAF_CHECK_EQUAL(joined(b->events), R"(trace t-b | chunk "x" | output "B")");
  CAF_CHECK_EQUAL(joined(a->events), R"(trace t-a | output "A")");
  CAF_CHECK(hub_state().calls.by_tag.empty());
  CAF_CHECK(hub_state().calls.by_pending.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST(errors reach the sink as gRPC status codes) {
  auto bad = start(1, R"({"input":1})");
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_REQUIRE_EQUAL(bad->events.size(), 1u);
  CAF_CHECK(contains(bad->events[0], "fail 3 ")); // INVALID_ARGUMENT
  auto unknown = start(2, R"({"key":"/flow/echo","input":1,"runtimeId":"nope"})");
  CAF_REQUIRE_EQUAL(unknown->events.size(), 1u);
  CAF_CHECK(contains(unknown->events[0], "Runtime nope not found"));
  auto failing = start(3, R"({"key":"/flow/echo","input":1})");
  from_runtime(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"boom","data":{"code":13,"message":"it broke"}},"id":"1"})");
  CAF_CHECK_EQUAL(joined(failing->events), "fail 13 it broke");
  CAF_CHECK(hub_state().calls.by_tag.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  finish();
}

CAF_TEST(a client that leaves after the call was accepted cancels the run) {
  auto sink = start(5, R"({"key":"/flow/echo","input":1})");
  from_runtime(trace_state(R"("1")", "t-5"));
  rt->clear();
  caf::anon_send(hub, cancel_atom_v, std::uint64_t{5});
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"method"}), R"("cancelAction")");
  CAF_CHECK_EQUAL(member_str(rt->frame(0), {"params", "traceId"}), "t-5");
  // The runtime's late answer reaches nobody; the sink heard only the trace.
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  CAF_CHECK_EQUAL(joined(sink->events), "trace t-5");
  finish();
}

CAF_TEST(a client that leaves before the call was accepted leaves no pending request) {
  auto sink = std::make_shared<recording_sink>();
  grpc_door::call_start cs;
  cs.params = R"({"key":"/flow/echo","input":1})";
  // Both are queued before the hub runs: the connection's answer (the
  // pending request) comes after the cancel.
  caf::anon_send(hub, call_atom_v, std::uint64_t{9}, cs, std::shared_ptr<grpc_door::call_sink>{sink});
  caf::anon_send(hub, cancel_atom_v, std::uint64_t{9});
  sched.run();
  CAF_CHECK(hub_state().calls.by_tag.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK(sink->events.empty());
  finish();
}

CAF_TEST(bidi input sent before the call is accepted waits and keeps its order) {
  auto sink = std::make_shared<recording_sink>();
  grpc_door::call_start cs;
  cs.params = R"({"key":"/flow/echo"})";
  cs.stream = cs.stream_input = true;
  caf::anon_send(hub, call_atom_v, std::uint64_t{4}, cs, std::shared_ptr<grpc_door::call_sink>{sink});
  caf::anon_send(hub, input_atom_v, std::uint64_t{4}, std::string{"1"});
  caf::anon_send(hub, input_atom_v, std::uint64_t{4}, std::string{"2"});
  caf::anon_send(hub, end_input_atom_v, std::uint64_t{4});
  sched.run();
  // The run went out with streamInput; its input waits at the pending
  // request for the trace id, then goes in order.
  CAF_REQUIRE_GREATER_OR_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "streamInput"}), "true");
  rt->clear();
  from_runtime(trace_state(R"("1")", "t-4"));
  auto frames = rt->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 3u);
  CAF_CHECK_EQUAL(member(frames[0], {"params", "chunk"}), "1");
  CAF_CHECK_EQUAL(member(frames[1], {"params", "chunk"}), "2");
  CAF_CHECK_EQUAL(member(frames[2], {"method"}), R"("endInputStream")");
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":3},"id":"1"})");
  CAF_CHECK_EQUAL(joined(sink->events), "trace t-4 | output 3");
  finish();
}

CAF_TEST(bidi input held before the call is accepted is capped) {
  call_policy policy;
  policy.max_bidi_input_bytes = 4;
  auto capped = sys.spawn(grpc_caller, door(dir, policy));
  sched.run();
  auto sink = std::make_shared<recording_sink>();
  grpc_door::call_start cs;
  cs.params = R"({"key":"/flow/echo"})";
  cs.stream = cs.stream_input = true;
  caf::anon_send(capped, call_atom_v, std::uint64_t{1}, cs,
                 std::shared_ptr<grpc_door::call_sink>{sink});
  caf::anon_send(capped, input_atom_v, std::uint64_t{1}, std::string{"123"});
  caf::anon_send(capped, input_atom_v, std::uint64_t{1}, std::string{"45"});
  sched.run();
  CAF_REQUIRE_EQUAL(sink->events.size(), 1u);
  CAF_CHECK(contains(sink->events[0], "fail 8 ")); // RESOURCE_EXHAUSTED
  // The run the runtime was asked for is abandoned with the call.
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  stop(capped, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(a hub that goes fails the calls it holds) {
  auto sink = start(3, R"({"key":"/flow/echo","input":1})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 1);
  stop(hub, caf::exit_reason::user_shutdown);
  hub = nullptr;
  CAF_CHECK_EQUAL(joined(sink->events), "fail 14 the manager is shutting down");
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
