#define CAF_SUITE runtime_supervisor

#include "test_support.hpp"
#include "gate.hpp"

#include "actors/runtime/active_action.hpp"
#include "actors/runtime/bidi_session.hpp"
#include "actors/runtime/manager_link.hpp"
#include "actors/runtime/runtime_supervisor.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

/// /flow/wait: waits for the gate, then drains its input stream (if any) and
/// returns what it read.
actions::catalog_ptr make_catalog(const gate_ptr& g) {
  auto cat = std::make_shared<actions::action_catalog>();
  actions::action_descriptor wait;
  wait.type = "flow";
  wait.name = "wait";
  wait.handler = collect_inputs_after(g);
  cat->add(std::move(wait));
  return cat;
}

struct supervisor_fixture : actor_fixture {
  gate_ptr handlers = std::make_shared<gate>();
  actions::catalog_ptr catalog = make_catalog(handlers);
  std::shared_ptr<std::vector<caf::actor>> dials = std::make_shared<std::vector<caf::actor>>();
  std::int64_t supervisors_at_start = live(actor_kind::runtime_supervisor);
  std::int64_t links_at_start = live(actor_kind::manager_link);
  std::int64_t actions_at_start = live(actor_kind::active_action);
  std::int64_t bidis_at_start = live(actor_kind::bidi_session);
  caf::actor sup;
  /// How the supervisor ended: nullopt while it lives.
  std::shared_ptr<std::optional<caf::error>> sup_exit
    = std::make_shared<std::optional<caf::error>>();

  ~supervisor_fixture() {
    handlers->open();
    sys.await_detached_threads();
    if (sup) {
      caf::anon_send_exit(sup, caf::exit_reason::kill);
      sched.run();
    }
  }

  void spawn_supervisor(restart_limit limit = {}) {
    link_options opts;
    opts.runtime_id = "rt-sup";
    opts.name = "supervised runtime";
    opts.pid = 4244;
    opts.manager_urls = {"ws://localhost:4100"};
    auto d = dials;
    sup = sys.spawn(runtime_supervisor, std::move(opts), catalog,
                    [d](const caf::actor& l, const std::string&) { d->push_back(l); }, limit);
    sup->attach_functor([out = sup_exit](const caf::error& reason) { *out = reason; });
    sched.run();
  }

  runtime_supervisor_state& sup_state() {
    return deref<caf::stateful_actor<runtime_supervisor_state>>(sup).state;
  }

  caf::actor current_link() {
    return sup_state().link;
  }

  manager_link_state& link_state(const caf::actor& link) {
    return deref<caf::stateful_actor<manager_link_state>>(link).state;
  }

  fake_transport_ptr connect(const caf::actor& link) {
    auto t = make_fake_transport("127.0.0.1:4100");
    caf::anon_send(link, connected_atom_v, net::transport_ptr{t});
    sched.run();
    CAF_REQUIRE_EQUAL(t->size(), 1u); // the register request
    return t;
  }

  void post(const caf::actor& link, std::string text) {
    caf::anon_send(link, frame_atom_v, std::move(text));
    sched.run();
  }

  /// One bidi run (id "5", one chunk in) and one plain run (id "6").
  void start_runs(const caf::actor& link) {
    post(link, R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/wait","streamInput":true},"id":"5"})");
    post(link, R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":"5","chunk":1}})");
    post(link, R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/wait"},"id":"6"})");
    CAF_REQUIRE_EQUAL(link_state(link).runs.size(), 2u);
    CAF_CHECK_EQUAL(live(actor_kind::active_action), actions_at_start + 2);
    CAF_CHECK_EQUAL(live(actor_kind::bidi_session), bidis_at_start + 1);
  }

  /// Crashes `link` the way an exception in one of its handlers would.
  void crash(const caf::actor& link) {
    caf::anon_send_exit(link, caf::exit_reason::unhandled_exception);
    sched.run();
  }

  /// Lets every handler thread finish and runs what they sent.
  void finish_handlers() {
    handlers->open();
    sys.await_detached_threads();
    sched.run();
  }

  void check_runs_gone() {
    CAF_CHECK_EQUAL(live(actor_kind::active_action), actions_at_start);
    CAF_CHECK_EQUAL(live(actor_kind::bidi_session), bidis_at_start);
  }

  void check_tree_gone() {
    CAF_CHECK_EQUAL(live(actor_kind::runtime_supervisor), supervisors_at_start);
    CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start);
    check_runs_gone();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(runtime_supervisor_tests, supervisor_fixture)

CAF_TEST(the supervisor starts one manager link that dials at once) {
  spawn_supervisor();
  CAF_CHECK_EQUAL(live(actor_kind::runtime_supervisor), supervisors_at_start + 1);
  CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start + 1);
  auto link = current_link();
  CAF_REQUIRE(link);
  CAF_REQUIRE_EQUAL(dials->size(), 1u);
  CAF_CHECK(dials->front() == link);
}

CAF_TEST(a crashed manager link is restarted fresh and its runs go down with it) {
  spawn_supervisor();
  auto first = current_link();
  auto t1 = connect(first);
  start_runs(first);
  t1->clear();
  // The crash, step by step: the link dies, the supervisor sees it go down
  // and starts a new link, which dials right away.
  caf::anon_send_exit(first, caf::exit_reason::unhandled_exception);
  expect((caf::exit_msg), from(_).to(first).with(_));
  CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start);
  CAF_CHECK_EQUAL(t1->close_calls(), 1); // the manager fails what it sent us
  CAF_CHECK_EQUAL(t1->close_code(), 1001);
  expect((caf::down_msg), from(_).to(sup).with(_));
  auto second = current_link();
  CAF_REQUIRE(second);
  CAF_CHECK(second != first);
  CAF_CHECK_EQUAL(sup_state().restarts.size(), 1u);
  sched.run();
  CAF_REQUIRE_EQUAL(dials->size(), 2u);
  CAF_CHECK(dials->back() == second);
  CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start + 1);
  // The old runs are gone (their handlers were cancelled) and nothing they
  // did afterwards reached any socket.
  check_runs_gone();
  finish_handlers();
  check_runs_gone();
  CAF_CHECK_EQUAL(t1->size(), 0u);
  // The new link starts over: register request id "1" again, no runs.
  auto t2 = connect(second);
  CAF_CHECK_EQUAL(member_str(t2->frame(0), {"method"}), "register");
  CAF_CHECK_EQUAL(member(t2->frame(0), {"id"}), R"("1")");
  CAF_CHECK(link_state(second).runs.empty());
  CAF_CHECK(!sup_exit->has_value());
}

CAF_TEST(a link killed outright is restarted as well) {
  spawn_supervisor();
  auto first = current_link();
  stop(first); // exit_reason::kill
  auto second = current_link();
  CAF_REQUIRE(second);
  CAF_CHECK(second != first);
  CAF_CHECK_EQUAL(dials->size(), 2u);
  CAF_CHECK(!sup_exit->has_value());
}

CAF_TEST(the supervisor gives up after too many restarts within the window) {
  spawn_supervisor(restart_limit{2, 60s});
  crash(current_link());
  crash(current_link());
  CAF_CHECK_EQUAL(sup_state().restarts.size(), 2u);
  // Failures older than the window no longer count.
  advance_time(60s);
  sched.run();
  crash(current_link());
  CAF_CHECK_EQUAL(sup_state().restarts.size(), 1u);
  crash(current_link());
  CAF_CHECK_EQUAL(sup_state().restarts.size(), 2u);
  CAF_CHECK_EQUAL(dials->size(), 5u);
  CAF_CHECK(!sup_exit->has_value());
  // The third failure within 60 s: no new link, and the supervisor ends with
  // the link's reason, so runtime.cpp sees a failure, not a clean stop.
  auto last = current_link();
  caf::anon_send_exit(last, caf::exit_reason::unhandled_exception);
  expect((caf::exit_msg), from(_).to(last).with(_));
  expect((caf::down_msg), from(_).to(sup).with(_));
  sched.run();
  CAF_CHECK_EQUAL(dials->size(), 5u);
  CAF_REQUIRE(sup_exit->has_value());
  CAF_CHECK_EQUAL(**sup_exit, caf::make_error(caf::exit_reason::unhandled_exception));
  check_tree_gone();
  sup = nullptr;
}

CAF_TEST(shutdown stops the link gracefully and answers once everything is down) {
  spawn_supervisor();
  auto link = current_link();
  auto t = connect(link);
  start_runs(link);
  t->clear();
  auto run5 = link_state(link).runs.at(R"("5")").action;
  auto run6 = link_state(link).runs.at(R"("6")").action;
  self->send(sup, shutdown_atom_v);
  expect((shutdown_atom), from(self).to(sup).with(_));
  expect((shutdown_atom), from(sup).to(link).with(_));
  // The runs were told to cancel; they still wait for their handlers.
  expect((cancel_atom), from(link).to(run5).with(_));
  expect((cancel_atom), from(link).to(run6).with(_));
  sched.run();
  CAF_CHECK(self->mailbox().empty());
  CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start + 1);
  // A second shutdown request waits as well.
  self->send(sup, shutdown_atom_v);
  sched.run();
  CAF_CHECK(self->mailbox().empty());
  finish_handlers();
  // Both runs answered before the link closed.
  for (auto id : {R"("5")", R"("6")"}) {
    bool answered = false;
    for (auto& f : t->frames())
      if (member(f, {"id"}) == id && member_str(f, {"method"}) == "<missing>")
        answered = true;
    CAF_MESSAGE("run " << id);
    CAF_CHECK(answered);
  }
  CAF_CHECK_EQUAL(t->close_calls(), 1);
  CAF_CHECK_EQUAL(t->close_code(), 1001);
  // Two ok replies, no restart, and no live actor of the runtime's tree.
  for (int i = 0; i < 2; ++i) {
    CAF_REQUIRE(!self->mailbox().empty());
    self->receive([](caf::ok_atom) {});
  }
  CAF_CHECK(self->mailbox().empty());
  CAF_CHECK_EQUAL(dials->size(), 1u);
  CAF_REQUIRE(sup_exit->has_value());
  CAF_CHECK(!**sup_exit);
  check_tree_gone();
  sup = nullptr;
}

CAF_TEST(shutdown without runs answers at once) {
  spawn_supervisor();
  auto [ok] = ask<caf::ok_atom>(sup, shutdown_atom_v);
  CAF_CHECK(ok == caf::ok_atom_v);
  CAF_CHECK_EQUAL(dials->size(), 1u);
  check_tree_gone();
  sup = nullptr;
}

CAF_TEST(killing the supervisor takes the link and its runs down) {
  spawn_supervisor();
  auto link = current_link();
  auto t = connect(link);
  start_runs(link);
  stop(sup);
  CAF_CHECK_EQUAL(t->close_calls(), 1);
  CAF_CHECK_EQUAL(live(actor_kind::runtime_supervisor), supervisors_at_start);
  CAF_CHECK_EQUAL(live(actor_kind::manager_link), links_at_start);
  check_runs_gone();
  finish_handlers();
  check_tree_gone();
  sup = nullptr;
}

CAF_TEST_FIXTURE_SCOPE_END()
