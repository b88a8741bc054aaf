#define CAF_SUITE iii_engine

#include "iii_fixture.hpp"
#include "test_support.hpp"

#include "actors/iii/function_registry.hpp"
#include "actors/iii/invocation.hpp"
#include "actors/iii/worker_connection.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

// The engine side of the iii protocol beyond routing (spec/WORKER_PROTOCOL.md
// 6, 8.2, 8.3, 8.5): engine::* introspection, engine::register_trigger, the
// engine's own trigger types, middleware and session-filtered listings.

namespace {

/// `caller` (ta) calls engine functions and binds; `provider` (tb) registers
/// functions and trigger types.
struct engine_fixture : iii_fixture {
  fake_transport_ptr ta = make_fake_transport("127.0.0.1:41001");
  fake_transport_ptr tb = make_fake_transport("127.0.0.1:41002");
  worker_connection_actor caller;
  worker_connection_actor provider;
  std::string caller_id;
  std::string provider_id;
  std::vector<worker_connection_actor> extra; // more workers, stopped by finish()

  engine_fixture() {
    caller = spawn_worker(ta, opts());
    provider = spawn_worker(tb, opts());
    caller_id = member_str(ta->frame(0), {"worker_id"});
    provider_id = member_str(tb->frame(0), {"worker_id"});
    ta->clear();
    tb->clear();
  }

  /// `caller` (or `who` on `t`) invokes `fn` with `data`: its invocationresult frame.
  std::string call(const std::string& fn, const std::string& data = "{}",
                   const worker_connection_actor& who = {}, const fake_transport_ptr& t = {}) {
    return invoke(who ? who : caller, t ? t : ta, fn, data);
  }

  void finish() {
    for (auto& w : extra)
      stop(w, caf::exit_reason::user_shutdown);
    stop(caller, caf::exit_reason::user_shutdown);
    stop(provider, caf::exit_reason::user_shutdown);
    stop_iii_and_check();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(iii_engine_tests, engine_fixture)

CAF_TEST(engine::workers::info finds a worker by name) {
  send_frame(provider, R"({"type":"invokefunction","function_id":"engine::workers::register","action":{"type":"void"},"data":{"name":"prov","runtime":"node","version":"0.22.1"}})");
  send_frame(provider, R"({"type":"registerfunction","id":"greet","description":"hi"})");
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  send_frame(provider, R"({"type":"registertrigger","id":"t1","trigger_type":"tick","function_id":"greet","config":{}})");
  auto r = call("engine::workers::info", R"({"name":"prov"})");
  CAF_CHECK_EQUAL(member_str(r, {"result", "worker", "id"}), provider_id);
  CAF_CHECK_EQUAL(member_str(r, {"result", "worker", "runtime"}), "node");
  CAF_CHECK_EQUAL(member(r, {"result", "worker", "function_count"}), "1");
  CAF_CHECK_EQUAL(member(r, {"result", "functions"}),
                  R"([{"function_id":"greet","worker_name":"prov","description":"hi"}])");
  CAF_CHECK_EQUAL(member(r, {"result", "trigger_types"}),
                  R"([{"id":"tick","worker_name":"prov","description":"ticks"}])");
  CAF_CHECK(contains(member(r, {"result", "registered_triggers"}), R"("id":"t1")"));
  // By id as well; unknown names and missing arguments are errors.
  CAF_CHECK_EQUAL(member_str(call("engine::workers::info", R"({"name":")" + caller_id + R"("})"),
                             {"result", "worker", "id"}),
                  caller_id);
  auto missing = call("engine::workers::info", R"({"name":"nobody"})");
  CAF_CHECK_EQUAL(member_str(missing, {"error", "code"}), "NOT_FOUND");
  CAF_CHECK_EQUAL(member_str(missing, {"error", "message"}), "Worker nobody not found");
  CAF_CHECK_EQUAL(member_str(call("engine::workers::info", "{}"), {"error", "code"}),
                  "INVALID_ARGUMENTS");
  finish();
}

CAF_TEST(engine::triggers::list and info show the engine types and worker types) {
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  send_frame(caller, R"({"type":"registertrigger","id":"t1","trigger_type":"tick","function_id":"f","config":{}})");
  auto list = call("engine::triggers::list");
  CAF_CHECK_EQUAL(ids_in(member(list, {"result", "triggers"}), "id"),
                  "engine::functions-available engine::workers-available tick ");
  CAF_CHECK_EQUAL(ids_in(member(list, {"result", "triggers"}), "worker_name"),
                  "engine engine " + provider_id + " ");
  CAF_CHECK_EQUAL(member(call("engine::triggers::list", R"({"prefix":"engine::"})"),
                         {"result", "triggers"})
                    .find("tick"),
                  std::string::npos);
  auto info = call("engine::triggers::info", R"({"id":"tick"})");
  CAF_CHECK_EQUAL(member_str(info, {"result", "description"}), "ticks");
  CAF_CHECK_EQUAL(member(info, {"result", "instance_count"}), "1");
  CAF_CHECK_EQUAL(member_str(call("engine::triggers::info", R"({"id":"nope"})"),
                             {"error", "code"}),
                  "NOT_FOUND");
  CAF_CHECK_EQUAL(member_str(call("engine::triggers::info", "{}"), {"error", "code"}),
                  "INVALID_ARGUMENTS");
  // A worker cannot take over the engine's types.
  send_frame(provider, R"({"type":"registertriggertype","id":"engine::workers-available","description":"mine"})");
  CAF_CHECK_EQUAL(member_str(call("engine::triggers::info", R"({"id":"engine::workers-available"})"),
                             {"result", "worker_name"}),
                  "engine");
  finish();
}

CAF_TEST(engine::registered-triggers list active bindings and pending ones on request) {
  send_frame(provider, R"({"type":"registerfunction","id":"on_tick"})");
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  send_frame(caller, R"({"type":"registertrigger","id":"t1","trigger_type":"tick","function_id":"on_tick","config":{"n":1},"metadata":{"m":true}})");
  send_frame(caller, R"({"type":"registertrigger","id":"t2","trigger_type":"later","function_id":"on_tick","config":null})");
  auto list = call("engine::registered-triggers::list");
  CAF_CHECK_EQUAL(member(list, {"result", "registered_triggers"}),
                  R"([{"id":"t1","trigger_type":"tick","function_id":"on_tick","worker_name":")"
                    + provider_id + R"(","owner_worker_id":")" + caller_id
                    + R"(","status":"active","config":{"n":1},"metadata":{"m":true}}])");
  auto all = call("engine::registered-triggers::list", R"({"include_pending":true})");
  CAF_CHECK(contains(member(all, {"result", "registered_triggers"}),
                     R"("id":"t2","trigger_type":"later","function_id":"on_tick")"));
  CAF_CHECK(contains(member(all, {"result", "registered_triggers"}), R"("status":"pending")"));
  CAF_CHECK_EQUAL(member(call("engine::registered-triggers::list",
                              R"({"include_pending":true,"trigger_type":"later"})"),
                         {"result", "registered_triggers"})
                    .find("t1"),
                  std::string::npos);
  auto info = call("engine::registered-triggers::info", R"({"id":"t1"})");
  CAF_CHECK_EQUAL(member_str(info, {"result", "status"}), "active");
  CAF_CHECK_EQUAL(member_str(info, {"result", "trigger", "id"}), "tick");
  CAF_CHECK_EQUAL(member(info, {"result", "trigger", "instance_count"}), "1");
  CAF_CHECK_EQUAL(member_str(info, {"result", "function", "function_id"}), "on_tick");
  auto parked = call("engine::registered-triggers::info", R"({"id":"t2"})");
  CAF_CHECK_EQUAL(member(parked, {"result", "trigger"}), "null");
  CAF_CHECK_EQUAL(member_str(parked, {"result", "status"}), "pending");
  CAF_CHECK_EQUAL(member_str(call("engine::registered-triggers::info", R"({"id":"x"})"),
                             {"error", "code"}),
                  "NOT_FOUND");
  CAF_CHECK_EQUAL(member_str(call("engine::registered-triggers::info", "{}"), {"error", "code"}),
                  "INVALID_ARGUMENTS");
  finish();
}

CAF_TEST(engine::register_trigger waits for the provider: success) {
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  tb->clear();
  send_frame(caller, R"({"type":"invokefunction","invocation_id":"r-1","function_id":"engine::register_trigger","data":{"trigger_type":"tick","function_id":"f","config":{"n":2},"metadata":{"k":"v"}}})");
  CAF_CHECK_EQUAL(ta->size(), 0u); // no answer before the provider's
  CAF_REQUIRE_EQUAL(tb->size(), 1u);
  auto reg_frame = tb->last();
  CAF_CHECK_EQUAL(member_str(reg_frame, {"type"}), "registertrigger");
  CAF_CHECK_EQUAL(member(reg_frame, {"config"}), R"({"n":2})");
  CAF_CHECK_EQUAL(member(reg_frame, {"metadata"}), R"({"k":"v"})");
  auto id = member_str(reg_frame, {"id"});
  send_frame(provider, R"({"type":"triggerregistrationresult","id":")" + id
                         + R"(","trigger_type":"tick","function_id":"f"})");
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"invocation_id"}), "r-1");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"result", "id"}), id);
  // The binding belongs to no connection: it outlives its caller.
  stop(caller, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3] + 1);
  auto td = make_fake_transport();
  auto other = spawn_worker(td, opts());
  extra.push_back(other);
  auto info = call("engine::registered-triggers::info", R"({"id":")" + id + R"("})", other, td);
  CAF_CHECK_EQUAL(member(info, {"result", "owner_worker_id"}), "null");
  // Unregistering it tells the provider.
  tb->clear();
  auto gone = call("engine::unregister_trigger", R"({"id":")" + id + R"("})", other, td);
  CAF_CHECK_EQUAL(member(gone, {"result"}), R"({"removed":true})");
  CAF_REQUIRE_EQUAL(tb->size(), 1u);
  CAF_CHECK_EQUAL(member_str(tb->last(), {"type"}), "unregistertrigger");
  CAF_CHECK_EQUAL(member_str(tb->last(), {"id"}), id);
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3]);
  CAF_CHECK_EQUAL(member(call("engine::unregister_trigger", R"({"id":")" + id + R"("})", other, td),
                         {"result"}),
                  R"({"removed":false})");
  CAF_CHECK_EQUAL(member_str(call("engine::unregister_trigger", "{}", other, td),
                             {"error", "code"}),
                  "INVALID_ARGUMENTS");
  finish();
}

CAF_TEST(engine::register_trigger answers with the error of the provider) {
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  tb->clear();
  send_frame(caller, R"({"type":"invokefunction","invocation_id":"r-1","function_id":"engine::register_trigger","data":{"trigger_type":"tick","function_id":"f","config":{}}})");
  auto id = member_str(tb->last(), {"id"});
  send_frame(provider, R"({"type":"triggerregistrationresult","id":")" + id
                         + R"(","trigger_type":"tick","function_id":"f","error":{"code":"trigger_registration_failed","message":"bad config"}})");
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "trigger_registration_failed");
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "message"}), "bad config");
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3]);
  CAF_CHECK_EQUAL(member(call("engine::registered-triggers::list", R"({"include_pending":true})"),
                         {"result", "registered_triggers"}),
                  "[]");
  // Missing arguments.
  CAF_CHECK_EQUAL(member_str(call("engine::register_trigger", R"({"trigger_type":"tick"})"),
                             {"error", "code"}),
                  "INVALID_ARGUMENTS");
  finish();
}

CAF_TEST(engine::register_trigger gives up after 10 s without an answer) {
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  tb->clear();
  send_frame(caller, R"({"type":"invokefunction","invocation_id":"r-1","function_id":"engine::register_trigger","data":{"trigger_type":"tick","function_id":"f","config":{}}})");
  auto id = member_str(tb->last(), {"id"});
  CAF_CHECK_EQUAL(advance_time(10s - 1ms), 0u);
  CAF_CHECK_EQUAL(ta->size(), 0u);
  CAF_CHECK_EQUAL(advance_time(1ms), 1u);
  sched.run();
  CAF_REQUIRE_EQUAL(ta->size(), 1u);
  CAF_CHECK_EQUAL(member_str(ta->last(), {"error", "code"}), "trigger_registration_failed");
  CAF_CHECK(contains(member_str(ta->last(), {"error", "message"}), "within 10 s"));
  // The provider is told to forget it; a late answer changes nothing.
  CAF_CHECK_EQUAL(member_str(tb->last(), {"type"}), "unregistertrigger");
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3]);
  send_frame(provider, R"({"type":"triggerregistrationresult","id":")" + id
                         + R"(","trigger_type":"tick","function_id":"f"})");
  CAF_CHECK_EQUAL(ta->size(), 1u);
  finish();
}

CAF_TEST(engine::register_trigger without a provider parks and answers at once) {
  auto r = call("engine::register_trigger",
                R"({"trigger_type":"tick","function_id":"f","config":{"a":1}})");
  auto id = member_str(r, {"result", "id"});
  CAF_CHECK_EQUAL(id.size(), 36u);
  CAF_CHECK_EQUAL(member_str(call("engine::registered-triggers::info", R"({"id":")" + id + R"("})"),
                             {"result", "status"}),
                  "pending");
  // The type appears: the binding is delivered (nobody waits any more).
  send_frame(provider, R"({"type":"registertriggertype","id":"tick","description":"ticks"})");
  CAF_REQUIRE_EQUAL(tb->size(), 1u);
  CAF_CHECK_EQUAL(member_str(tb->last(), {"id"}), id);
  // Its provider goes: parked again, not removed.
  stop(provider, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(member_str(call("engine::registered-triggers::info", R"({"id":")" + id + R"("})"),
                             {"result", "status"}),
                  "pending");
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3] + 1);
  finish();
}

CAF_TEST(engine::workers-available fires on connect and metadata update and disconnect) {
  send_frame(caller, R"({"type":"registerfunction","id":"on_worker"})");
  send_frame(caller, R"({"type":"registertrigger","id":"w1","trigger_type":"engine::workers-available","function_id":"on_worker","config":{},"metadata":{"why":"test"}})");
  CAF_CHECK_EQUAL(member_str(call("engine::registered-triggers::info", R"({"id":"w1"})"),
                             {"result", "status"}),
                  "active");
  ta->clear();
  auto tc = make_fake_transport();
  auto fresh = spawn_worker(tc, opts());
  auto fresh_id = member_str(tc->frame(0), {"worker_id"});
  auto got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"function_id"}), "on_worker");
  CAF_CHECK_EQUAL(member(got[0], {"data"}),
                  R"({"event":"worker_connected","worker_id":")" + fresh_id + R"("})");
  CAF_CHECK_EQUAL(member(got[0], {"metadata"}), R"({"why":"test"})");
  // The handler's answer is swallowed.
  send_frame(caller, R"({"type":"invocationresult","invocation_id":")"
                       + member_str(got[0], {"invocation_id"}) + R"(","function_id":"on_worker"})");
  CAF_CHECK_EQUAL(ta->size(), 0u);
  send_frame(fresh, R"({"type":"invokefunction","function_id":"engine::workers::register","action":{"type":"void"},"data":{"name":"fresh"}})");
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"data", "event"}), "worker_metadata_updated");
  CAF_CHECK_EQUAL(member_str(got[0], {"data", "worker_id"}), fresh_id);
  caf::anon_send(fresh, closed_atom_v, std::string{"closed by peer"});
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"data", "event"}), "worker_disconnected");
  CAF_CHECK_EQUAL(member_str(got[0], {"data", "worker_id"}), fresh_id);
  // A binder that leaves takes its binding along: nothing fires any more.
  stop(caller, caf::exit_reason::user_shutdown);
  auto td = make_fake_transport();
  extra.push_back(spawn_worker(td, opts()));
  CAF_CHECK_EQUAL(live(actor_kind::trigger_binding), iii_at_start[3]);
  finish();
}

CAF_TEST(engine::functions-available coalesces changes into one event) {
  send_frame(caller, R"({"type":"registerfunction","id":"on_fns"})");
  auto r = call("engine::register_trigger",
                R"({"trigger_type":"engine::functions-available","function_id":"on_fns","config":{},"metadata":{"b":1}})");
  CAF_CHECK_EQUAL(member_str(r, {"result", "id"}).size(), 36u);
  ta->clear();
  send_frame(provider, R"({"type":"registerfunction","id":"a"})");
  send_frame(provider, R"({"type":"registerfunction","id":"b","metadata":{"internal":true}})");
  send_frame(provider, R"({"type":"registerfunction","id":"c"})");
  CAF_CHECK_EQUAL(advance_time(100ms - 1ms), 0u);
  CAF_CHECK_EQUAL(invocations(ta).size(), 0u);
  CAF_CHECK_EQUAL(advance_time(1ms), 1u);
  sched.run();
  auto got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"function_id"}), "on_fns");
  CAF_CHECK_EQUAL(member_str(got[0], {"data", "event"}), "functions_changed");
  CAF_CHECK_EQUAL(ids_in(member(got[0], {"data", "functions"}), "function_id"), "a c on_fns ");
  CAF_CHECK_EQUAL(member(got[0], {"metadata"}), R"({"b":1})");
  CAF_CHECK_EQUAL(member(got[0], {"data", "_caller_worker_id"}), "<missing>");
  // A change undone within the window is no change.
  send_frame(provider, R"({"type":"registerfunction","id":"d"})");
  send_frame(provider, R"({"type":"unregisterfunction","id":"d"})");
  CAF_CHECK_EQUAL(advance_time(100ms), 1u);
  sched.run();
  CAF_CHECK_EQUAL(invocations(ta).size(), 0u);
  // A worker that goes away changes the set.
  stop(provider, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(advance_time(100ms), 1u);
  sched.run();
  got = invocations(ta);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member(got[0], {"data", "functions"}),
                  R"([{"function_id":"on_fns","worker_name":")" + caller_id + R"("}])");
  finish();
}

CAF_TEST(middleware gets every non-engine call of its listener and answers it) {
  auto cfg = std::make_shared<registry::worker_rbac_config>();
  cfg->expose_functions = {"*"};
  cfg->middleware = "mw";
  auto o = opts();
  o.rbac = cfg;
  auto tp = make_fake_transport();
  auto pub = spawn_worker(tp, o);
  extra.push_back(pub);
  tp->clear();
  send_frame(provider, R"({"type":"registerfunction","id":"mw"})");
  send_frame(provider, R"({"type":"registerfunction","id":"greet"})");
  tb->clear();
  send_frame(pub, R"({"type":"invokefunction","invocation_id":"p-1","function_id":"greet","data":{"x":1},"metadata":{"trace":"t"}})");
  auto got = invocations(tb);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"function_id"}), "mw");
  CAF_CHECK_EQUAL(member(got[0], {"data"}),
                  R"({"function_id":"greet","payload":{"x":1},"action":null,"context":{}})");
  CAF_CHECK_EQUAL(member(got[0], {"metadata"}), R"({"trace":"t"})");
  send_frame(provider, R"({"type":"invocationresult","invocation_id":")"
                         + member_str(got[0], {"invocation_id"})
                         + R"(","function_id":"mw","result":{"via":"mw"}})");
  CAF_REQUIRE_EQUAL(tp->size(), 1u);
  CAF_CHECK_EQUAL(member_str(tp->last(), {"invocation_id"}), "p-1");
  CAF_CHECK_EQUAL(member_str(tp->last(), {"function_id"}), "greet");
  CAF_CHECK_EQUAL(member(tp->last(), {"result"}), R"({"via":"mw"})");
  // Its error is the call's error.
  tp->clear();
  send_frame(pub, R"({"type":"invokefunction","invocation_id":"p-2","function_id":"nope","data":1})");
  got = invocations(tb);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  send_frame(provider, R"({"type":"invocationresult","invocation_id":")"
                         + member_str(got[0], {"invocation_id"})
                         + R"(","function_id":"mw","error":{"code":"denied","message":"no"}})");
  CAF_CHECK_EQUAL(member_str(tp->last(), {"invocation_id"}), "p-2");
  CAF_CHECK_EQUAL(member_str(tp->last(), {"error", "code"}), "denied");
  // Void calls go there too (with their action) and stay unanswered.
  tp->clear();
  send_frame(pub, R"({"type":"invokefunction","function_id":"greet","action":{"type":"void"}})");
  got = invocations(tb);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member(got[0], {"data"}),
                  R"({"function_id":"greet","payload":null,"action":{"type":"void"},"context":{}})");
  send_frame(provider, R"({"type":"invocationresult","invocation_id":")"
                         + member_str(got[0], {"invocation_id"}) + R"(","function_id":"mw","result":1})");
  CAF_CHECK_EQUAL(tp->size(), 0u);
  // engine:: calls bypass it.
  auto list = call("engine::functions::list", "{}", pub, tp);
  CAF_CHECK(contains(member(list, {"result", "functions"}), R"("function_id":"greet")"));
  CAF_CHECK_EQUAL(invocations(tb).size(), 0u);
  // The trusted listener has no middleware.
  auto direct = call("greet", "{}");
  CAF_CHECK_EQUAL(member_str(invocations(tb).at(0), {"function_id"}), "greet");
  (void) direct;
  finish();
}

CAF_TEST(engine::functions::list and info are filtered by the session) {
  auto cfg = std::make_shared<registry::worker_rbac_config>();
  // Listing must be allowed to be filtered.
  cfg->expose_functions = {"api::*", "engine::functions::*"};
  auto o = opts();
  o.rbac = cfg;
  auto tp = make_fake_transport();
  auto pub = spawn_worker(tp, o);
  extra.push_back(pub);
  for (auto id : {"api::a", "api::b", "secret::x"})
    send_frame(provider, R"({"type":"registerfunction","id":")" + std::string{id} + R"("})");
  auto ids_of = [](const std::string& r) {
    return ids_in(member(r, {"result", "functions"}), "function_id");
  };
  CAF_CHECK_EQUAL(ids_of(call("engine::functions::list", "{}", pub, tp)), "api::a api::b ");
  CAF_CHECK_EQUAL(ids_of(call("engine::functions::list", "{}")), "api::a api::b secret::x ");
  // Engine functions: only what the session may call.
  CAF_CHECK_EQUAL(ids_of(call("engine::functions::list",
                              R"({"include_internal":true,"prefix":"engine::"})", pub, tp)),
                  "engine::channels::create engine::functions::info engine::functions::list "
                  "engine::workers::register ");
  auto hidden = call("engine::functions::info", R"({"function_id":"secret::x"})", pub, tp);
  CAF_CHECK_EQUAL(member_str(hidden, {"error", "code"}), "FORBIDDEN");
  auto shown = call("engine::functions::info", R"({"function_id":"api::a"})", pub, tp);
  CAF_CHECK_EQUAL(member_str(shown, {"result", "function_id"}), "api::a");
  CAF_CHECK_EQUAL(member_str(call("engine::functions::info", R"({"function_id":"secret::x"})"),
                             {"result", "function_id"}),
                  "secret::x");
  finish();
}

CAF_TEST(metadata filters in expose_functions decide calls and listings) {
  auto cfg = std::make_shared<registry::worker_rbac_config>();
  cfg->expose_functions = registry::worker_rbac_config::parse_list(
    "engine::functions::list, metadata:public=true, metadata:tier=gold*&region=eu");
  auto o = opts();
  o.rbac = cfg;
  auto tp = make_fake_transport();
  auto pub = spawn_worker(tp, o);
  extra.push_back(pub);
  send_frame(provider, R"({"type":"registerfunction","id":"pub","metadata":{"public":true}})");
  send_frame(provider, R"({"type":"registerfunction","id":"priv","metadata":{"public":false}})");
  send_frame(provider, R"({"type":"registerfunction","id":"g","metadata":{"tier":"gold-1","region":"eu"}})");
  send_frame(provider, R"({"type":"registerfunction","id":"h","metadata":{"tier":"gold","region":"us"}})");
  send_frame(provider, R"({"type":"registerfunction","id":"bare"})");
  tb->clear();
  for (auto id : {"pub", "g"}) {
    CAF_MESSAGE("allowed: " << id);
    call(id, "{}", pub, tp);
    auto got = invocations(tb);
    CAF_REQUIRE_EQUAL(got.size(), 1u);
    CAF_CHECK_EQUAL(member_str(got[0], {"function_id"}), id);
  }
  for (auto id : {"priv", "h", "bare", "nope"}) {
    CAF_MESSAGE("denied: " << id);
    auto r = call(id, "{}", pub, tp);
    CAF_CHECK_EQUAL(member_str(r, {"error", "code"}), "FORBIDDEN");
    CAF_CHECK(contains(member_str(r, {"error", "message"}), "rbac.expose_functions"));
    CAF_CHECK_EQUAL(invocations(tb).size(), 0u);
  }
  CAF_CHECK_EQUAL(ids_in(member(call("engine::functions::list", "{}", pub, tp), {"result", "functions"}),
                         "function_id"),
                  "g pub ");
  // Engine functions have no metadata: not exposed by a metadata filter.
  CAF_CHECK_EQUAL(member_str(call("engine::workers::list", "{}", pub, tp), {"error", "code"}),
                  "FORBIDDEN");
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
