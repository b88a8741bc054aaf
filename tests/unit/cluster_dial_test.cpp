#define CAF_SUITE cluster_dial

#include "test_support.hpp"

#include "actors/cluster/cluster_node.hpp"
#include "actors/cluster/cluster_types.hpp"

// How a cluster node dials the nodes it hears of, through a middleman that
// never completes a connect (a peer whose handshake stalls).

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

struct dial_log {
  std::vector<std::string> dials;
  std::vector<caf::response_promise> held; // never answered
};

caf::behavior stuck_middleman(caf::event_based_actor* self, std::shared_ptr<dial_log> log) {
  return {
    [self, log](caf::connect_atom, std::string& host, std::uint16_t port) {
      log->dials.push_back(host + ":" + std::to_string(port));
      log->held.push_back(self->make_response_promise());
    },
  };
}

struct dial_fixture : actor_fixture {
  std::shared_ptr<dial_log> log = std::make_shared<dial_log>();
  caf::actor mm = sys.spawn(stuck_middleman, log);
  cluster_board_ptr view = std::make_shared<cluster_board>();
  directory_actor dir = spawn_directory();
  cluster_options opts = [] {
    cluster_options o;
    o.node_name = "b";
    o.beat = 1h; // beats are sent by the test
    o.min_backoff = 0ms;
    o.max_backoff = 0ms;
    return o;
  }();
  caf::actor node;

  dial_fixture() {
    cluster_links links;
    links.middleman = mm;
    node = spawn_cluster_node(sys, opts, links, caf::actor_cast<caf::actor>(dir), view);
    caf::anon_send(node, listening_atom_v, std::string{"b.test:7300"},
                   std::string{"ws://b.test:3100"});
    sched.run();
  }

  void beat() {
    caf::anon_send(node, beat_atom_v);
    sched.run();
  }

  ~dial_fixture() {
    stop(node);
    stop(dir);
    log->held.clear();
    stop(mm);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_dial_tests, dial_fixture)

CAF_TEST(a node introduced by a member is dialed again until it joins) {
  auto c_node = spawn_dummy();
  member_card c{"c", "c.test:7300", 9, cluster_protocol_version, c_node, c_node};
  caf::anon_send(node, member_atom_v, c);
  sched.run();
  CAF_REQUIRE_EQUAL(log->dials, (std::vector<std::string>{"c.test:7300"}));
  // In flight: a beat does not dial it twice.
  beat();
  CAF_CHECK_EQUAL(log->dials.size(), 1u);
  // The connect never completes: given up after the handshake timeout, and
  // dialed again by the next beat (c is neither a seed nor a member here).
  sched.advance_time(opts.handshake_timeout);
  sched.run();
  beat();
  CAF_CHECK_EQUAL(log->dials.size(), 2u);
  // Once c has joined (its hello), the beats leave it alone.
  sched.advance_time(opts.handshake_timeout);
  sched.run();
  caf::anon_send(node, hello_atom_v, c, std::vector<runtime_record>{});
  sched.run();
  beat();
  CAF_CHECK_EQUAL(log->dials.size(), 2u);
  stop(c_node);
}

CAF_TEST_FIXTURE_SCOPE_END()
