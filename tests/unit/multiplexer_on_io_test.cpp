#define CAF_SUITE multiplexer_on_io

#include <caf/test/unit_test.hpp>

#include "actors/cluster/cluster_port_guard.hpp"
#include "actors/cluster/multiplexer_on_io.hpp"
#include "actors/common/io_scheduler.hpp"
#include "real_io.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <boost/asio/io_context.hpp>

#include <memory>
#include <thread>

// Two cluster nodes in one process, each with CAF's middleman polled on an
// io_context of its own (one thread each), linked over a real loopback BASP
// connection. What is checked is that BASP moves with no thread of CAF's
// polling, including what an actor on the I/O thread sends between rounds,
// so the deterministic scheduler cannot stand in.

using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

using actor_host::testing::io_thread;

caf::actor_system_config& configured(caf::actor_system_config& cfg, bool on_io) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", std::size_t{1});
  cfg.set("logger.console", caf::atom("none"));
  cfg.set("middleman.workers", std::size_t{0});
  actor_host::use_io_scheduler(cfg);
  actor_host::load_guarded_middleman(cfg);
  if (on_io)
    actor_host::request_io_multiplexing(cfg);
  return cfg;
}

/// A node: its actor system, its I/O thread, the multiplexer polled there.
/// Torn down as main does: the I/O thread joined, then the driver stopped,
/// then the system (whose middleman drains on this thread).
struct node {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  io_thread io;
  actor_host::io_multiplexing links;

  explicit node(bool on_io = true) : sys(configured(cfg, on_io)) {
    actor_host::attach_io_scheduler(sys, io.ioc);
    links = actor_host::io_multiplexing::start(sys, io.ioc);
  }
  ~node() {
    actor_host::detach_io_scheduler(sys);
    io.stop();
    links.stop();
  }
};

caf::behavior doubler(caf::event_based_actor*) {
  return {[](int x) { return 2 * x; }};
}

/// On its node's I/O thread: asks `remote` for `n` doublings at once and
/// reports their sum to `report` when all are in.
caf::behavior asker(caf::event_based_actor* self, caf::actor remote, int n, caf::actor report) {
  auto sum = std::make_shared<long>(0);
  auto left = std::make_shared<int>(n);
  for (int i = 1; i <= n; ++i)
    self->request(remote, 30s, i).then(
        [=](int doubled) {
          *sum += doubled;
          if (--*left == 0) {
            self->send(report, *sum);
            self->quit();
          }
        },
        [=](caf::error&) {
          self->send(report, -1L);
          self->quit();
        });
  return {};
}

caf::actor connect(node& from, node& to, const caf::actor& published) {
  auto port = to.sys.middleman().publish(published, 0, "127.0.0.1", true);
  CAF_REQUIRE(port);
  auto remote = from.sys.middleman().remote_actor("127.0.0.1", *port);
  CAF_REQUIRE(remote);
  return *remote;
}

} // namespace

CAF_TEST(calls cross nodes whose multiplexers are polled on their io threads) {
  node a;
  node b;
  CAF_REQUIRE(a.links.active());
  CAF_REQUIRE(b.links.active());
  auto served = a.sys.spawn(doubler);
  auto remote = connect(b, a, served);
  // From an actor on b's I/O thread, between the multiplexer's rounds: its
  // messages reach the broker through the pipe and wake a round.
  constexpr int n = 2000;
  {
    caf::scoped_actor self{b.sys};
    b.sys.spawn(asker, remote, n, caf::actor{self});
    long sum = 0;
    self->receive([&](long s) { sum = s; }, caf::after(60s) >> [] { CAF_FAIL("no answer"); });
    CAF_CHECK_EQUAL(sum, static_cast<long>(n) * (n + 1));
  }
  CAF_CHECK(a.links.rounds() > 0);
  CAF_CHECK(b.links.rounds() > 0);
  // And from a thread that is not the I/O thread (the test's own).
  {
    caf::scoped_actor self{b.sys};
    int got = 0;
    self->request(remote, 30s, 21).receive([&](int x) { got = x; },
                                            [&](caf::error& err) {
                                              CAF_FAIL("no answer: " << b.sys.render(err));
                                            });
    CAF_CHECK_EQUAL(got, 42);
  }
  caf::anon_send_exit(served, caf::exit_reason::user_shutdown);
}

CAF_TEST(a node whose middleman keeps its own thread is left alone) {
  node a{false};
  CAF_CHECK(!a.links.active());
  CAF_CHECK_EQUAL(a.links.rounds(), 0u);
  node b;
  auto served = a.sys.spawn(doubler);
  auto remote = connect(b, a, served);
  caf::scoped_actor self{b.sys};
  int got = 0;
  self->request(remote, 30s, 4).receive([&](int x) { got = x; },
                                         [&](caf::error& err) {
                                           CAF_FAIL("no answer: " << b.sys.render(err));
                                         });
  CAF_CHECK_EQUAL(got, 8);
  caf::anon_send_exit(served, caf::exit_reason::user_shutdown);
}
