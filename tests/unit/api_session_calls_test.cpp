#define CAF_SUITE api_session_calls

// The api_session suite continued: calls in flight (streams, ids, bidi input).

#include "api_session_fixture.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(api_session_calls_tests, session_fixture)

CAF_TEST(a streaming run is relayed with the numeric caller id) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/echo","input":{"a":1},"stream":true},"id":7})");
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  // The runtime gets the caller's params as they were, under our own id.
  CAF_CHECK_EQUAL(rt->frame(0),
                  R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/echo","input":{"a":1},"stream":true},"id":"1"})");
  from_runtime(trace_state(R"("1")", "trace-7"));
  from_runtime(chunk(R"("1")", R"({"n":1})"));
  from_runtime(chunk(R"("1")", R"("two")"));
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":{"a":1},"telemetry":{"traceId":"trace-7"}},"id":"1"})");
  auto frames = api->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 4u);
  CAF_CHECK_EQUAL(frames[0],
                  R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":7,"state":{"traceId":"trace-7"}}})");
  CAF_CHECK_EQUAL(frames[1],
                  R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":7,"chunk":{"n":1}}})");
  CAF_CHECK_EQUAL(frames[2],
                  R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":7,"chunk":"two"}})");
  CAF_CHECK_EQUAL(frames[3],
                  R"({"jsonrpc":"2.0","result":{"result":{"a":1},"telemetry":{"traceId":"trace-7"}},"id":7})");
  CAF_CHECK(session_state().calls.empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST(string ids stay strings and errors keep the caller id) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/fail"},"id":"abc"})");
  from_runtime(trace_state(R"("1")", "t"));
  from_runtime(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"boom","data":{"code":13,"message":"boom"}},"id":"1"})");
  auto frames = api->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 2u);
  CAF_CHECK_EQUAL(member(frames[0], {"params", "requestId"}), R"("abc")");
  CAF_CHECK_EQUAL(frames[1],
                  R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"boom","data":{"code":13,"message":"boom"}},"id":"abc"})");
  finish();
}

CAF_TEST(concurrent calls are told apart) {
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":1})");
  from_caller(R"({"jsonrpc":"2.0","method":"listValues","params":{"type":"defaultModel"},"id":2})");
  from_caller(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-x"},"id":3})");
  auto sent = rt->frames();
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK_EQUAL(sent[0], R"({"jsonrpc":"2.0","method":"listActions","id":"1"})");
  CAF_CHECK_EQUAL(sent[1],
                  R"({"jsonrpc":"2.0","method":"listValues","params":{"type":"defaultModel"},"id":"2"})");
  CAF_CHECK_EQUAL(sent[2],
                  R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-x"},"id":"3"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"message":"Action cancelled"},"id":"3"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"values":{}},"id":"2"})");
  auto frames = api->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 3u);
  CAF_CHECK_EQUAL(frames[0], R"({"jsonrpc":"2.0","result":{"message":"Action cancelled"},"id":3})");
  CAF_CHECK_EQUAL(frames[1], R"({"jsonrpc":"2.0","result":{"actions":{}},"id":1})");
  CAF_CHECK_EQUAL(frames[2], R"({"jsonrpc":"2.0","result":{"values":{}},"id":2})");
  // listActions gets no runActionState relayed: events are for runAction.
  finish();
}

CAF_TEST(a duplicate id in flight is rejected) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x"},"id":5})");
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/y"},"id":5})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "code"}), "-32600");
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "5");
  CAF_CHECK_EQUAL(rt->size(), 1u);
  // Once the first is done the id is free again.
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/y"},"id":5})");
  CAF_CHECK_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member(rt->frame(1), {"id"}), R"("2")");
  // A string "5" is another id than the number 5.
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/z"},"id":"5"})");
  CAF_CHECK_EQUAL(rt->size(), 3u);
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"2"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"3"})");
  finish();
}

CAF_TEST(early bidi input follows the runAction in order) {
  caf::anon_send(sess, frame_atom_v,
                 std::string{R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/bidi","streamInput":true},"id":9})"});
  caf::anon_send(sess, frame_atom_v,
                 std::string{R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":9,"chunk":"a"}})"});
  caf::anon_send(sess, frame_atom_v,
                 std::string{R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":9,"chunk":{"b":2}}})"});
  caf::anon_send(sess, frame_atom_v,
                 std::string{R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":9}})"});
  // The session reads all four frames before the call is routed.
  expect((frame_atom, std::string), from(_).to(sess));
  expect((frame_atom, std::string), from(_).to(sess));
  expect((frame_atom, std::string), from(_).to(sess));
  expect((frame_atom, std::string), from(_).to(sess));
  {
    auto& st = session_state();
    CAF_REQUIRE_EQUAL(st.calls.size(), 1u);
    auto& c = st.calls.begin()->second;
    CAF_CHECK(!c.pending);
    CAF_CHECK_EQUAL(c.held.size(), 3u);
  }
  sched.run();
  // The pending request holds the input until the runtime reports the trace.
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  from_runtime(trace_state(R"("1")", "t-bidi"));
  auto sent = rt->frames();
  CAF_REQUIRE_EQUAL(sent.size(), 4u);
  CAF_CHECK_EQUAL(member(sent[0], {"method"}), R"("runAction")");
  CAF_CHECK_EQUAL(member(sent[0], {"id"}), R"("1")");
  CAF_CHECK_EQUAL(sent[1],
                  R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"1","chunk":"a"}})");
  CAF_CHECK_EQUAL(sent[2],
                  R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"1","chunk":{"b":2}}})");
  CAF_CHECK_EQUAL(sent[3], R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"1"}})");
  CAF_CHECK_EQUAL(api->size(), 1u); // the run state
  api->clear();
  // Input after the end is dropped.
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":9,"chunk":"late"}})");
  CAF_CHECK_EQUAL(rt->size(), 4u);
  // Nothing was sent back to the caller for notifications.
  CAF_CHECK_EQUAL(api->size(), 0u);
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":"ab"},"id":"1"})");
  CAF_CHECK_EQUAL(api->last(), R"({"jsonrpc":"2.0","result":{"result":"ab"},"id":9})");
  finish();
}

CAF_TEST(bidi input after the call is accepted goes straight through) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/bidi","streamInput":true},"id":"r"})");
  from_runtime(trace_state(R"("1")", "t-r"));
  api->clear();
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"r","chunk":1}})");
  // As a request, the input is acknowledged.
  from_caller(R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"r"},"id":"e"})");
  auto sent = rt->frames();
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK_EQUAL(sent[1],
                  R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"1","chunk":1}})");
  CAF_CHECK_EQUAL(sent[2], R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"1"}})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(api->frame(0), R"({"jsonrpc":"2.0","result":{},"id":"e"})");
  // Input for a run that does not exist: an error for a request only.
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"nope","chunk":1}})");
  CAF_CHECK_EQUAL(api->size(), 1u);
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"nope","chunk":1},"id":"q"})");
  CAF_REQUIRE_EQUAL(api->size(), 2u);
  CAF_CHECK_EQUAL(member(api->frame(1), {"error", "code"}), "-32602");
  CAF_CHECK_EQUAL(member(api->frame(1), {"id"}), R"("q")");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  finish();
}

CAF_TEST(input requests after the end still get an answer) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/bidi","streamInput":true},"id":1})");
  from_caller(R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":1}})");
  api->clear();
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":1,"chunk":2},"id":2})");
  // Whatever the answer, a request with an id must not be left unanswered.
  CAF_CHECK_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "2");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
