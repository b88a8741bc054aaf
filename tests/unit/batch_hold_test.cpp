#define CAF_SUITE batch_hold

#include <caf/test/unit_test.hpp>

#include "net/detail/batch_hold.hpp"
#include "net/handler_tail.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using actor_host::net::io_strand;
using actor_host::net::detail::batch_hold;

namespace {

// A session's write side as http_response.cpp and ws_session.cpp have it:
// an inbox, a wake-up posted by the write that finds it empty, and the
// batches that went out. `reads` stands for a runtime socket's reader on the
// same io_context: each of its handlers adds one chunk and starts the next.
struct fixture {
  asio::io_context ioc{1};
  io_strand strand{ioc.get_executor()};
  batch_hold hold;
  std::string inbox;
  std::vector<std::string> written;

  void write(const std::string& chunk) {
    bool first = inbox.empty();
    inbox += chunk;
    if (first)
      hold.wake(strand, [this](batch_hold::ticket t) { return drain_handler(t); });
  }

  std::function<void()> drain_handler(batch_hold::ticket t) {
    return [this, t] { drain(t); };
  }

  void drain(batch_hold::ticket t) {
    if (hold.wait(strand, t, inbox.size(), [this](auto next) { return drain_handler(next); }))
      return;
    written.push_back(std::move(inbox));
    inbox.clear();
  }

  // Read handlers of one reactor poll, each a tail waking this session with
  // its chunk, then the io_context run dry: for each, whether its chunk went
  // out before its handler returned (not posted: tail_post_policy).
  std::vector<bool> poll_of_reads(const std::vector<std::string>& chunks) {
    std::vector<bool> at_once(chunks.size());
    for (std::size_t i = 0; i < chunks.size(); ++i)
      asio::post(ioc, [this, &at_once, &chunks, i] {
        auto before = written.size();
        {
          actor_host::net::tail_scope reading{actor_host::net::tail_scope::reading};
          write(chunks[i]);
        }
        at_once[i] = written.size() > before;
      });
    ioc.run();
    ioc.restart();
    return at_once;
  }

  // n reads, one chunk each, each read's completion posted by the one before.
  void reads(int n, std::string chunk = "c") {
    if (n == 0)
      return;
    {
      actor_host::net::detail::read_handler_scope reading;
      write(chunk);
    }
    asio::post(ioc, [this, n, chunk] { reads(n - 1, chunk); });
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(batch_hold_tests, fixture)

CAF_TEST(chunks written by reads on the IO thread go out as one batch) {
  asio::post(ioc, [this] { reads(20); });
  ioc.run();
  CAF_REQUIRE_EQUAL(written.size(), 1u);
  CAF_CHECK_EQUAL(written[0], std::string(20, 'c'));
}

CAF_TEST(a batch woken from another thread goes at once) {
  // Written before the io_context runs: not from its thread.
  write("a");
  asio::post(ioc, [this] { write("b"); });
  ioc.run();
  CAF_CHECK_EQUAL(written, (std::vector<std::string>{"a", "b"}));
}

CAF_TEST(a batch woken by an actor turn on the IO thread goes at once) {
  // Actors run on the I/O thread between socket handlers (io_scheduler):
  // their writes are not a read's and do not wait for the next handlers.
  asio::post(ioc, [this] {
    write("a");
    asio::post(ioc, [this] { write("b"); });
  });
  ioc.run();
  CAF_CHECK_EQUAL(written, (std::vector<std::string>{"a", "b"}));
}

CAF_TEST(a batch waits no longer than its reads add to it) {
  // Two bursts of reads with a gap: the first batch goes when its reads
  // stop adding, not with the second burst.
  asio::post(ioc, [this] { reads(3, "a"); });
  ioc.run();
  ioc.restart();
  asio::post(ioc, [this] { reads(2, "b"); });
  ioc.run();
  CAF_REQUIRE_EQUAL(written.size(), 2u);
  CAF_CHECK_EQUAL(written[0], "aaa");
  CAF_CHECK_EQUAL(written[1], "bb");
}

CAF_TEST(a batch waits at most max_looks times) {
  const int n = 3 * batch_hold::max_looks;
  asio::post(ioc, [this, n] { reads(n); });
  ioc.run();
  CAF_CHECK(written.size() >= 3u);
  std::size_t total = 0;
  for (auto& b : written) {
    CAF_CHECK_LESS_OR_EQUAL(b.size(), static_cast<std::size_t>(batch_hold::max_looks) + 1);
    total += b.size();
  }
  CAF_CHECK_EQUAL(total, static_cast<std::size_t>(n));
}

CAF_TEST(a batch waits at most max_bytes) {
  const std::string big(batch_hold::max_bytes / 4, 'x');
  asio::post(ioc, [this, &big] { reads(8, big); });
  ioc.run();
  CAF_CHECK(written.size() >= 2u);
  for (auto& b : written)
    CAF_CHECK_LESS_OR_EQUAL(b.size(), batch_hold::max_bytes + big.size());
}

CAF_TEST(a call posted in order is not overtaken by a waiting batch) {
  // The body's end is posted while the batch before it waits: it must run
  // after that batch went out.
  asio::post(ioc, [this] {
    write("x");
    hold.post_in_order(strand, [this] { written.push_back("end"); });
    asio::post(ioc, [this] { write("y"); });
  });
  ioc.run();
  CAF_REQUIRE_EQUAL(written.size(), 3u);
  CAF_CHECK_EQUAL(written[0], "x");
  CAF_CHECK_EQUAL(written[1], "end");
  CAF_CHECK_EQUAL(written[2], "y");
}

CAF_TEST(a batch an actor burst wakes goes at the end of the burst with no post) {
  // An actor's burst on the I/O thread runs in a tail_scope (io_scheduler):
  // its wake-up is dispatched as the burst ends, ahead of what was queued.
  std::vector<std::string> log;
  asio::post(ioc, [&] {
    {
      actor_host::net::tail_scope burst{actor_host::net::tail_scope::bursting};
      write("a");
      CAF_CHECK(written.empty());
    }
    CAF_CHECK_EQUAL(written, (std::vector<std::string>{"a"}));
    log.push_back("burst");
  });
  asio::post(ioc, [&] { log.push_back("next"); });
  ioc.run();
  CAF_CHECK_EQUAL(log, (std::vector<std::string>{"burst", "next"}));
}

CAF_TEST(what another thread sends while a deferred wake-up waits goes behind it) {
  std::size_t batches_before_end = 99;
  asio::post(ioc, [&] {
    actor_host::net::tail_scope burst{actor_host::net::tail_scope::bursting};
    write("a");
    // Outside any handler: it would be posted at once and run first.
    std::thread other{[&] {
      hold.post_in_order(strand, [&] { batches_before_end = written.size(); });
    }};
    other.join();
  });
  ioc.run();
  CAF_CHECK_EQUAL(written, (std::vector<std::string>{"a"}));
  CAF_CHECK_EQUAL(batches_before_end, 1u);
}

CAF_TEST(a wake-up deferred from inside the strand is posted behind what it queued) {
  std::vector<std::string> order;
  asio::post(strand, [&] {
    hold.post_in_order(strand, [&] { order.push_back("queued"); });
    {
      actor_host::net::tail_scope burst{actor_host::net::tail_scope::bursting};
      hold.post_in_order(strand, [&] { order.push_back("deferred"); });
    }
    order.push_back("handler");
  });
  ioc.run();
  CAF_CHECK_EQUAL(order, (std::vector<std::string>{"handler", "queued", "deferred"}));
}

// The read tails' post policy is the I/O thread's own (thread-local): each
// test below drives its io_context on a thread of its own, which starts
// posting.
template <class F>
void on_fresh_thread(F f) {
  std::thread t{std::move(f)};
  t.join();
}

CAF_TEST(a batch a read handler tail wakes waits for the handlers ready before it) {
  // Two sockets' reads from one reactor poll, each waking an actor that
  // writes to the same connection: one write for both.
  std::vector<bool> at_once;
  on_fresh_thread([&] { at_once = poll_of_reads({"a", "b"}); });
  CAF_CHECK_EQUAL(at_once, (std::vector<bool>{false, false}));
  CAF_CHECK_EQUAL(written, (std::vector<std::string>{"ab"}));
}

CAF_TEST(lone reads learn to write at once) {
  // One read per poll, as a lone caller's: no post finds another handler
  // run before it, so after to_inline of them the writes go at once.
  using policy = actor_host::net::tail_post_policy;
  std::vector<bool> at_once;
  on_fresh_thread([&] {
    for (int i = 0; i < policy::to_inline + 2; ++i)
      at_once.push_back(poll_of_reads({"x"})[0]);
  });
  std::vector<bool> expected(policy::to_inline, false);
  expected.insert(expected.end(), {true, true});
  CAF_CHECK_EQUAL(at_once, expected);
  CAF_CHECK_EQUAL(written.size(), static_cast<std::size_t>(policy::to_inline + 2));
}

CAF_TEST(a probe that finds other reads ready turns posting back on) {
  // Writing at once, the thread still posts every probe_every-th batch;
  // when load comes back (three reads per poll), the probe's post finds the
  // reads after it run first, they join its write, and from then on the
  // reads of a poll share one write again.
  using policy = actor_host::net::tail_post_policy;
  static_assert((policy::probe_every - 1) % 3 == 0, "the probe is a poll's first read");
  constexpr std::size_t probe_poll = (policy::probe_every - 1) / 3;
  std::vector<std::vector<bool>> polls;
  on_fresh_thread([&] {
    for (int i = 0; i < policy::to_inline; ++i)
      poll_of_reads({"x"});
    for (std::size_t i = 0; i < probe_poll + 3; ++i)
      polls.push_back(poll_of_reads({"a", "b", "c"}));
  });
  const std::vector<bool> each_at_once{true, true, true}, posted{false, false, false};
  for (std::size_t i = 0; i < probe_poll; ++i)
    CAF_CHECK_EQUAL(polls[i], each_at_once);
  for (std::size_t i = probe_poll; i < polls.size(); ++i)
    CAF_CHECK_EQUAL(polls[i], posted);
  std::vector<std::string> tail(written.end() - 3, written.end());
  CAF_CHECK_EQUAL(tail, (std::vector<std::string>{"abc", "abc", "abc"}));
}

CAF_TEST_FIXTURE_SCOPE_END()
