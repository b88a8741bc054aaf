#define CAF_SUITE shared_behavior

#include "test_support.hpp"

#include "actors/common/shared_behavior.hpp"

using namespace actor_host;
using namespace actor_host::testing;

namespace {

struct tally_state {
  std::vector<int> seen;
  bool peer_down = false;
  static inline const char* name = "tally";
};

using tally_actor = caf::typed_actor<caf::reacts_to<int>, caf::replies_to<caf::get_atom>::with<int>>;
using tally_impl = shared_behavior_actor<tally_state, tally_actor::base>;

int behaviors_built = 0;

tally_actor::behavior_type make_tally_behavior() {
  ++behaviors_built;
  return {
    [](int x) { tally_impl::current()->state.seen.push_back(x); },
    [](caf::get_atom) {
      auto self = tally_impl::current();
      int sum = 0;
      for (auto x : self->state.seen)
        sum += x;
      return sum;
    },
  };
}

tally_actor::behavior_type tally(tally_impl* self, caf::actor peer) {
  if (peer) {
    self->monitor(peer);
    self->set_down_handler([](caf::scheduled_actor*, caf::down_msg&) {
      tally_impl::current()->state.peer_down = true;
    });
  }
  static const auto* shared = new tally_actor::behavior_type{make_tally_behavior()};
  return *shared;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(shared_behavior_tests, actor_fixture)

// Each actor's messages reach its own state through current(), however the
// messages of several actors interleave; the behavior is built once.
CAF_TEST(actors sharing a behavior each act on their own state) {
  auto peer = spawn_dummy();
  auto a = sys.spawn(tally, caf::actor{});
  auto b = sys.spawn(tally, peer);
  sched.run();
  for (int i = 1; i <= 3; ++i) {
    caf::anon_send(a, i);
    caf::anon_send(b, 10 * i);
  }
  sched.run();
  CAF_CHECK_EQUAL(behaviors_built, 1);
  CAF_CHECK(tally_impl::current() == nullptr); // outside any handler
  CAF_CHECK_EQUAL(deref<tally_impl>(a).state.seen, (std::vector<int>{1, 2, 3}));
  CAF_CHECK_EQUAL(deref<tally_impl>(b).state.seen, (std::vector<int>{10, 20, 30}));
  // Copied out: std::get on the temporary tuple would dangle in the check.
  const int sum_a = std::get<0>(ask<int>(a, caf::get_atom_v));
  const int sum_b = std::get<0>(ask<int>(b, caf::get_atom_v));
  CAF_CHECK_EQUAL(sum_a, 6);
  CAF_CHECK_EQUAL(sum_b, 60);
  // The down handler finds its actor too.
  stop(peer);
  CAF_CHECK(deref<tally_impl>(b).state.peer_down);
  CAF_CHECK(!deref<tally_impl>(a).state.peer_down);
  stop(a);
  stop(b);
}

CAF_TEST_FIXTURE_SCOPE_END()
