#define CAF_SUITE api_session

#include "api_session_fixture.hpp"

#include "actors/common/frame_bridge.hpp"

#include <algorithm>

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(api_session_tests, session_fixture)

CAF_TEST(listRuntimes) {
  from_caller(R"({"jsonrpc":"2.0","method":"listRuntimes","id":1})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  auto reply = api->frame(0);
  CAF_CHECK_EQUAL(member(reply, {"id"}), "1");
  CAF_CHECK_EQUAL(member(reply, {"jsonrpc"}), R"("2.0")");
  auto v = parse_json(reply);
  auto& runtimes = v.at("result").at("runtimes").as_array();
  CAF_REQUIRE_EQUAL(runtimes.size(), 1u);
  CAF_CHECK_EQUAL(runtimes[0].at("id").as_string(), "rt1");
  CAF_CHECK_EQUAL(runtimes[0].at("pid").to_number<int>(), 4242);
  // The raw reply starts exactly as JSON-RPC says.
  CAF_CHECK(reply.rfind(R"({"jsonrpc":"2.0","result":{"runtimes":[{)", 0) == 0);
  finish();
}

CAF_TEST(runAction params are validated) {
  struct bad_case {
    const char* frame;
    const char* needle;
  };
  bad_case cases[] = {
    {R"({"jsonrpc":"2.0","method":"runAction","id":1})", "key"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"input":1},"id":1})", "key"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"key":""},"id":1})", "key"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"key":7},"id":1})", "key"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":[{"key":"/flow/x"}],"id":1})", "key"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","stream":"yes"},"id":1})",
     "stream"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","streamInput":1},"id":1})",
     "streamInput"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","runtimeId":5},"id":1})",
     "runtimeId"},
    {R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","timeoutMs":-1},"id":1})",
     "timeoutMs"},
  };
  for (auto& c : cases) {
    CAF_MESSAGE("frame: " << c.frame);
    api->clear();
    from_caller(c.frame);
    CAF_REQUIRE_EQUAL(api->size(), 1u);
    auto reply = api->frame(0);
    CAF_CHECK_EQUAL(member(reply, {"id"}), "1");
    CAF_CHECK_EQUAL(member(reply, {"error", "code"}), "-32602");
    CAF_CHECK(contains(member_str(reply, {"error", "message"}), c.needle));
  }
  // Nothing reached the runtime and no call is left over.
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_CHECK(session_state().calls.empty());
  CAF_CHECK(session_state().by_id.empty());
  finish();
}

CAF_TEST(a bad literal deep inside runAction params is a parse error) {
  from_caller(R"({"jsonrpc":"2.0","id":3,"method":"runAction","params":{"key":"/flow/x","input":[1,{"a":tru}]}})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "code"}), "-32700");
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "3");
  CAF_CHECK_EQUAL(rt->size(), 0u);
  finish();
}

// simdjson's is_null() on a malformed literal such as `nul` returns an error
// that validate() turns into an exception; the session must answer instead of
// dying with it.
CAF_TEST(a bad null literal in runAction params is a parse error too) {
  from_caller(R"({"jsonrpc":"2.0","id":3,"method":"runAction","params":{"key":"/flow/x","input":nul}})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 1);
  CAF_CHECK_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "code"}), "-32700");
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "3");
  CAF_CHECK_EQUAL(api->close_calls(), 0);
  CAF_CHECK_EQUAL(rt->size(), 0u);
  finish();
}

CAF_TEST(unknown methods and bad frames) {
  from_caller(R"({"jsonrpc":"2.0","method":"frobnicate","id":"x"})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "code"}), "-32601");
  CAF_CHECK_EQUAL(member_str(api->frame(0), {"error", "message"}), "Method not found: frobnicate");
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), R"("x")");
  // A notification with an unknown method gets nothing.
  from_caller(R"({"jsonrpc":"2.0","method":"frobnicate"})");
  CAF_CHECK_EQUAL(api->size(), 1u);
  // Responses from a caller are ignored.
  from_caller(R"({"jsonrpc":"2.0","result":{},"id":4})");
  CAF_CHECK_EQUAL(api->size(), 1u);
  from_caller("{oops");
  CAF_REQUIRE_EQUAL(api->size(), 2u);
  CAF_CHECK_EQUAL(member(api->frame(1), {"error", "code"}), "-32700");
  CAF_CHECK_EQUAL(member(api->frame(1), {"id"}), "null");
  from_caller(R"([{"jsonrpc":"2.0","method":"listRuntimes","id":1}])");
  CAF_REQUIRE_EQUAL(api->size(), 3u);
  CAF_CHECK_EQUAL(member(api->frame(2), {"error", "code"}), "-32600");
  // Params of other methods must be objects too.
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","params":[1],"id":2})");
  CAF_REQUIRE_EQUAL(api->size(), 4u);
  CAF_CHECK_EQUAL(member(api->frame(3), {"error", "code"}), "-32602");
  from_caller(R"({"jsonrpc":"2.0","method":"listValues","params":{},"id":3})");
  CAF_REQUIRE_EQUAL(api->size(), 5u);
  CAF_CHECK_EQUAL(member(api->frame(4), {"error", "code"}), "-32602");
  from_caller(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":""},"id":4})");
  CAF_REQUIRE_EQUAL(api->size(), 6u);
  CAF_CHECK_EQUAL(member(api->frame(5), {"error", "code"}), "-32602");
  CAF_CHECK_EQUAL(rt->size(), 0u);
  finish();
}

CAF_TEST(routing errors carry the caller id) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","runtimeId":"nope"},"id":11})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "11");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "5");
  CAF_CHECK_EQUAL(member_str(api->frame(0), {"error", "message"}), "Runtime nope not found");
  // Explicit runtimeId that exists.
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","params":{"runtimeId":"rt1"},"id":12})");
  CAF_CHECK_EQUAL(rt->size(), 1u);
  from_runtime(R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  // Once the runtime is gone there is no runtime at all.
  caf::anon_send(conn, closed_atom_v, std::string{"gone"});
  sched.run();
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":13})");
  CAF_CHECK_EQUAL(member(api->last(), {"id"}), "13");
  CAF_CHECK_EQUAL(member(api->last(), {"error", "data", "code"}), "14");
  from_caller(R"({"jsonrpc":"2.0","method":"listRuntimes","id":14})");
  CAF_CHECK_EQUAL(api->last(), R"({"jsonrpc":"2.0","result":{"runtimes":[]},"id":14})");
  finish();
}

CAF_TEST(calls follow the routes the directory publishes) {
  // A copy: the macros below keep references to what they compare.
  auto routes = [&] { return board->current()->entries; };
  auto now = routes();
  CAF_REQUIRE_EQUAL(now.size(), 1u);
  CAF_CHECK_EQUAL(now[0].runtime_id, "rt1");
  CAF_CHECK(caf::actor_cast<caf::actor>(now[0].conn) == conn);
  auto rt2 = make_fake_transport("127.0.0.1:40002");
  auto conn2 = spawn_connection(rt2, dir);
  send_frame(conn2, register_frame("rt2"));
  rt2->clear();
  CAF_REQUIRE_EQUAL(routes().size(), 2u);
  // Without a runtimeId the most recent runtime takes the call.
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":1})");
  CAF_CHECK_EQUAL(rt2->size(), 1u);
  CAF_CHECK_EQUAL(rt->size(), 0u);
  // rt1 registering on the second socket replaces it in place once rt1's
  // socket misses the liveness ping (and that socket's old id, rt2, goes
  // away: one id per connection).
  send_frame(conn2, register_frame("rt1"));
  advance_time(std::chrono::seconds(2));
  sched.run();
  now = routes();
  CAF_REQUIRE_EQUAL(now.size(), 1u);
  CAF_CHECK_EQUAL(now[0].runtime_id, "rt1");
  CAF_CHECK(caf::actor_cast<caf::actor>(now[0].conn) == conn2);
  // That socket closing takes the id with it.
  caf::anon_send(conn2, closed_atom_v, std::string{"gone"});
  sched.run();
  CAF_CHECK(routes().empty());
  now.clear();
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","params":{"runtimeId":"rt1"},"id":2})");
  CAF_CHECK_EQUAL(member(api->last(), {"id"}), "2");
  CAF_CHECK_EQUAL(member_str(api->last(), {"error", "message"}), "Runtime rt1 not found");
  finish();
}

CAF_TEST(a connection that ends between routing and the call fails the call) {
  // The published routes still name the connection when it is already gone:
  // the hand-off is refused and the caller is told, not left waiting.
  route_table stale = *board->current();
  stop(conn, caf::exit_reason::user_shutdown);
  board->publish(stale);
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x"},"id":5})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "5");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "14");
  CAF_CHECK(contains(member_str(api->frame(0), {"error", "message"}), "connection closed"));
  CAF_CHECK(session_state().calls.empty());
  board->publish({});
  finish();
}

CAF_TEST(hand-offs leave no timer behind) {
  // A run without a deadline, answered: nothing may stay in the clock (a
  // request timeout would hold the caller until it fired, call_path.hpp).
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","timeoutMs":0},"id":1})");
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"result", "result"}), "1");
  CAF_CHECK_EQUAL(sched.clock().schedule().size(), 0u);
  finish();
}

CAF_TEST(a runtime that disconnects fails the run for the caller) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x"},"id":21})");
  caf::anon_send(conn, closed_atom_v, std::string{"gone"});
  sched.run();
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "21");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "14");
  CAF_CHECK_EQUAL(member_str(api->frame(0), {"error", "message"}),
                  "Runtime rt1 connection closed before the response was received (runAction)");
  CAF_CHECK(session_state().calls.empty());
  finish();
}

CAF_TEST(a run times out with timeoutMs) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/slow","timeoutMs":250},"id":31})");
  from_runtime(trace_state(R"("1")", "t-slow"));
  CAF_CHECK_EQUAL(advance_time(249ms), 0u);
  sched.run();
  CAF_CHECK_EQUAL(api->size(), 1u); // the run state
  CAF_CHECK_EQUAL(advance_time(1ms), 1u);
  sched.run();
  CAF_REQUIRE_EQUAL(api->size(), 2u);
  CAF_CHECK_EQUAL(member(api->frame(1), {"id"}), "31");
  CAF_CHECK_EQUAL(member(api->frame(1), {"error", "data", "code"}), "4");
  CAF_CHECK_EQUAL(member_str(api->frame(1), {"error", "message"}),
                  "Request to runtime rt1 timed out after 250 ms (runAction)");
  // The runtime is asked to stop the run.
  CAF_CHECK_EQUAL(rt->last(),
                  R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-slow"},"id":"2"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"1"})"); // too late: dropped
  CAF_CHECK_EQUAL(api->size(), 2u);
  from_runtime(R"({"jsonrpc":"2.0","result":{"message":"Action cancelled"},"id":"2"})");
  finish();
}

CAF_TEST(the session policy timeout applies to list calls) {
  stop(sess, caf::exit_reason::user_shutdown);
  api = make_fake_transport("127.0.0.1:50002");
  call_policy policy;
  policy.request_timeout = 3s;
  sess = spawn_session(api, dir, policy);
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":1})");
  CAF_CHECK_EQUAL(advance_time(3s), 1u);
  sched.run();
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "4");
  finish();
}

CAF_TEST(a closed caller socket ends the session and cancels its runs) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/long"},"id":1})");
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/other"},"id":2})");
  from_runtime(trace_state(R"("1")", "t-long"));
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 1);
  CAF_CHECK_EQUAL(api->size(), 1u); // the run state
  api->clear();
  caf::anon_send(sess, closed_atom_v, std::string{"client went away"});
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK_EQUAL(api->close_calls(), 1);
  // The run with a known trace is cancelled at once.
  auto sent = rt->frames();
  CAF_REQUIRE_EQUAL(sent.size(), 3u);
  CAF_CHECK_EQUAL(sent[2],
                  R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-long"},"id":"3"})");
  // The other one as soon as its trace id arrives.
  from_runtime(trace_state(R"("2")", "t-other"));
  CAF_REQUIRE_EQUAL(rt->size(), 4u);
  CAF_CHECK_EQUAL(member_str(rt->last(), {"params", "traceId"}), "t-other");
  // The runtime winds everything down; nothing is written to the closed socket.
  from_runtime(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"cancelled"},"id":"1"})");
  from_runtime(R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"cancelled"},"id":"2"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"3"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"4"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(api->size(), 0u);
  CAF_CHECK_EQUAL(api->dropped(), 0u);
  finish();
}

CAF_TEST(a shutdown during a call tells the caller) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x"},"id":41})");
  // The supervisor takes the runtime connection down (and with it the
  // pending request) while the caller's socket is still open.
  stop(conn, caf::exit_reason::user_shutdown);
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "41");
  CAF_CHECK_EQUAL(member_str(api->frame(0), {"error", "message"}), "Manager is shutting down");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "14");
  CAF_CHECK(session_state().calls.empty());
  finish();
}

CAF_TEST(a session stopped by the supervisor answers its calls first) {
  from_caller(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x"},"id":51})");
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":"52"})");
  stop(sess, caf::exit_reason::user_shutdown);
  auto frames = api->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 2u);
  std::vector<std::string> ids{member(frames[0], {"id"}), member(frames[1], {"id"})};
  std::sort(ids.begin(), ids.end());
  CAF_CHECK_EQUAL(ids[0], R"("52")");
  CAF_CHECK_EQUAL(ids[1], "51");
  for (auto& f : frames)
    CAF_CHECK_EQUAL(member_str(f, {"error", "message"}), "Manager is shutting down");
  CAF_CHECK_EQUAL(api->close_calls(), 1);
  CAF_CHECK_EQUAL(api->dropped(), 0u);
  // The runs it started are abandoned; the runtime's answers go nowhere.
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"2"})");
  CAF_CHECK_EQUAL(api->size(), 2u);
  finish();
}

CAF_TEST(the frame bridge feeds the session) {
  frame_bridge bridge{sess};
  bridge.on_text(R"({"jsonrpc":"2.0","method":"listRuntimes","id":1})");
  sched.run();
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "1");
  bridge.on_closed("peer went away");
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK_EQUAL(api->close_calls(), 1);
  finish();
}

// CONFORMANCE 25: a listActions result without an `actions` record, or with
// an entry without a string `name`, rejects that caller's request.
CAF_TEST(listActions results are validated) {
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":1})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"notActions":{}},"id":"1"})");
  CAF_CHECK_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->last(), {"id"}), "1");
  CAF_CHECK_EQUAL(member(api->last(), {"result"}), "<missing>");
  CAF_CHECK_NOT_EQUAL(member(api->last(), {"error", "code"}), "<missing>");
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":2})");
  from_runtime(R"({"jsonrpc":"2.0","result":{"actions":{"/flow/x":{"key":"/flow/x"}}},"id":"2"})");
  CAF_CHECK_EQUAL(api->size(), 2u);
  CAF_CHECK_EQUAL(member(api->last(), {"id"}), "2");
  CAF_CHECK_EQUAL(member(api->last(), {"result"}), "<missing>");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
