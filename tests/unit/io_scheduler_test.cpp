#define CAF_SUITE io_scheduler

#include <caf/test/unit_test.hpp>

#include "actors/common/io_scheduler.hpp"
#include "net/handler_tail.hpp"
#include "real_io.hpp"

#include <caf/all.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

// A real io_context on a thread of its own and a real actor system: what is
// checked is which thread runs the actors, so the deterministic scheduler
// cannot stand in.

using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

caf::actor_system_config& configured(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", std::size_t{1});
  cfg.set("logger.console", caf::atom("none"));
  actor_host::use_io_scheduler(cfg);
  return cfg;
}

using actor_host::testing::io_thread;

// Answers with the thread it ran on.
caf::behavior where(caf::event_based_actor*) {
  return {[](caf::atom_value) { return std::hash<std::thread::id>{}(std::this_thread::get_id()); }};
}

std::size_t hashed(std::thread::id id) {
  return std::hash<std::thread::id>{}(id);
}

std::size_t ask_where(caf::actor_system& sys) {
  caf::scoped_actor self{sys};
  auto w = sys.spawn(where);
  std::size_t out = 0;
  self->request(w, caf::infinite, caf::atom("where"))
      .receive([&](std::size_t h) { out = h; },
               [&](caf::error& err) { CAF_FAIL("no answer: " << sys.render(err)); });
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  return out;
}

} // namespace

CAF_TEST(attached actors run on the io thread and detached on the worker) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  io_thread io;
  actor_host::attach_io_scheduler(sys, io.ioc);
  CAF_CHECK_EQUAL(ask_where(sys), hashed(io.id()));
  CAF_CHECK(actor_host::io_scheduler_turns(sys) > 0);
  actor_host::detach_io_scheduler(sys);
  auto on_worker = ask_where(sys);
  CAF_CHECK(on_worker != hashed(io.id()));
  CAF_CHECK(on_worker != hashed(std::this_thread::get_id()));
  sys.await_all_actors_done();
}

CAF_TEST(a chain of messages between actors completes on the io thread) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  io_thread io;
  actor_host::attach_io_scheduler(sys, io.ioc);
  // Two actors bounce a counter 10,000 times; the last reports where it ran.
  auto bounce = [](caf::event_based_actor* self, caf::actor reporter) -> caf::behavior {
    return {[=](int n, caf::actor other) {
      if (n == 0) {
        self->send(reporter, hashed(std::this_thread::get_id()));
        return;
      }
      self->send(other, n - 1, caf::actor{self});
    }};
  };
  {
    caf::scoped_actor self{sys};
    auto a = sys.spawn(bounce, caf::actor{self});
    auto b = sys.spawn(bounce, caf::actor{self});
    self->send(a, 10000, b);
    std::size_t ran_on = 0;
    self->receive([&](std::size_t h) { ran_on = h; }, caf::after(30s) >> [] { CAF_FAIL("lost"); });
    CAF_CHECK_EQUAL(ran_on, hashed(io.id()));
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
  }
  actor_host::detach_io_scheduler(sys);
  sys.await_all_actors_done();
}

CAF_TEST(a busy actor lets a waiting socket handler run between its turns) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  io_thread io;
  actor_host::attach_io_scheduler(sys, io.ioc);
  constexpr int total = 5000;
  auto handled = std::make_shared<std::atomic<int>>(0);
  auto seen_by_handler = std::make_shared<std::atomic<int>>(-1);
  {
    caf::scoped_actor self{sys};
    caf::actor reporter = self;
    asio::io_context* ioc = &io.ioc;
    // Sends itself `total` messages at once; at the first it posts what
    // stands for a socket's handler, which notes how many it had handled.
    auto busy = sys.spawn([=](caf::event_based_actor* s) -> caf::behavior {
      return {
          [=](caf::atom_value) {
            for (int i = 0; i < total; ++i)
              s->send(s, i);
          },
          [=](int i) {
            if (i == 0)
              asio::post(*ioc, [=] { seen_by_handler->store(handled->load()); });
            if (++*handled == total)
              s->send(reporter, caf::atom("done"));
          },
      };
    });
    self->send(busy, caf::atom("go"));
    bool done = false;
    self->receive([&](caf::atom_value) { done = true; }, caf::after(30s) >> [] {});
    CAF_CHECK(done);
    caf::anon_send_exit(busy, caf::exit_reason::user_shutdown);
  }
  // It ran after one turn, not after all 5,000 messages.
  CAF_CHECK(seen_by_handler->load() > 0);
  CAF_CHECK(seen_by_handler->load() < total);
  actor_host::detach_io_scheduler(sys);
  sys.await_all_actors_done();
}

CAF_TEST(an actor whose post the stopped context dropped runs on the worker) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  // A context nobody runs: what is posted to it waits, and is destroyed
  // with it.
  auto ioc = std::make_unique<asio::io_context>(1);
  actor_host::attach_io_scheduler(sys, *ioc);
  {
    caf::scoped_actor self{sys};
    auto w = sys.spawn(where);
    self->send(w, caf::atom("where"));
    actor_host::detach_io_scheduler(sys);
    ioc.reset(); // the posted turn goes to CAF's worker
    std::size_t ran_on = 0;
    self->receive([&](std::size_t h) { ran_on = h; }, caf::after(30s) >> [] { CAF_FAIL("lost"); });
    CAF_CHECK(ran_on != 0);
    CAF_CHECK(ran_on != hashed(std::this_thread::get_id()));
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  }
  sys.await_all_actors_done();
}

CAF_TEST(an actor a socket handler wakes runs at the end of that handler) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  io_thread io;
  actor_host::attach_io_scheduler(sys, io.ioc);
  auto ran = std::make_shared<std::atomic<bool>>(false);
  auto noted = std::make_shared<std::atomic<int>>(0); // 1: as expected, -1: not
  auto flag = sys.spawn([ran](caf::event_based_actor*) -> caf::behavior {
    return {[ran](int) { ran->store(true); }};
  });
  {
    caf::scoped_actor self{sys};
    caf::actor reporter = self;
    // Stands for a socket's read handler: the message's actor has not run
    // while the handler hands messages on, and has once the handler ends,
    // with nothing posted between.
    asio::post(io.ioc, [=] {
      bool before = true;
      {
        actor_host::net::tail_scope tail{actor_host::net::tail_scope::reading};
        caf::anon_send(flag, 1);
        before = ran->load();
      }
      noted->store(!before && ran->load() ? 1 : -1);
      caf::anon_send(reporter, caf::atom("noted"));
    });
    self->receive([](caf::atom_value) {}, caf::after(30s) >> [] { CAF_FAIL("lost"); });
  }
  CAF_CHECK_EQUAL(noted->load(), 1);
  caf::anon_send_exit(flag, caf::exit_reason::user_shutdown);
  actor_host::detach_io_scheduler(sys);
  sys.await_all_actors_done();
}

CAF_TEST(work posted behind ready reads runs after the handlers already queued) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  io_thread io;
  actor_host::attach_io_scheduler(sys, io.ioc);
  auto order = std::make_shared<std::string>(); // written on the io thread only
  auto posted = std::make_shared<std::atomic<int>>(0); // 1: posted, -1: refused
  auto inline_writes = std::make_shared<std::atomic<bool>>(false);
  {
    caf::scoped_actor self{sys};
    caf::actor reporter = self;
    // Two socket handlers the same poll made ready, queued in order: the
    // first asks for work behind the reads, the second is such a read.
    asio::post(io.ioc, [&sys, order, posted, inline_writes, reporter, ioc = &io.ioc] {
      asio::post(*ioc, [&sys, order, posted, inline_writes, reporter] {
        actor_host::net::tail_scope tail{actor_host::net::tail_scope::reading};
        *order += "a";
        bool ok = actor_host::post_behind_ready_reads(sys, [order, inline_writes, reporter] {
          *order += "w";
          inline_writes->store(actor_host::net::tail_writes_inline());
          caf::anon_send(reporter, caf::atom("ran"));
        });
        posted->store(ok ? 1 : -1);
      });
      asio::post(*ioc, [order] {
        actor_host::net::tail_scope tail{actor_host::net::tail_scope::reading};
        *order += "b";
      });
    });
    self->receive([](caf::atom_value) {}, caf::after(30s) >> [] { CAF_FAIL("lost"); });
  }
  CAF_CHECK_EQUAL(posted->load(), 1);
  CAF_CHECK_EQUAL(*order, "abw");
  // It runs as a burst: what its actors write goes at its end.
  CAF_CHECK(inline_writes->load());
  actor_host::detach_io_scheduler(sys);
  sys.await_all_actors_done();
}

CAF_TEST(work is not posted behind reads outside a read handler) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  io_thread io;
  actor_host::attach_io_scheduler(sys, io.ioc);
  auto ran = std::make_shared<std::atomic<int>>(0);
  auto refused = std::make_shared<std::atomic<int>>(0);
  auto count = [ran] { ++*ran; };
  // Not on an I/O thread.
  CAF_CHECK(!actor_host::post_behind_ready_reads(sys, count));
  {
    caf::scoped_actor self{sys};
    caf::actor reporter = self;
    asio::post(io.ioc, [&sys, count, refused, reporter] {
      // On the I/O thread but outside any handler scope, and in a burst.
      if (!actor_host::post_behind_ready_reads(sys, count))
        ++*refused;
      {
        actor_host::net::tail_scope tail{actor_host::net::tail_scope::bursting};
        if (!actor_host::post_behind_ready_reads(sys, count))
          ++*refused;
      }
      caf::anon_send(reporter, caf::atom("done"));
    });
    self->receive([](caf::atom_value) {}, caf::after(30s) >> [] { CAF_FAIL("lost"); });
  }
  CAF_CHECK_EQUAL(refused->load(), 2);
  CAF_CHECK_EQUAL(ran->load(), 0);
  actor_host::detach_io_scheduler(sys);
  sys.await_all_actors_done();
}

CAF_TEST(work posted behind reads runs even when the context drops it) {
  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  auto ioc = std::make_unique<asio::io_context>(1);
  actor_host::attach_io_scheduler(sys, *ioc);
  auto ran = std::make_shared<std::atomic<int>>(0);
  auto posted = std::make_shared<std::atomic<bool>>(false);
  asio::post(*ioc, [&sys, ran, posted, ctx = ioc.get()] {
    actor_host::net::tail_scope tail{actor_host::net::tail_scope::reading};
    posted->store(actor_host::post_behind_ready_reads(sys, [ran] { ++*ran; }));
    ctx->stop(); // what was posted stays unrun
  });
  std::thread t{[ctx = ioc.get()] { ctx->run(); }};
  t.join();
  CAF_CHECK(posted->load());
  CAF_CHECK_EQUAL(ran->load(), 0);
  actor_host::detach_io_scheduler(sys);
  ioc.reset(); // destroys the post unrun: the work runs then, once
  CAF_CHECK_EQUAL(ran->load(), 1);
  sys.await_all_actors_done();
}
