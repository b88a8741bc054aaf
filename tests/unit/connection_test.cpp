#define CAF_SUITE runtime_connection

#include "test_support.hpp"

#include "actors/dispatch/pending_request.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(connection_tests, connection_fixture)

// -- register -----------------------------------------------------------------

CAF_TEST(register replies and enters the directory) {
  send_frame(conn, register_frame("rt1"));
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(rt->frame(0), R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  auto [ok, c, id] = route("rt1");
  CAF_CHECK(ok);
  CAF_CHECK(c == conn);
  CAF_CHECK_EQUAL(id, "rt1");
  auto list = std::get<0>(ask<std::string>(dir, list_atom_v));
  auto v = parse_json(list);
  CAF_REQUIRE(v.is_array() && v.as_array().size() == 1);
  auto entry = boost::json::serialize(v.as_array()[0]);
  CAF_CHECK_EQUAL(member_str(entry, {"id"}), "rt1");
  CAF_CHECK_EQUAL(member(entry, {"pid"}), "4242");
  CAF_CHECK_EQUAL(member_str(entry, {"name"}), member_str(entry, {"id"}));
  CAF_CHECK_EQUAL(member_str(entry, {"reflectionServerUrl"}), "ws://localhost:3100");
  CAF_CHECK_NOT_EQUAL(member(entry, {"timestamp"}), "<missing>");
  CAF_CHECK_EQUAL(deref<connection_actor::stateful_base<connection_state>>(conn).state.runtime_id, "rt1");
  finish();
}

CAF_TEST(register with a numeric id echoes it) {
  send_frame(conn, register_frame("rt1", "17"));
  CAF_CHECK_EQUAL(rt->last(), R"({"jsonrpc":"2.0","result":{},"id":17})");
  finish();
}

CAF_TEST(invalid register params get -32602 and no entry) {
  send_frame(conn, register_frame("rt1", R"("1")", R"("x")"));
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  auto reply = rt->frame(0);
  CAF_CHECK_EQUAL(member(reply, {"id"}), R"("1")");
  CAF_CHECK_EQUAL(member(reply, {"error", "code"}), "-32602");
  CAF_CHECK(contains(member_str(reply, {"error", "message"}), "pid"));
  CAF_CHECK_EQUAL(member(reply, {"result"}), "<missing>");
  auto [ok, c, err] = route("");
  CAF_CHECK(!ok);
  CAF_CHECK_EQUAL(member(err, {"data", "code"}), "14");
  // Missing params, and params that are not an object.
  send_frame(conn, R"({"jsonrpc":"2.0","method":"register","id":"2"})");
  CAF_CHECK_EQUAL(member(rt->last(), {"error", "code"}), "-32602");
  CAF_CHECK_EQUAL(member(rt->last(), {"id"}), R"("2")");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"register","params":[1],"id":"3"})");
  CAF_CHECK_EQUAL(member(rt->last(), {"error", "code"}), "-32602");
  // An invalid register notification gets nothing back.
  rt->clear();
  send_frame(conn, R"({"jsonrpc":"2.0","method":"register","params":{"id":""}})");
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_CHECK(!std::get<0>(route("")));
  finish();
}

CAF_TEST(register as a notification registers without a reply) {
  send_frame(conn, register_frame("rt1", ""));
  CAF_CHECK_EQUAL(rt->size(), 0u);
  auto [ok, c, id] = route("");
  CAF_CHECK(ok);
  CAF_CHECK(c == conn);
  CAF_CHECK_EQUAL(id, "rt1");
  finish();
}

CAF_TEST(registering under another id drops the old one) {
  register_runtime("old");
  send_frame(conn, register_frame("new", R"("2")"));
  CAF_CHECK(!std::get<0>(route("old")));
  CAF_CHECK(std::get<0>(route("new")));
  CAF_CHECK_EQUAL(std::get<0>(ask<std::string>(dir, list_atom_v)).find("\"old\""),
                  std::string::npos);
  finish();
}

// -- bad frames -------------------------------------------------------------------

CAF_TEST(malformed frame gets -32700 with a null id) {
  send_frame(conn, R"({"jsonrpc":"2.0","method":"register",)");
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"error", "code"}), "-32700");
  CAF_CHECK_EQUAL(member(rt->frame(0), {"id"}), "null");
  CAF_CHECK(member_str(rt->frame(0), {"error", "message"}).rfind("Parse error", 0) == 0);
  // The connection carries on.
  rt->clear();
  register_runtime();
  finish();
}

CAF_TEST(unknown method) {
  register_runtime();
  send_frame(conn, R"({"jsonrpc":"2.0","method":"frobnicate","params":{},"id":"9"})");
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"error", "code"}), "-32601");
  CAF_CHECK_EQUAL(member_str(rt->frame(0), {"error", "message"}), "Method not found: frobnicate");
  CAF_CHECK_EQUAL(member(rt->frame(0), {"id"}), R"("9")");
  rt->clear();
  send_frame(conn, R"({"jsonrpc":"2.0","method":"frobnicate","params":{}})");
  CAF_CHECK_EQUAL(rt->size(), 0u);
  finish();
}

// -- calls --------------------------------------------------------------------

CAF_TEST(calls get increasing string ids) {
  register_runtime();
  auto p1 = call(1, "listActions");
  CAF_CHECK_EQUAL(rt->frame(0), R"({"jsonrpc":"2.0","method":"listActions","id":"1"})");
  auto p2 = call(2, "listValues", R"({"type":"defaultModel"})");
  CAF_CHECK_EQUAL(rt->frame(1),
                  R"({"jsonrpc":"2.0","method":"listValues","params":{"type":"defaultModel"},"id":"2"})");
  CAF_CHECK(p1 != p2);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 2);
  CAF_CHECK_EQUAL(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.size(), 2u);
  finish();
}

// What every call of a connection has in common is made once and shared
// (pending_request.hpp); a new runtime id makes a new one for later calls.
CAF_TEST(the calls of a connection share its runtime id and socket) {
  register_runtime("old");
  auto p1 = call(1, "listActions");
  auto p2 = call(2, "runAction", R"({"key":"/flow/x","input":1})");
  auto& a1 = deref<pending_request_actor>(p1).state.args;
  auto& a2 = deref<pending_request_actor>(p2).state.args;
  CAF_REQUIRE(a1.shared != nullptr);
  CAF_CHECK(a1.shared == a2.shared);
  CAF_CHECK_EQUAL(a1.shared->runtime_id, "old");
  auto& cs = deref<connection_actor::stateful_base<connection_state>>(conn).state;
  CAF_CHECK(a1.shared->transport == cs.transport);
  CAF_CHECK(a1.shared->load == cs.load);
  CAF_CHECK_EQUAL(a1.wire_id, 1u);
  CAF_CHECK_EQUAL(a2.wire_id, 2u);
  CAF_CHECK(a1.method == call_method::list_actions);
  CAF_CHECK(a2.method == call_method::run_action);
  CAF_CHECK_EQUAL(a2.action_key, "/flow/x");
  CAF_CHECK_EQUAL(quoted_wire_id(17), R"("17")");
  // The runtime registers again under another id: later calls name it.
  send_frame(conn, register_frame("new", R"("r2")"));
  auto p3 = call(3, "listActions");
  auto& a3 = deref<pending_request_actor>(p3).state.args;
  CAF_CHECK(a3.shared != a1.shared);
  CAF_CHECK_EQUAL(a3.shared->runtime_id, "new");
  CAF_CHECK_EQUAL(a1.shared->runtime_id, "old");
  // A lost connection fails each call naming the runtime it was sent to.
  caf::anon_send(conn, closed_atom_v, std::string{"gone"});
  sched.run();
  auto out = render(events(caller));
  CAF_CHECK(contains(out, "done 1 failed"));
  CAF_CHECK(contains(out, "Runtime old connection closed"));
  CAF_CHECK(contains(out, "Runtime new connection closed"));
  finish();
}

// An idle connection keeps no streams, forgotten ids, drain or probe state:
// made when first needed, and the calls that need them work as before.
CAF_TEST(the seldom parts of a connection are made when needed) {
  register_runtime();
  auto& cs = deref<connection_actor::stateful_base<connection_state>>(conn).state;
  CAF_CHECK(cs.extra == nullptr);
  call(1, "listActions");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  CAF_CHECK_EQUAL(render(events(caller)), R"(done 1 ok {"actions":{}})");
  CAF_CHECK(cs.extra == nullptr);
  // Nothing in flight: drained at once.
  CAF_CHECK(std::get<0>(ask<caf::ok_atom>(conn, drain_atom_v)) == caf::ok_atom_v);
  CAF_CHECK(cs.extra == nullptr);
  // Chunks of a run that is not relayed by the connection, and frames for
  // unknown ids, need none of it either.
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"9","chunk":1}})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":"9"})");
  CAF_CHECK(cs.extra == nullptr);
  // A call given up is remembered there.
  auto p = call(2, "runAction", R"({"key":"/flow/x","input":1})");
  caf::send_as(caller, caf::actor_cast<pending_actor>(p), abort_atom_v, std::uint64_t{0});
  sched.run();
  CAF_REQUIRE(cs.extra != nullptr);
  CAF_CHECK_EQUAL(cs.extra->forgotten.count(R"("2")"), 1u);
  finish();
}

// Held input is made only when input has to wait for the run's trace id.
CAF_TEST(bidi input before the trace id is held then sent in order) {
  register_runtime();
  auto p = call(3, "runAction", R"({"key":"/flow/x","input":1})");
  auto& st = deref<pending_request_actor>(p).state;
  CAF_CHECK(st.held == nullptr);
  rt->clear();
  auto call = caf::actor_cast<pending_actor>(p);
  caf::send_as(caller, call, input_atom_v, std::uint64_t{0}, std::string{R"("a")"});
  caf::send_as(caller, call, input_atom_v, std::uint64_t{0}, std::string{R"("b")"});
  caf::send_as(caller, call, end_input_atom_v, std::uint64_t{0});
  sched.run();
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_REQUIRE(st.held != nullptr);
  CAF_CHECK_EQUAL(st.held->size(), 3u);
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-1"}}})");
  CAF_REQUIRE_EQUAL(rt->size(), 3u);
  CAF_CHECK_EQUAL(member(rt->frame(0), {"method"}), R"("sendInputStreamChunk")");
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "requestId"}), R"("1")");
  CAF_CHECK_EQUAL(member(rt->frame(0), {"params", "chunk"}), R"("a")");
  CAF_CHECK_EQUAL(member(rt->frame(1), {"params", "chunk"}), R"("b")");
  CAF_CHECK_EQUAL(member(rt->frame(2), {"method"}), R"("endInputStream")");
  CAF_CHECK_EQUAL(member(rt->frame(2), {"params", "requestId"}), R"("1")");
  CAF_CHECK(st.held == nullptr);
  finish();
}

CAF_TEST(responses go to the pending request with that id) {
  register_runtime();
  call(10, "listActions");
  call(11, "listValues", R"({"type":"middleware"})");
  call(12, "listActions");
  // Out of order, and one of them an error.
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"values":{}},"id":"2"})");
  send_frame(conn,
             R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"boom","data":{"code":13}},"id":"3"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  CAF_CHECK_EQUAL(render(events(caller)),
                  R"(done 11 ok {"values":{}} | )"
                  R"(done 12 failed {"code":-32000,"message":"boom","data":{"code":13}} | )"
                  R"(done 10 ok {"actions":{}})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.empty());
  // Nothing was written back for responses.
  CAF_CHECK_EQUAL(rt->size(), 3u);
  finish();
}

CAF_TEST(response with an unknown id is ignored) {
  register_runtime();
  call(1, "listActions");
  rt->clear();
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":"99"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":1})"); // numeric: not our "1"
  CAF_CHECK_EQUAL(rt->size(), 0u);
  CAF_CHECK(events(caller).empty());
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 1);
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  CAF_CHECK_EQUAL(render(events(caller)), R"(done 1 ok {"actions":{}})");
  finish();
}

CAF_TEST(run state and chunks are relayed in order) {
  register_runtime();
  call(5, "runAction", R"({"key":"/flow/x","input":1,"stream":true})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-1"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":{"n":1}}})");
  // Go runtimes repeat runActionState per span: only the first counts.
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-1"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":"two"}})");
  // Without a traceId, and for an unknown request: dropped.
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"7","chunk":3}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":"junk"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":3,"telemetry":{"traceId":"t-1"}},"id":"1"})");
  CAF_CHECK_EQUAL(render(events(caller)),
                  R"(trace 5 t-1 | chunk 5 {"n":1} | chunk 5 "two" | )"
                  R"(done 5 ok {"result":3,"telemetry":{"traceId":"t-1"}})");
  // A chunk after the end is dropped.
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":4}})");
  CAF_CHECK_EQUAL(events(caller).size(), 4u);
  // Only the runAction request was ever written.
  CAF_CHECK_EQUAL(rt->size(), 1u);
  finish();
}

// A streaming run's chunks and trace id go from the connection to the caller
// in one hop (not through its pending_request): the same events, in the same
// order, the trace once, nothing after the answer.
CAF_TEST(a streaming run is relayed to its caller by the connection in order) {
  register_runtime();
  auto req = make_call(5, "runAction", R"({"key":"/flow/x","input":1,"stream":true})");
  req.stream = true;
  caf::send_as(caller, conn, call_atom_v, std::move(req), caf::actor_cast<caller_actor>(caller));
  sched.run();
  CAF_REQUIRE_EQUAL(events(caller).size(), 1u);
  events(caller).pop_back(); // the pending_request
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":0}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-1"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":{"n":1}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-2"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":"two"}})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":3},"id":"1"})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":4}})");
  CAF_CHECK_EQUAL(render(events(caller)),
                  R"(chunk 5 0 | trace 5 t-1 | chunk 5 {"n":1} | chunk 5 "two" | done 5 ok {"result":3})");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
