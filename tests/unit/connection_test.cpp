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

// -- connection closed ----------------------------------------------------------

CAF_TEST(closing fails every pending request and ends the connection) {
  register_runtime();
  call(1, "listActions");
  call(2, "runAction", R"({"key":"/flow/x"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_connection), 1);
  CAF_CHECK_EQUAL(rt->close_calls(), 0);
  caf::anon_send(conn, closed_atom_v, std::string{"peer closed"});
  sched.run();
  auto& ev = events(caller);
  CAF_REQUIRE_EQUAL(ev.size(), 2u);
  for (auto& e : ev) {
    CAF_CHECK_EQUAL(e.kind, "done");
    CAF_CHECK(!e.ok);
    CAF_CHECK(contains(member_str(e.text, {"message"}), "connection closed"));
    CAF_CHECK(contains(member_str(e.text, {"message"}), "rt1"));
    CAF_CHECK_EQUAL(member(e.text, {"code"}), "-32000");
    CAF_CHECK_EQUAL(member(e.text, {"data", "code"}), "14");
  }
  CAF_CHECK(contains(member_str(ev[0].text, {"message"}), "(listActions)")
            || contains(member_str(ev[1].text, {"message"}), "(listActions)"));
  // The actor is gone, the socket was closed by the attach functor, and the
  // directory forgot the runtime.
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_connection), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(rt->close_calls(), 1);
  CAF_CHECK_EQUAL(rt->close_code(), 1001);
  CAF_CHECK(!std::get<0>(route("rt1")));
  finish();
}

CAF_TEST(a killed connection closes its socket and takes its requests along) {
  register_runtime();
  call(1, "listActions");
  stop(conn, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(rt->close_calls(), 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_connection), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK(!std::get<0>(route("rt1")));
  finish();
}

CAF_TEST(a connection killed outright still ends its requests) {
  // Calls are not linked to their connection (call_table.hpp says why): its
  // call table ends them when CAF destroys the connection's state.
  register_runtime();
  call(1, "listActions");
  call(2, "listActions");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 2);
  stop(conn, caf::exit_reason::kill);
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_connection), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST(a request that dies on its own leaves the connection serving) {
  register_runtime();
  auto p = call(1, "listActions");
  call(2, "listActions");
  stop(p, caf::exit_reason::kill);
  CAF_CHECK_EQUAL(live_delta(actor_kind::runtime_connection), 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 1);
  // Its answer finds no one and is dropped; the other call is answered.
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"2"})");
  CAF_CHECK(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.empty());
  CAF_CHECK(contains(render(events(caller)), R"(done 2 ok {"actions":{}})"));
  finish();
}

// -- timeouts -------------------------------------------------------------------

CAF_TEST(a request times out on the test clock) {
  register_runtime();
  call(3, "listActions", {}, 5s);
  CAF_CHECK_EQUAL(advance_time(5s - 1ms), 0u);
  sched.run();
  CAF_CHECK(events(caller).empty());
  CAF_CHECK_EQUAL(advance_time(1ms), 1u);
  sched.run();
  auto& ev = events(caller);
  CAF_REQUIRE_EQUAL(ev.size(), 1u);
  CAF_CHECK_EQUAL(ev[0].kind, "done");
  CAF_CHECK_EQUAL(ev[0].tag, 3u);
  CAF_CHECK(!ev[0].ok);
  CAF_CHECK_EQUAL(member(ev[0].text, {"data", "code"}), "4");
  CAF_CHECK_EQUAL(member_str(ev[0].text, {"message"}),
                  "Request to runtime rt1 timed out after 5000 ms (listActions)");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.empty());
  // The late answer is dropped.
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  CAF_CHECK_EQUAL(events(caller).size(), 1u);
  // No cancelAction for a listActions.
  CAF_CHECK_EQUAL(rt->size(), 1u);
  finish();
}

CAF_TEST(an answer before the deadline wins) {
  register_runtime();
  call(3, "listActions", {}, 5s);
  advance_time(4s);
  sched.run();
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  advance_time(2s);
  sched.run();
  CAF_CHECK_EQUAL(render(events(caller)), R"(done 3 ok {"actions":{}})");
  finish();
}

CAF_TEST(an answered request leaves nothing that keeps its actor) {
  // A delayed message per request would hold the pending_request (and its
  // memory) until the deadline, long after the answer.
  register_runtime();
  auto weak = call(3, "listActions", {}, 5min).address();
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  sched.run();
  CAF_CHECK_EQUAL(render(events(caller)), R"(done 3 ok {"actions":{}})");
  CAF_CHECK(!caf::actor_cast<caf::actor>(weak));
  CAF_CHECK_EQUAL(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.deadlines(), 0u);
  // The connection's wake-up still fires, and finds nothing to expire.
  CAF_CHECK_EQUAL(advance_time(5min), 1u);
  sched.run();
  CAF_CHECK_EQUAL(events(caller).size(), 1u);
  finish();
}

CAF_TEST(requests time out in deadline order with one wake-up at a time) {
  register_runtime();
  call(1, "listActions", {}, 3s);
  call(2, "listActions", {}, 1s);
  call(3, "listActions", {}, 2s);
  CAF_CHECK_EQUAL(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.deadlines(), 3u);
  auto done_tags = [&] {
    std::string out;
    for (auto& e : events(caller))
      if (e.kind == "done")
        out += std::to_string(e.tag);
    return out;
  };
  advance_time(1s);
  sched.run();
  CAF_CHECK_EQUAL(done_tags(), "2");
  advance_time(1s);
  sched.run();
  CAF_CHECK_EQUAL(done_tags(), "23");
  // An answer removes its deadline: nothing times out at 3 s.
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  sched.run();
  CAF_CHECK_EQUAL(deref<connection_actor::stateful_base<connection_state>>(conn).state.pending.deadlines(), 0u);
  advance_time(1s);
  sched.run();
  CAF_CHECK_EQUAL(done_tags(), "231");
  CAF_CHECK_EQUAL(member(events(caller).back().text, {"actions"}), "{}");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST(a timed out run is cancelled on the runtime) {
  register_runtime();
  call(4, "runAction", R"({"key":"/flow/slow"})", 2s);
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-slow"}}})");
  advance_time(2s);
  sched.run();
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(rt->frame(1),
                  R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-slow"},"id":"2"})");
  CAF_CHECK_EQUAL(member(events(caller).back().text, {"data", "code"}), "4");
  // The cancel is fire and forget: nothing waits for its answer.
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"message":"Action cancelled"},"id":"2"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(events(caller).size(), 2u); // trace + done
  finish();
}

// -- abandoned runs -------------------------------------------------------------

CAF_TEST(a run abandoned after its trace is known is cancelled) {
  register_runtime();
  call(1, "runAction", R"({"key":"/flow/x"})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-9"}}})");
  CAF_CHECK_EQUAL(render(events(caller)), "trace 1 t-9");
  stop(caller, caf::exit_reason::user_shutdown);
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(rt->frame(1),
                  R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-9"},"id":"2"})");
  // The runtime answers both; nothing is left behind.
  send_frame(conn, R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"Action was cancelled","data":{"code":1}},"id":"1"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"message":"Action cancelled"},"id":"2"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(rt->size(), 2u);
  finish();
}

CAF_TEST(a run abandoned before its trace is known is cancelled when it arrives) {
  register_runtime();
  call(1, "runAction", R"({"key":"/flow/x"})");
  stop(caller, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(rt->size(), 1u);
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-late"}}})");
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member(rt->frame(1), {"method"}), R"("cancelAction")");
  CAF_CHECK_EQUAL(member_str(rt->frame(1), {"params", "traceId"}), "t-late");
  // Only once, even if the state repeats.
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-late"}}})");
  CAF_CHECK_EQUAL(rt->size(), 2u);
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":"2"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

CAF_TEST(abort abandons the call) {
  register_runtime();
  auto p = call(1, "runAction", R"({"key":"/flow/x"})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-a"}}})");
  caf::send_as(caller, p, abort_atom_v, std::uint64_t{0});
  sched.run();
  CAF_CHECK_EQUAL(member_str(rt->last(), {"params", "traceId"}), "t-a");
  // The caller hears nothing more about the call.
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  CAF_CHECK_EQUAL(render(events(caller)), "trace 1 t-a");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{},"id":"2"})");
  finish();
}

CAF_TEST(a list call abandoned by its caller is not cancelled) {
  register_runtime();
  call(1, "listActions");
  stop(caller, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(rt->size(), 1u);
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  finish();
}

// -- bidi input -------------------------------------------------------------------

CAF_TEST(input to a pending request is written with the wire id) {
  register_runtime();
  call(1, "listActions");
  auto p = call(2, "runAction", R"({"key":"/flow/bidi","streamInput":true})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"2","state":{"traceId":"t-b"}}})");
  rt->clear();
  caf::send_as(caller, p, input_atom_v, std::uint64_t{0}, std::string{R"({"text":"a"})"});
  caf::send_as(caller, p, input_atom_v, std::uint64_t{0}, std::string{R"("b")"});
  caf::send_as(caller, p, end_input_atom_v, std::uint64_t{0});
  sched.run();
  auto frames = rt->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 3u);
  CAF_CHECK_EQUAL(frames[0],
                  R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"2","chunk":{"text":"a"}}})");
  CAF_CHECK_EQUAL(frames[1],
                  R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"2","chunk":"b"}})");
  CAF_CHECK_EQUAL(frames[2],
                  R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"2"}})");
  finish();
}

// Genkit JS runtimes drop input that arrives before the run reports its
// trace id, so the pending request holds it until then.
CAF_TEST(input before the trace id is held and then sent in order) {
  register_runtime();
  auto p = call(1, "runAction", R"({"key":"/flow/bidi","streamInput":true})");
  rt->clear();
  caf::send_as(caller, p, input_atom_v, std::uint64_t{0}, std::string{"1"});
  caf::send_as(caller, p, input_atom_v, std::uint64_t{0}, std::string{"2"});
  sched.run();
  CAF_CHECK_EQUAL(rt->size(), 0u);
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-h"}}})");
  caf::send_as(caller, p, input_atom_v, std::uint64_t{0}, std::string{"3"});
  caf::send_as(caller, p, end_input_atom_v, std::uint64_t{0});
  sched.run();
  auto frames = rt->frames();
  CAF_REQUIRE_EQUAL(frames.size(), 4u);
  CAF_CHECK_EQUAL(frames[0],
                  R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"1","chunk":1}})");
  CAF_CHECK_EQUAL(member(frames[1], {"params", "chunk"}), "2");
  CAF_CHECK_EQUAL(member(frames[2], {"params", "chunk"}), "3");
  CAF_CHECK_EQUAL(frames[3], R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":"1"}})");
  CAF_CHECK_EQUAL(render(events(caller)), "trace 1 t-h");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
