#define CAF_SUITE bounds

// Issue 11, "every queue bounded", on the actor side: abandoned calls,
// calls in flight per caller, the default run timeout, bidi input held per
// run, and read-side backpressure from actors to sockets.

#include "runtime_frames.hpp"
#include "test_support.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/runtime/bidi_session.hpp"
#include "obs/metrics.hpp"
#include "config/host_config.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

struct bounds_fixture : actor_fixture {
  fake_transport_ptr rt = make_fake_transport("127.0.0.1:40001");  // runtime socket
  fake_transport_ptr api = make_fake_transport("127.0.0.1:50001"); // caller socket
  directory_actor dir = spawn_directory();
  connection_actor conn;
  api_session_actor sess;

  bounds_fixture() {
    connect_runtime(default_connection_options());
  }

  void connect_runtime(connection_options opts) {
    if (conn) {
      stop(conn, caf::exit_reason::user_shutdown);
      rt = make_fake_transport("127.0.0.1:40002"); // the old one is closed
    }
    conn = spawn_connection(rt, dir, std::move(opts));
    send_frame(conn, register_frame("rt1"));
    CAF_REQUIRE_EQUAL(rt->size(), 1u);
    rt->clear();
  }

  void open_session(call_policy policy = {}) {
    sess = spawn_session(api, dir, policy);
  }

  connection_state& conn_state() {
    return deref<connection_actor::stateful_base<connection_state>>(conn).state;
  }

  void from_runtime(std::string text) {
    send_frame(conn, std::move(text));
  }

  void from_caller(std::string text) {
    send_frame(sess, std::move(text));
  }

  void finish() {
    if (sess)
      stop(sess, caf::exit_reason::user_shutdown);
    stop(conn, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
  }
};

std::string run_action(int id, std::string_view extra = {}) {
  return R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x")" + std::string{extra}
         + R"(},"id":)" + std::to_string(id) + "}";
}

std::uint64_t load(const std::atomic<std::uint64_t>& a) {
  return a.load(std::memory_order_relaxed);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(bounds_tests, bounds_fixture)

// -- 1. abandoned calls are forgotten and cancelled -----------------------------

CAF_TEST(calls of a caller that leaves end at once and their runs are cancelled) {
  open_session();
  // A runtime that never answers: one run has reported its trace, one has
  // not, and a listActions waits too.
  from_caller(run_action(1));
  from_caller(run_action(2));
  from_caller(R"({"jsonrpc":"2.0","method":"listActions","id":3})");
  from_runtime(trace_state(R"("1")", "t-1"));
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 3);
  auto abandoned = load(obs::global().abandoned_calls);
  rt->clear();
  api->clear(); // the run state of run 1
  caf::anon_send(sess, closed_atom_v, std::string{"client went away"});
  sched.run();
  // Nothing waits for the runtime any more.
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK_EQUAL(live_delta(actor_kind::caller_session), 0);
  CAF_CHECK(conn_state().pending.empty());
  CAF_CHECK_EQUAL(load(obs::global().abandoned_calls), abandoned + 3);
  // The started run is cancelled now ...
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(rt->frame(0),
                  R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"t-1"},"id":"4"})");
  // ... the other when its trace id shows up, once.
  from_runtime(trace_state(R"("2")", "t-2"));
  from_runtime(trace_state(R"("2")", "t-2"));
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member_str(rt->frame(1), {"params", "traceId"}), "t-2");
  // Late answers (and the cancels' answers) are dropped quietly.
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  from_runtime(R"({"jsonrpc":"2.0","result":{},"id":"4"})");
  CAF_CHECK_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(api->size(), 0u);
  sess = nullptr;
  finish();
}

CAF_TEST(a runtime message over the frame cap fails its own call and the link stays) {
  open_session();
  from_caller(run_action(1));
  from_caller(run_action(2));
  from_caller(run_action(3));
  from_runtime(trace_state(R"("2")", "t-2"));
  rt->clear();
  api->clear();
  auto oversized = [&](std::string head, std::string tail) {
    caf::anon_send(conn, oversized_atom_v, std::move(head), std::move(tail),
                   std::uint64_t{9} << 20);
    sched.run();
  };
  // An answer (Genkit writes "id" last): call 1 fails RESOURCE_EXHAUSTED.
  oversized(R"({"jsonrpc":"2.0","result":{"result":"xxxx)", R"(xxxx"},"id":"1"})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->last(), {"id"}), "1");
  CAF_CHECK_EQUAL(member(api->last(), {"error", "data", "code"}), "8");
  CAF_CHECK(contains(member_str(api->last(), {"error", "message"}), "over the manager's max_frame_bytes"));
  // A chunk of run 2: it fails too, and is cancelled on the runtime.
  oversized(R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"2","chunk":"yyyy)",
            "yyyy\"}}");
  CAF_REQUIRE_EQUAL(api->size(), 2u);
  CAF_CHECK_EQUAL(member(api->last(), {"id"}), "2");
  CAF_CHECK_EQUAL(member(api->last(), {"error", "data", "code"}), "8");
  CAF_REQUIRE_EQUAL(rt->size(), 1u);
  CAF_CHECK_EQUAL(member_str(rt->last(), {"method"}), "cancelAction");
  CAF_CHECK_EQUAL(member_str(rt->last(), {"params", "traceId"}), "t-2");
  // The link stays: call 3 is answered as usual.
  CAF_CHECK_EQUAL(rt->close_calls(), 0);
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":3},"id":"3"})");
  CAF_REQUIRE_EQUAL(api->size(), 3u);
  CAF_CHECK_EQUAL(member(api->last(), {"result", "result"}), "3");
  CAF_CHECK_EQUAL(conn_state().load->current(), 0);
  // A message that belongs to no call closes the link (1009), as before.
  oversized(R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"77","chunk":"z)", "z\"}}");
  CAF_CHECK_EQUAL(rt->close_calls(), 1);
  CAF_CHECK_EQUAL(rt->close_code(), 1009);
  finish();
}

CAF_TEST(what a connection remembers of forgotten calls is bounded) {
  call_policy policy;
  policy.max_calls_per_caller = 0; // no cap
  open_session(policy);
  for (int i = 1; i <= 5000; ++i)
    caf::anon_send(sess, frame_atom_v, run_action(i));
  sched.run();
  caf::anon_send(sess, closed_atom_v, std::string{"gone"});
  sched.run();
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_REQUIRE(conn_state().extra != nullptr);
  CAF_CHECK_LESS_OR_EQUAL(conn_state().extra->forgotten.size(), 4096u);
  CAF_CHECK_EQUAL(conn_state().extra->forgotten.size(), conn_state().extra->forgotten_order.size());
  sess = nullptr;
  finish();
}

// -- 2. calls in flight per caller ------------------------------------------------

CAF_TEST(a session over max_calls_per_caller gets RESOURCE_EXHAUSTED) {
  call_policy policy;
  policy.max_calls_per_caller = 2;
  open_session(policy);
  auto refused = load(obs::global().calls_over_cap);
  from_caller(run_action(1));
  from_caller(run_action(2));
  from_caller(run_action(3));
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "3");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "8");
  CAF_CHECK_EQUAL(member_str(api->frame(0), {"error", "message"}),
                  "Too many calls in flight from this connection: max_calls_per_caller is 2; "
                  "wait for some to finish");
  CAF_CHECK_EQUAL(load(obs::global().calls_over_cap), refused + 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 2);
  // One finishes: there is room again.
  from_runtime(R"({"jsonrpc":"2.0","result":{"result":1},"id":"1"})");
  api->clear();
  from_caller(run_action(4));
  CAF_CHECK_EQUAL(api->size(), 0u);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 2);
  finish();
}

// -- 3. runs have a default timeout -----------------------------------------------

CAF_TEST(runs time out after five minutes unless timeoutMs says otherwise) {
  CAF_CHECK(call_policy{}.run_timeout == caf::timespan{5min});
  config::host_config cfg;
  std::map<std::string, config::setting_value> eff;
  std::string err;
  CAF_REQUIRE(config::resolve_settings(cfg, {}, {}, eff, err));
  CAF_CHECK_EQUAL(eff.at("run_timeout").value, "5m");
  open_session();
  from_caller(run_action(1));
  from_caller(run_action(2, R"(,"timeoutMs":0)"));
  CAF_CHECK_EQUAL(advance_time(5min), 1u);
  sched.run();
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "1");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "4");
  // timeoutMs 0 still means none.
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 1);
  finish();
}

// -- 4. bidi input held per run ---------------------------------------------------

CAF_TEST(input held for a run that has not started is capped in bytes) {
  auto opts = default_connection_options();
  opts.max_bidi_input_bytes = 10;
  connect_runtime(opts);
  open_session();
  auto overflows = load(obs::global().bidi_input_overflows);
  from_caller(run_action(1, R"(,"streamInput":true)"));
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":1,"chunk":"1234"}})");
  CAF_CHECK_EQUAL(api->size(), 0u);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 1);
  // 6 + 6 bytes: over the cap. The run fails and is forgotten.
  from_caller(R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":1,"chunk":"5678"}})");
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"id"}), "1");
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "8");
  CAF_CHECK(contains(member_str(api->frame(0), {"error", "message"}), "max_bidi_input_bytes (10 bytes)"));
  CAF_CHECK_EQUAL(load(obs::global().bidi_input_overflows), overflows + 1);
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK(conn_state().pending.empty());
  // Nothing of the input went to the runtime; the run is cancelled once it starts.
  CAF_CHECK_EQUAL(rt->size(), 1u); // the runAction
  from_runtime(trace_state(R"("1")", "t-1"));
  CAF_REQUIRE_EQUAL(rt->size(), 2u);
  CAF_CHECK_EQUAL(member(rt->frame(1), {"method"}), R"("cancelAction")");
  finish();
}

CAF_TEST(input waiting for a route counts against the same cap) {
  call_policy policy;
  policy.max_bidi_input_bytes = 10;
  open_session(policy);
  // All three frames are in the mailbox before the session routes the call.
  caf::anon_send(sess, frame_atom_v, run_action(1, R"(,"streamInput":true)"));
  caf::anon_send(sess, frame_atom_v,
                 std::string{R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":1,"chunk":"1234"}})"});
  caf::anon_send(sess, frame_atom_v,
                 std::string{R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":1,"chunk":"5678"}})"});
  sched.run();
  CAF_REQUIRE_EQUAL(api->size(), 1u);
  CAF_CHECK_EQUAL(member(api->frame(0), {"error", "data", "code"}), "8");
  CAF_CHECK_EQUAL(live_delta(actor_kind::pending_request), 0);
  CAF_CHECK(deref<std::remove_pointer_t<api_session_ptr>>(sess).state.calls.empty());
  finish();
}

CAF_TEST(the runtime side caps input an action has not read yet) {
  auto cancel = std::make_shared<actions::cancel_flag>();
  auto q = std::make_shared<actions::input_queue>(*cancel);
  auto s = sys.spawn(bidi_session, q, nullptr, std::size_t{10});
  auto error = std::make_shared<std::string>();
  auto run = sys.spawn([error](caf::event_based_actor*) -> caf::behavior {
    return {[error](input_error_atom, std::string& msg) { *error = std::move(msg); }};
  });
  sched.run();
  caf::anon_send(s, run);
  caf::anon_send(s, input_atom_v, std::string{R"("1234")"});
  sched.run();
  CAF_CHECK_EQUAL(q->held_bytes(), 6u);
  caf::anon_send(s, input_atom_v, std::string{R"("5678")"});
  sched.run();
  CAF_CHECK(q->ended());
  CAF_CHECK(error->starts_with("RESOURCE_EXHAUSTED: "));
  CAF_CHECK_EQUAL(q->held_bytes(), 6u);
  bool ended = false;
  CAF_CHECK(q->try_next(ended).has_value());
  CAF_CHECK_EQUAL(q->held_bytes(), 0u);
  CAF_CHECK(!q->try_next(ended).has_value() && ended);
  stop(s);
  stop(run);
  finish();
}

// -- 5. read-side backpressure ----------------------------------------------------

CAF_TEST(a socket stops being read while its actor is behind) {
  auto window = with_read_window(api, 4);
  sess = sys.spawn(api_session, window, door(dir));
  sched.run();
  frame_bridge bridge{sess, window};
  auto& w = dynamic_cast<windowed_transport&>(*window);
  auto pauses = load(obs::global().read_pauses);
  for (int i = 1; i <= 3; ++i)
    bridge.on_text(R"({"jsonrpc":"2.0","method":"listRuntimes","id":)" + std::to_string(i) + "}");
  CAF_CHECK(!api->paused());
  CAF_CHECK_EQUAL(w.unread(), 3u);
  bridge.on_text(R"({"jsonrpc":"2.0","method":"listRuntimes","id":4})");
  CAF_CHECK(api->paused());
  CAF_CHECK_EQUAL(load(obs::global().read_pauses), pauses + 1);
  CAF_CHECK_EQUAL(obs::global().read_paused_sockets.load(), 1);
  // The session works through its backlog: down to half, reading resumes.
  sched.prioritize(sess);
  sched.run_once();
  CAF_CHECK_EQUAL(w.unread(), 3u);
  CAF_CHECK(api->paused());
  sched.prioritize(sess);
  sched.run_once();
  CAF_CHECK_EQUAL(w.unread(), 2u);
  CAF_CHECK(!api->paused());
  CAF_CHECK_EQUAL(obs::global().read_paused_sockets.load(), 0);
  sched.run();
  CAF_CHECK_EQUAL(w.unread(), 0u);
  CAF_CHECK_EQUAL(api->size(), 4u); // every frame was answered
  bridge.on_closed("gone");
  sched.run();
  sess = nullptr;
  finish();
}

CAF_TEST(runtime connections acknowledge their frames too) {
  auto window = with_read_window(rt, 2);
  stop(conn, caf::exit_reason::user_shutdown);
  conn = sys.spawn(runtime_connection, window, dir, default_connection_options());
  sched.run();
  frame_bridge bridge{conn, window};
  bridge.on_text(R"({"jsonrpc":"2.0","result":{},"id":"98"})");
  bridge.on_text(R"({"jsonrpc":"2.0","result":{},"id":"99"})");
  CAF_CHECK(rt->paused());
  sched.run();
  CAF_CHECK(!rt->paused());
  CAF_CHECK_EQUAL(dynamic_cast<windowed_transport&>(*window).unread(), 0u);
  finish();
}

CAF_TEST(a windowed socket still answers liveness probes) {
  // The runtime id takeover probe pings the transport the actor holds: the
  // window must pass it on, and a paused socket (its peer just sent more than
  // its actor took) counts as alive.
  auto window = with_read_window(rt, 2);
  auto* probe = dynamic_cast<net::pingable*>(window.get());
  CAF_REQUIRE(probe != nullptr);
  int pongs = 0;
  probe->ping([&] { ++pongs; });
  CAF_CHECK_EQUAL(rt->pings(), 1);
  CAF_CHECK_EQUAL(pongs, 0);
  rt->answer_pings();
  CAF_CHECK_EQUAL(pongs, 1);
  auto& w = dynamic_cast<windowed_transport&>(*window);
  w.frame_handed();
  w.frame_handed();
  CAF_CHECK(rt->paused());
  probe->ping([&] { ++pongs; });
  CAF_CHECK_EQUAL(pongs, 2);
  CAF_CHECK_EQUAL(rt->pings(), 1);
  w.frame_processed();
  w.frame_processed();
  CAF_CHECK(!rt->paused());
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
