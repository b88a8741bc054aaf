#define CAF_SUITE quiet_clock

#include <caf/test/unit_test.hpp>

#include "actors/common/quiet_clock.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <functional>
#include <thread>

// These tests run a real scheduler (the deterministic one has its own
// clock): they check that the clock thread still serves every kind of
// timeout and is not told about actors that never set one.

using namespace std::chrono_literals;
using actor_host::quiet_clock;

namespace {

// CAF unregisters an actor (await_all_actors_done returns) just before it
// cancels its timeouts: the count settles a moment later.
bool eventually(const std::function<bool()>& pred) {
  auto until = std::chrono::steady_clock::now() + 10s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::yield();
  }
  return true;
}

caf::actor_system_config& configured(caf::actor_system_config& cfg, caf::atom_value policy) {
  cfg.set("scheduler.policy", policy);
  cfg.set("scheduler.max-threads", std::size_t{2});
  cfg.set("logger.console", caf::atom("none"));
  actor_host::use_quiet_clock(cfg);
  return cfg;
}

} // namespace

CAF_TEST(actors that never set a timeout end without waking the clock thread) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg, caf::atom("sharing"))};
  auto* clock = actor_host::quiet_clock_of(sys);
  CAF_REQUIRE(clock != nullptr);
  const auto skipped0 = clock->cancellations_skipped();
  int answered = 0;
  {
    caf::scoped_actor self{sys};
    for (int i = 0; i < 1000; ++i) {
      auto once = sys.spawn([](caf::event_based_actor* s) -> caf::behavior {
        return {[s](int x) {
          s->quit();
          return x + 1;
        }};
      });
      self->request(once, caf::infinite, i)
        .receive([&](int y) { answered += y == i + 1 ? 1 : 0; },
                 [&](caf::error& err) { CAF_FAIL("no answer: " << sys.render(err)); });
    }
  }
  sys.await_all_actors_done();
  CAF_CHECK_EQUAL(answered, 1000);
  // The 1,000 actors and the scoped one.
  CAF_CHECK(eventually([&] { return clock->cancellations_skipped() - skipped0 >= 1001; }));
  CAF_CHECK_EQUAL(clock->cancellations_forwarded(), 0u);
}

CAF_TEST(receive timeouts request timeouts and delayed messages still fire) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg, caf::atom("sharing"))};
  auto* clock = actor_host::quiet_clock_of(sys);
  CAF_REQUIRE(clock != nullptr);
  {
    caf::scoped_actor self{sys};
    caf::actor reporter = self;
    // A receive timeout.
    sys.spawn([reporter](caf::event_based_actor* s) -> caf::behavior {
      return {[](int) {},
              caf::after(std::chrono::milliseconds(5)) >> [s, reporter] {
                s->send(reporter, caf::atom("idle"));
                s->quit();
              }};
    });
    bool idle = false;
    self->receive([&](caf::atom_value a) { idle = a == caf::atom("idle"); });
    CAF_CHECK(idle);
    // A request nobody answers.
    auto silent = sys.spawn([](caf::event_based_actor*) -> caf::behavior {
      return {[](int) -> caf::result<int> { return caf::delegated<int>(); }};
    });
    bool timed_out = false;
    self->request(silent, std::chrono::milliseconds(5), 1)
      .receive([](int) {},
               [&](caf::error& err) { timed_out = err == caf::sec::request_timeout; });
    CAF_CHECK(timed_out);
    caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
    // A delayed message.
    caf::delayed_anon_send(self, std::chrono::milliseconds(5), caf::atom("later"));
    bool later = false;
    self->receive([&](caf::atom_value a) { later = a == caf::atom("later"); });
    CAF_CHECK(later);
  }
  sys.await_all_actors_done();
  // The timed actor and the scoped one (its request timeout) were told of;
  // none stays remembered.
  CAF_CHECK(eventually([&] { return clock->cancellations_forwarded() >= 2; }));
  CAF_CHECK(eventually([&] { return clock->timed_actors() == 0; }));
}

CAF_TEST(work stealing gets the quiet clock and the test coordinator keeps its own) {
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{configured(cfg, caf::atom("stealing"))};
    CAF_CHECK(actor_host::quiet_clock_of(sys) != nullptr);
  }
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{configured(cfg, caf::atom("testing"))};
    CAF_CHECK(actor_host::quiet_clock_of(sys) == nullptr);
  }
}
