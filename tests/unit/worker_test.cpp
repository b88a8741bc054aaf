#define CAF_SUITE iii_worker

#include "iii_fixture.hpp"
#include "test_support.hpp"

#include "actors/iii/function_registry.hpp"
#include "actors/iii/invocation.hpp"
#include "actors/iii/worker_connection.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

/// Two iii workers on one registry: `caller` (transport ta) calls functions
/// that `executor` (transport tb) registered.
struct worker_fixture : iii_fixture {
  fake_transport_ptr ta = make_fake_transport("127.0.0.1:41001");
  fake_transport_ptr tb = make_fake_transport("127.0.0.1:41002");
  worker_connection_actor caller;
  worker_connection_actor executor;
  std::string caller_id;
  std::string executor_id;

  worker_fixture() {
    caller = spawn_worker(ta, opts());
    executor = spawn_worker(tb, opts());
    caller_id = member_str(ta->frame(0), {"worker_id"});
    executor_id = member_str(tb->frame(0), {"worker_id"});
    ta->clear();
    tb->clear();
  }

  void register_greet() {
    send_frame(executor, R"({"type":"registerfunction","id":"greet","description":"hi"})");
  }

  /// The caller invokes `fn`; returns the invokefunction frame the executor got.
  std::string invoke(const std::string& fn, const std::string& data = R"({"name":"x"})") {
    send_frame(caller, R"({"type":"invokefunction","invocation_id":"c-1","function_id":")" + fn
                         + R"(","data":)" + data + "}");
    return tb->size() ? tb->last() : std::string{"<no frame>"};
  }

  void finish() {
    stop(caller, caf::exit_reason::user_shutdown);
    stop(executor, caf::exit_reason::user_shutdown);
    stop_iii_and_check();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(worker_tests, worker_fixture)

CAF_TEST(workerregistered is the first frame) {
  auto t = make_fake_transport();
  auto w = spawn_worker(t, {});
  CAF_REQUIRE_EQUAL(t->size(), 1u);
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"type"}), "workerregistered");
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"worker_id"}).size(), 36u);
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"reattach_token"}).size(), 36u);
  stop(w, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(an invocation round trip adds _caller_worker_id and answers with the caller id) {
  register_greet();
  auto frame = invoke("greet");
  CAF_CHECK_EQUAL(member_str(frame, {"type"}), "invokefunction");
  CAF_CHECK_EQUAL(member_str(frame, {"function_id"}), "greet");
  CAF_CHECK_EQUAL(member_str(frame, {"data", "_caller_worker_id"}), caller_id);
  CAF_CHECK_EQUAL(member_str(frame, {"data", "name"}), "x");
  CAF_CHECK_EQUAL(live(actor_kind::invocation), iii_at_start[2] + 1);
  auto id = member_str(frame, {"invocation_id"});
  send_frame(executor, R"({"type":"invocationresult","invocation_id":")" + id
                         + R"(","function_id":"greet","result":{"ok":1}})");
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"type"}), "invocationresult");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"invocation_id"}), "c-1");
  CAF_CHECK_EQUAL(member(ta->last(), {"result"}), R"({"ok":1})");
  CAF_CHECK_EQUAL(live(actor_kind::invocation), iii_at_start[2]);
  finish();
}

CAF_TEST(an answer from another connection is not taken) {
  register_greet();
  auto id = member_str(invoke("greet"), {"invocation_id"});
  send_frame(caller, R"({"type":"invocationresult","invocation_id":")" + id
                       + R"(","function_id":"greet","result":1})");
  CAF_CHECK_EQUAL(ta->size(), 0u);
  CAF_CHECK_EQUAL(live(actor_kind::invocation), iii_at_start[2] + 1);
  finish();
}

CAF_TEST(an unknown function is function_not_found) {
  invoke("nope");
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "function_not_found");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "message"}), "Function nope not found");
  finish();
}

CAF_TEST(a void call gets no answer) {
  send_frame(caller, R"({"type":"invokefunction","function_id":"nope","action":{"type":"void"}})");
  CAF_CHECK_EQUAL(ta->size(), 0u);
  finish();
}

CAF_TEST(an executor that drops stops its invocations) {
  register_greet();
  invoke("greet");
  caf::anon_send(executor, closed_atom_v, std::string{"closed by peer"});
  sched.run();
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"invocation_id"}), "c-1");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "invocation_stopped");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "message"}), "Invocation stopped");
  CAF_CHECK_EQUAL(tb->close_calls(), 1);
  // Its registrations went with it.
  invoke("greet");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "function_not_found");
  finish();
}

CAF_TEST(an invocation times out and the late answer is dropped) {
  register_greet();
  auto id = member_str(invoke("greet"), {"invocation_id"});
  CAF_CHECK_EQUAL(advance_time(2s - 1ms), 0u);
  CAF_CHECK_EQUAL(ta->size(), 0u);
  CAF_CHECK_EQUAL(advance_time(1ms), 1u);
  sched.run();
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "TIMEOUT");
  CAF_CHECK_EQUAL(live(actor_kind::invocation), iii_at_start[2]);
  send_frame(executor, R"({"type":"invocationresult","invocation_id":")" + id
                         + R"(","function_id":"greet","result":1})");
  CAF_CHECK_EQUAL(ta->size(), 1u);
  finish();
}

CAF_TEST(an answered invocation leaves nothing that keeps its actor) {
  // A delayed message per invocation would hold it (and its memory) until
  // the deadline, long after the answer.
  register_greet();
  auto frame = invoke("greet");
  auto id = member_str(frame, {"invocation_id"});
  auto& st = deref<worker_connection_actor::stateful_base<worker_connection_state>>(executor).state;
  CAF_REQUIRE(st.executing.find(id) != nullptr);
  auto weak = st.executing.find(id)->address();
  CAF_CHECK_EQUAL(st.executing.deadlines(), 1u);
  send_frame(executor, R"({"type":"invocationresult","invocation_id":")" + id
                         + R"(","function_id":"greet","result":1})");
  CAF_CHECK(!caf::actor_cast<caf::actor>(weak));
  CAF_CHECK_EQUAL(st.executing.deadlines(), 0u);
  // The connection's wake-up still fires, and finds nothing to expire.
  CAF_CHECK_EQUAL(advance_time(2s), 1u);
  sched.run();
  CAF_CHECK_EQUAL(ta->size(), 1u);
  finish();
}

CAF_TEST(a caller that goes away abandons its invocation) {
  register_greet();
  invoke("greet");
  stop(caller);
  CAF_CHECK_EQUAL(live(actor_kind::invocation), iii_at_start[2]);
  finish();
}

CAF_TEST(reattach retires the old connection and its registrations) {
  register_greet();
  // tb's token was in its workerregistered frame (cleared by the fixture).
  using registry_base = function_registry_actor::stateful_base<function_registry_state>;
  auto token = deref<registry_base>(reg).state.workers.at(executor_id).token;
  auto tc = make_fake_transport();
  auto fresh = spawn_worker(tc, {});
  invoke("greet");
  send_frame(fresh, R"({"type":"reattach","previous_worker_id":")" + executor_id
                      + R"(","reattach_token":")" + token + R"("})");
  CAF_CHECK(tb->close_calls() >= 1);
  // Its invocation in flight stops.
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "invocation_stopped");
  invoke("greet");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "function_not_found");
  // A wrong token changes nothing.
  send_frame(fresh, R"({"type":"registerfunction","id":"greet"})");
  auto td = make_fake_transport();
  auto other = spawn_worker(td, {});
  send_frame(other, R"({"type":"reattach","previous_worker_id":")"
                      + member_str(tc->frame(0), {"worker_id"}) + R"(","reattach_token":"x"})");
  CAF_CHECK_EQUAL(tc->close_calls(), 0);
  stop(fresh, caf::exit_reason::user_shutdown);
  stop(other, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(triggers are parked until their type has a provider) {
  send_frame(caller, R"({"type":"registerfunction","id":"on_tick"})");
  send_frame(caller, R"({"type":"registertrigger","id":"t1","trigger_type":"tick","function_id":"on_tick","config":{"n":1}})");
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3] + 1);
  CAF_CHECK_EQUAL(tb->size(), 0u);
  send_frame(executor, R"({"type":"registertriggertype","id":"tick","description":"d"})");
  CAF_REQUIRE_EQUAL(tb->size(), 1u);
  CAF_CHECK_EQUAL(member_str(tb->last(), {"type"}), "registertrigger");
  CAF_CHECK_EQUAL(member_str(tb->last(), {"id"}), "t1");
  CAF_CHECK_EQUAL(member(tb->last(), {"config"}), R"({"n":1})");
  // The provider rejects it: the binder is told.
  send_frame(executor, R"({"type":"triggerregistrationresult","id":"t1","trigger_type":"tick","function_id":"on_tick","error":{"code":"trigger_registration_failed","message":"no"}})");
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"type"}), "triggerregistrationresult");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "message"}), "no");
  // The binder leaves: the binding ends.
  stop(caller);
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3]);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
