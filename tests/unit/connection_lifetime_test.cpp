#define CAF_SUITE runtime_connection_lifetime

// The runtime_connection suite continued: how its requests end (the socket
// closing, the actors dying, deadlines, cancels) and bidi input.

#include "test_support.hpp"

#include "actors/dispatch/pending_request.hpp"
#include "actors/dispatch/runtime_connection.hpp"

#include <algorithm>

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(connection_lifetime_tests, connection_fixture)

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
  // Its caller does not monitor the request (call_handle::answers_at_end):
  // the request answers as it ends.
  auto& ev = events(caller);
  CAF_REQUIRE_EQUAL(ev.size(), 1u);
  CAF_CHECK_EQUAL(ev[0].kind, "done");
  CAF_CHECK_EQUAL(ev[0].tag, 1u);
  CAF_CHECK(!ev[0].ok);
  CAF_CHECK_EQUAL(member_str(ev[0].text, {"message"}), "Manager is shutting down");
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
  // Its caller is told, without a monitor.
  CAF_REQUIRE_EQUAL(events(caller).size(), 1u);
  CAF_CHECK(contains(render(events(caller)), "done 1 failed"));
  CAF_CHECK(contains(events(caller)[0].text, "the request ended unexpectedly"));
  events(caller).clear();
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

CAF_TEST(a caller that dies aborts its own calls and no others) {
  register_runtime();
  auto other = spawn_probe();
  call(1, "runAction", R"({"key":"/flow/x"})");
  call(2, "runAction", R"({"key":"/flow/x"})");
  caf::send_as(other, conn, call_atom_v, make_call(7, "runAction", R"({"key":"/flow/y"})"),
               caf::actor_cast<caller_actor>(other));
  sched.run();
  CAF_REQUIRE_EQUAL(events(other).size(), 1u); // its call's actor
  events(other).clear();
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-1"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"2","state":{"traceId":"t-2"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"3","state":{"traceId":"t-3"}}})");
  rt->clear();
  stop(caller, caf::exit_reason::user_shutdown);
  // Both of its runs are cancelled; the other caller's is not.
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  std::vector<std::string> cancelled{member_str(rt->frame(0), {"params", "traceId"}),
                                     member_str(rt->frame(1), {"params", "traceId"})};
  std::sort(cancelled.begin(), cancelled.end());
  CAF_CHECK_EQUAL(cancelled, (std::vector<std::string>{"t-1", "t-2"}));
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":"y"},"id":"3"})");
  CAF_CHECK_EQUAL(render(events(other)), "trace 7 t-3 | done 7 ok {\"result\":\"y\"}");
  stop(other);
  finish();
}

CAF_TEST(the connection watches a caller not its calls and not after its last) {
  register_runtime();
  call(1, "listActions");
  call(2, "listActions");
  call(3, "listActions");
  auto watched = [&] {
    return deref<runtime_connection_actor>(conn).state.callers.calls_of(caller.address());
  };
  CAF_CHECK_EQUAL(watched(), 3u);
  CAF_CHECK_EQUAL(deref<runtime_connection_actor>(conn).state.callers.size(), 1u);
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"1"})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"2"})");
  CAF_CHECK_EQUAL(watched(), 1u);
  // One call still open: the caller's end reaches the connection, which
  // abandons that call.
  caf::anon_send_exit(caller, caf::exit_reason::user_shutdown);
  expect((caf::exit_msg), to(caller));
  expect((caf::down_msg), from(caller).to(conn));
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"3"})");
  // Its last call answered: the connection watches it no more.
  caller = spawn_probe();
  call(4, "listActions");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"actions":{}},"id":"4"})");
  CAF_CHECK(deref<runtime_connection_actor>(conn).state.callers.empty());
  caf::anon_send_exit(caller, caf::exit_reason::user_shutdown);
  expect((caf::exit_msg), to(caller));
  CAF_CHECK(!sched.has_job());
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
