#define CAF_SUITE lean_actor

#include "test_support.hpp"

#include "actors/common/lean_actor.hpp"

using namespace actor_host;
using namespace actor_host::testing;

namespace {

using tally_handle = caf::typed_actor<caf::reacts_to<int>, caf::reacts_to<caf::ok_atom>>;

// What the tally saw, kept by the test past the actor's end.
struct tally_log {
  std::vector<int> seen;
  std::vector<std::string> ends; // to_string of each end's reason
  int downs = 0;
};

// Takes ints; ok_atom ends it; a peer's down is counted.
class tally : public lean_actor<tally> {
public:
  static constexpr const char* kind_name = "tally";

  tally(caf::actor_config& cfg, std::shared_ptr<tally_log> log, caf::actor peer)
    : lean_actor(cfg), log_(std::move(log)) {
    if (peer)
      monitor(peer);
  }

  void handle(caf::mailbox_element& element) {
    auto& m = element.content();
    if (m.match_elements<int>())
      log_->seen.push_back(m.get_as<int>(0));
    else if (m.match_elements<caf::ok_atom>())
      quit();
    else if (m.match_elements<caf::down_msg>())
      ++log_->downs;
  }

  void on_end(const caf::error& reason) {
    log_->ends.push_back(caf::to_string(reason));
  }

private:
  std::shared_ptr<tally_log> log_;
};

// A scheduled actor that records the down messages it gets.
caf::behavior watcher(caf::event_based_actor* self, std::shared_ptr<std::vector<std::string>> downs) {
  self->set_down_handler(
    [downs](caf::down_msg& dm) { downs->push_back(caf::to_string(dm.reason)); });
  return {[](int) {}};
}

struct lean_fixture : actor_fixture {
  std::shared_ptr<tally_log> log = std::make_shared<tally_log>();

  tally_handle spawn_tally(caf::actor peer = {}) {
    return spawn_lean<tally, tally_handle>(sys, log, std::move(peer));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(lean_actor_tests, lean_fixture)

CAF_TEST(messages are handled in the order they were sent) {
  auto t = spawn_tally();
  for (int i = 1; i <= 5; ++i)
    caf::anon_send(t, i);
  sched.run();
  caf::anon_send(t, 6);
  sched.run();
  CAF_CHECK_EQUAL(log->seen, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  caf::anon_send(t, caf::ok_atom_v);
  sched.run();
}

CAF_TEST(it counts as running until it ends) {
  auto before = sys.registry().running();
  auto t = spawn_tally();
  CAF_CHECK_EQUAL(sys.registry().running(), before + 1);
  caf::anon_send(t, caf::ok_atom_v);
  sched.run();
  CAF_CHECK_EQUAL(sys.registry().running(), before);
  CAF_CHECK_EQUAL(log->ends, (std::vector<std::string>{"none"}));
}

CAF_TEST(monitors hear its end with the reason and later messages are dropped) {
  auto downs = std::make_shared<std::vector<std::string>>();
  auto w = sys.spawn(watcher, downs);
  sched.run();
  auto t = spawn_tally();
  // The watcher monitors the tally, as a caller monitors a call.
  caf::actor_cast<caf::abstract_actor*>(t)->attach(caf::default_attachable::make_monitor(
    caf::actor_cast<caf::actor_addr>(t), caf::actor_cast<caf::actor_addr>(w)));
  caf::anon_send_exit(t, caf::exit_reason::user_shutdown);
  caf::anon_send(t, 7); // after its end: dropped
  sched.run();
  CAF_CHECK(log->seen.empty());
  CAF_CHECK_EQUAL(log->ends.size(), 1u);
  CAF_REQUIRE_EQUAL(downs->size(), 1u);
  CAF_CHECK_EQUAL(downs->front(), caf::to_string(caf::error{caf::exit_reason::user_shutdown}));
  caf::anon_send(t, 8);
  sched.run();
  CAF_CHECK(log->seen.empty());
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  sched.run();
}

CAF_TEST(a normal exit message is ignored and a kill ends it) {
  auto t = spawn_tally();
  caf::anon_send_exit(t, caf::exit_reason::normal);
  caf::anon_send(t, 1);
  sched.run();
  CAF_CHECK_EQUAL(log->seen, (std::vector<int>{1}));
  CAF_CHECK(log->ends.empty());
  caf::anon_send_exit(t, caf::exit_reason::kill);
  sched.run();
  CAF_CHECK_EQUAL(log->ends.size(), 1u);
}

CAF_TEST(it monitors other actors) {
  auto downs = std::make_shared<std::vector<std::string>>();
  auto w = sys.spawn(watcher, downs);
  sched.run();
  auto t = spawn_tally(w);
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  sched.run();
  CAF_CHECK_EQUAL(log->downs, 1);
  caf::anon_send(t, caf::ok_atom_v);
  sched.run();
}

CAF_TEST(one nobody can reach any more still ends) {
  auto before = sys.registry().running();
  {
    auto t = spawn_tally();
    caf::anon_send(t, 3);
    sched.run();
  }
  // The last handle went: no message can come.
  CAF_CHECK_EQUAL(log->seen, (std::vector<int>{3}));
  CAF_CHECK_EQUAL(log->ends.size(), 1u);
  CAF_CHECK_EQUAL(sys.registry().running(), before);
}

CAF_TEST(a request gets an error rather than silence) {
  auto t = spawn_tally();
  auto answers = std::make_shared<std::vector<std::string>>();
  auto asker = sys.spawn([t, answers](caf::event_based_actor* self) {
    self->request(caf::actor_cast<caf::actor>(t), caf::infinite, 5)
      .then([answers](int) { answers->push_back("answer"); },
            [answers](caf::error& err) { answers->push_back(caf::to_string(err)); });
  });
  sched.run();
  CAF_REQUIRE_EQUAL(answers->size(), 1u);
  // CAF's bounce answers with an error (request_receiver_down in 0.17).
  CAF_CHECK(answers->front().rfind("system_error(", 0) == 0);
  CAF_CHECK(log->seen.empty());
  caf::anon_send(t, caf::ok_atom_v);
  sched.run();
}

CAF_TEST(it is far smaller than a scheduled actor) {
  // What a pending request per call in flight is built on
  // (bench/runs/2026-12-07-lean.md): CAF's event_based_actor is ~1,016 bytes.
  CAF_CHECK_LESS_OR_EQUAL(sizeof(caf::actor_storage<tally>), 256u);
}

CAF_TEST_FIXTURE_SCOPE_END()
