#define CAF_SUITE iii_security

#include "iii_fixture.hpp"
#include "test_support.hpp"

#include "actors/iii/channel.hpp"
#include "actors/iii/function_registry.hpp"
#include "actors/iii/worker_connection.hpp"
#include "obs/metrics.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

// Issue 11 on the worker ports: takeovers, bindings and reserved ids under
// RBAC, the front door's /iii/ policy, frames that are not JSON, channel caps.

namespace {

/// `trusted` (tt) on the trusted listener provides functions; `pub` (tp) is
/// a restricted worker of the RBAC listener (exposes api::* only).
struct security_fixture : iii_fixture {
  fake_transport_ptr tt = make_fake_transport("127.0.0.1:41001");
  fake_transport_ptr tp = make_fake_transport("127.0.0.1:41002");
  std::shared_ptr<registry::worker_rbac_config> cfg
    = std::make_shared<registry::worker_rbac_config>();
  worker_connection_actor trusted;
  worker_connection_actor pub;
  std::vector<worker_connection_actor> extra;

  security_fixture() {
    cfg->expose_functions = {"api::*", "engine::register_trigger"};
    cfg->on_trigger_registration = "";
    trusted = spawn_worker(tt, opts());
    auto o = opts();
    o.rbac = cfg;
    pub = spawn_worker(tp, o);
    tt->clear();
    tp->clear();
  }

  std::string call(const worker_connection_actor& who, const fake_transport_ptr& t,
                   const std::string& fn, const std::string& data = "{}") {
    return invoke(who, t, fn, data);
  }

  void finish() {
    for (auto& w : extra)
      stop(w, caf::exit_reason::user_shutdown);
    stop(trusted, caf::exit_reason::user_shutdown);
    stop(pub, caf::exit_reason::user_shutdown);
    stop_iii_and_check();
  }
};

std::uint64_t counter(const std::atomic<std::uint64_t>& c) {
  return c.load();
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(iii_security_tests, security_fixture)

CAF_TEST(a live workers function id is not taken over) {
  send_frame(trusted, R"({"type":"registerfunction","id":"secret::fn"})");
  auto refused = counter(obs::global().iii_registrations_refused);
  send_frame(pub, R"({"type":"registerfunction","id":"secret::fn"})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 1);
  // A trusted caller's payload still goes to the trusted worker.
  auto tc = make_fake_transport();
  auto caller = spawn_worker(tc, opts());
  extra.push_back(caller);
  call(caller, tc, "secret::fn", R"({"token":"t0p"})");
  CAF_CHECK_EQUAL(invocations(tt).size(), 1u);
  CAF_CHECK_EQUAL(invocations(tp).size(), 0u);
  // Trigger types likewise.
  send_frame(trusted, R"({"type":"registertriggertype","id":"cron"})");
  send_frame(pub, R"({"type":"registertriggertype","id":"cron"})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 2);
  // Once the owner is gone the id is free again.
  stop(trusted, caf::exit_reason::user_shutdown);
  auto t2 = make_fake_transport();
  auto second = spawn_worker(t2, opts());
  extra.push_back(second);
  send_frame(second, R"({"type":"registerfunction","id":"secret::fn"})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 2);
  t2->clear();
  call(caller, tc, "secret::fn");
  CAF_CHECK_EQUAL(invocations(t2).size(), 1u);
  finish();
}

// Ids are listed to every worker and caller and written into log lines:
// capped (256 bytes) and free of control characters, like runtime ids.
CAF_TEST(function and trigger type ids are capped like runtime ids) {
  auto refused = counter(obs::global().iii_registrations_refused);
  send_frame(trusted, R"({"type":"registerfunction","id":")" + std::string(257, 'f') + R"("})");
  send_frame(trusted, R"({"type":"registerfunction","id":"evil\u001b[2J"})");
  send_frame(trusted, R"({"type":"registertriggertype","id":")" + std::string(257, 't') + R"("})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 3);
  // At the cap is fine.
  send_frame(trusted, R"({"type":"registerfunction","id":")" + std::string(256, 'f') + R"("})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 3);
  finish();
}

CAF_TEST(a restricted worker cannot bind a trigger to a function it may not call) {
  send_frame(trusted, R"({"type":"registerfunction","id":"secret::fn"})");
  send_frame(trusted, R"({"type":"registerfunction","id":"api::ok"})");
  auto refused = counter(obs::global().iii_bindings_refused);
  send_frame(pub, R"({"type":"registertrigger","id":"t1","trigger_type":"engine::workers-available","function_id":"secret::fn"})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_bindings_refused), refused + 1);
  auto r = call(pub, tp, "engine::register_trigger",
                R"({"trigger_type":"engine::workers-available","function_id":"secret::fn","config":{}})");
  CAF_CHECK_EQUAL(member_str(r, {"error", "code"}), "FORBIDDEN");
  CAF_CHECK_EQUAL(counter(obs::global().iii_bindings_refused), refused + 2);
  // An allowed function may be bound.
  send_frame(pub, R"({"type":"registertrigger","id":"t2","trigger_type":"engine::workers-available","function_id":"api::ok"})");
  tt->clear();
  // A worker connecting fires the engine type: only api::ok is called.
  auto tx = make_fake_transport();
  extra.push_back(spawn_worker(tx, opts()));
  auto got = invocations(tt);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(member_str(got[0], {"function_id"}), "api::ok");
  finish();
}

CAF_TEST(a restricted worker cannot register reserved ids) {
  cfg->auth_function = "auth::check";
  cfg->middleware = "mw";
  cfg->on_trigger_registration = "hook::trigger";
  auto refused = counter(obs::global().iii_registrations_refused);
  for (auto id : {"auth::check", "mw", "hook::trigger", "engine::functions::list"})
    send_frame(pub, R"({"type":"registerfunction","id":")" + std::string{id} + R"("})");
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 4);
  auto list = call(trusted, tt, "engine::functions::list");
  CAF_CHECK(!contains(member(list, {"result", "functions"}), "auth::check"));
  // The trusted listener provides them.
  send_frame(trusted, R"({"type":"registerfunction","id":"auth::check"})");
  list = call(trusted, tt, "engine::functions::list");
  CAF_CHECK(contains(member(list, {"result", "functions"}), "auth::check"));
  CAF_CHECK_EQUAL(counter(obs::global().iii_registrations_refused), refused + 4);
  finish();
}

CAF_TEST(frames held while the auth function decides count against the read window) {
  // The trusted worker provides the auth function; it answers only when
  // the test says so.
  cfg->auth_function = "auth::check";
  send_frame(trusted, R"({"type":"registerfunction","id":"auth::check"})");
  tt->clear();
  auto t = make_fake_transport("127.0.0.1:41003");
  auto o = opts();
  o.rbac = cfg;
  auto w = spawn_worker(t, o);
  extra.push_back(w);
  auto auth = invocations(tt);
  CAF_REQUIRE_EQUAL(auth.size(), 1u);
  for (int i = 0; i < 5; ++i)
    send_frame(w, R"({"type":"registerfunction","id":"api::f)" + std::to_string(i) + R"("})");
  // Held, not handled: the socket's read window stays taken, so a worker
  // cannot pile up frames while it waits (the window bounds the queue).
  CAF_CHECK_EQUAL(t->processed(), 0);
  CAF_CHECK_EQUAL(t->size(), 0u); // no workerregistered yet
  send_frame(trusted, R"({"type":"invocationresult","invocation_id":")"
                        + member_str(auth[0], {"invocation_id"}) + R"(","result":{}})");
  CAF_CHECK_EQUAL(t->processed(), 5);
  CAF_CHECK_EQUAL(member_str(t->frame(0), {"type"}), "workerregistered");
  auto list = call(trusted, tt, "engine::functions::list");
  CAF_CHECK(contains(member(list, {"result", "functions"}), "api::f4"));
  finish();
}

CAF_TEST(held frames keep their order when a registration hook closes the gate again) {
  cfg->auth_function = "auth::check";
  cfg->on_function_registration = "hook::fn";
  for (auto id : {"auth::check", "hook::fn"})
    send_frame(trusted, std::string{R"({"type":"registerfunction","id":")"} + id + R"("})");
  tt->clear();
  auto t = make_fake_transport("127.0.0.1:41004");
  auto o = opts();
  o.rbac = cfg;
  auto w = spawn_worker(t, o);
  extra.push_back(w);
  auto answer = [&](const std::string& invocation) {
    send_frame(trusted, R"({"type":"invocationresult","invocation_id":")"
                          + member_str(invocation, {"invocation_id"}) + R"(","result":{}})");
  };
  auto auth = invocations(tt);
  CAF_REQUIRE_EQUAL(auth.size(), 1u);
  auto reg = [&](const char* id) {
    send_frame(w, std::string{R"({"type":"registerfunction","id":"api::)"} + id + R"("})");
  };
  for (auto id : {"a", "b", "c"})
    reg(id);
  CAF_CHECK_EQUAL(t->processed(), 0);
  // Authenticated: the first held frame asks the hook, and the gate closes
  // again with two frames still held; one read meanwhile waits behind them.
  answer(auth[0]);
  CAF_CHECK_EQUAL(t->processed(), 1);
  reg("d");
  CAF_CHECK_EQUAL(t->processed(), 1);
  std::vector<std::string> asked;
  for (int round = 0; round < 4; ++round) {
    auto hooks = invocations(tt);
    CAF_REQUIRE_EQUAL(hooks.size(), 1u);
    CAF_CHECK_EQUAL(member_str(hooks[0], {"function_id"}), "hook::fn");
    asked.push_back(member_str(hooks[0], {"data", "function_id"}));
    answer(hooks[0]);
  }
  CAF_CHECK_EQUAL(asked, (std::vector<std::string>{"api::a", "api::b", "api::c", "api::d"}));
  CAF_CHECK_EQUAL(t->processed(), 4);
  // Open again: a frame read now is handled at once.
  send_frame(w, R"({"type":"unregisterfunction","id":"api::a"})");
  CAF_CHECK_EQUAL(t->processed(), 5);
  auto list = call(trusted, tt, "engine::functions::list");
  for (auto id : {"api::b", "api::c", "api::d"})
    CAF_CHECK(contains(member(list, {"result", "functions"}), id));
  CAF_CHECK(!contains(member(list, {"result", "functions"}), "api::a"));
  finish();
}

CAF_TEST(front door calls of iii functions follow the RBAC listener policy) {
  send_frame(trusted, R"({"type":"registerfunction","id":"secret::fn"})");
  send_frame(trusted, R"({"type":"registerfunction","id":"api::ok"})");
  // Routed, or refused with the caller's error.
  auto route = [&](const std::string& fid) {
    return !ask_refusal(reg, route_iii_atom_v, fid).has_value();
  };
  // Without RBAC configured: everything.
  CAF_CHECK(route("secret::fn"));
  function_registry_options o;
  o.front_door = std::make_shared<const registry::worker_access>(
    registry::worker_access{cfg, {}});
  caf::anon_send(reg, iii_options_atom_v, std::move(o));
  sched.run();
  CAF_CHECK(!route("secret::fn"));
  auto why = ask_refusal(reg, route_iii_atom_v, std::string{"secret::fn"});
  CAF_REQUIRE(why.has_value());
  CAF_CHECK(contains(why->message, "worker_expose_functions"));
  CAF_CHECK_EQUAL(why->status, 7); // PERMISSION_DENIED
  CAF_CHECK(route("api::ok"));
  // The front door's listing (runtime "iii") shows what it may call.
  auto listing = std::get<0>(ask<std::string>(reg, list_iii_atom_v));
  CAF_CHECK(contains(listing, "/iii/api::ok"));
  CAF_CHECK(!contains(listing, "secret::fn"));
  finish();
}

CAF_TEST(worker frames that are not valid JSON are answered not relayed) {
  send_frame(trusted, R"({"type":"registerfunction","id":"api::ok"})");
  auto bad = counter(obs::global().iii_invalid_frames);
  tt->clear();
  send_frame(pub, R"({"type":"invokefunction","invocation_id":"p-1","function_id":"api::ok","data":{"x":NaN}})");
  CAF_CHECK_EQUAL(invocations(tt).size(), 0u);
  CAF_REQUIRE_EQUAL(tp->size(), 1u);
  CAF_CHECK_EQUAL(member_str(tp->last(), {"invocation_id"}), "p-1");
  CAF_CHECK_EQUAL(member_str(tp->last(), {"error", "code"}), "INVALID_ARGUMENTS");
  CAF_CHECK(contains(member_str(tp->last(), {"error", "message"}), "not valid JSON"));
  // A result with `tru` fails the invocation instead of reaching the caller.
  call(pub, tp, "api::ok");
  auto got = invocations(tt);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  tp->clear();
  send_frame(trusted, R"({"type":"invocationresult","invocation_id":")"
                        + member_str(got[0], {"invocation_id"}) + R"(","function_id":"api::ok","result":tru})");
  CAF_REQUIRE_EQUAL(tp->size(), 1u);
  CAF_CHECK_EQUAL(member_str(tp->last(), {"error", "code"}), "invocation_failed");
  CAF_CHECK_EQUAL(counter(obs::global().iii_invalid_frames), bad + 2);
  finish();
}

CAF_TEST(channels per worker are capped) {
  function_registry_options o;
  o.channels.max_per_worker = 2;
  caf::anon_send(reg, iii_options_atom_v, std::move(o));
  sched.run();
  auto refused = counter(obs::global().channels_refused);
  CAF_CHECK(!member(call(trusted, tt, "engine::channels::create"), {"result"}).empty());
  CAF_CHECK(!member(call(trusted, tt, "engine::channels::create"), {"result"}).empty());
  auto third = call(trusted, tt, "engine::channels::create");
  CAF_CHECK_EQUAL(member_str(third, {"error", "code"}), "LIMIT_EXCEEDED");
  CAF_CHECK(contains(member_str(third, {"error", "message"}), "max_channels_per_worker"));
  CAF_CHECK_EQUAL(counter(obs::global().channels_refused), refused + 1);
  // Another worker has its own allowance.
  CAF_CHECK(!member(call(pub, tp, "engine::channels::create"), {"result"}).empty());
  finish();
}

CAF_TEST(a channel without a reader holds at most its byte cap) {
  function_registry_options o;
  o.channels.max_bytes = 4096;
  caf::anon_send(reg, iii_options_atom_v, std::move(o));
  sched.run();
  auto answer = call(trusted, tt, "engine::channels::create", R"({"buffer_size":1024})");
  auto id = member_str(answer, {"result", "writer", "channel_id"});
  auto key = member_str(answer, {"result", "writer", "access_key"});
  auto w = make_fake_transport("127.0.0.1:43000");
  w->set_upgrade("/ws/channels/" + id + "?key=" + key + "&dir=write");
  CAF_REQUIRE_EQUAL(check_channel_upgrade(w->upgrade()), 0);
  auto h = open_channel_end(w);
  sched.run();
  auto overflows = counter(obs::global().channel_overflows);
  // 1 KiB frames: paused at 4 KiB (4 frames), far below the frame count.
  for (int i = 0; i < 4; ++i) {
    h->on_text(std::string(1024, 'x'));
    sched.run();
  }
  CAF_CHECK(w->paused());
  CAF_CHECK_EQUAL(w->close_calls(), 0);
  // A writer that goes on anyway (no flow control) ends the channel past 2x.
  for (int i = 0; i < 5; ++i) {
    h->on_text(std::string(1024, 'x'));
    sched.run();
  }
  CAF_CHECK_EQUAL(w->close_code(), 1008);
  CAF_CHECK(contains(w->close_reason(), "max_channel_bytes"));
  CAF_CHECK_EQUAL(counter(obs::global().channel_overflows), overflows + 1);
  h->on_closed("closed");
  sched.run();
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
