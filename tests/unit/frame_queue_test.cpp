#define CAF_SUITE frame_queue

#include <caf/test/unit_test.hpp>

#include "net/detail/frame_queue.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

using actor_host::net::out_frame;
using actor_host::net::detail::frame_queue;
using pushed = frame_queue::pushed;

namespace {

out_frame frame(std::size_t n, char c = 'x') {
  return out_frame{std::string(n, c), false};
}

std::string payloads(frame_queue& q) {
  std::string out;
  for (auto i = q.begin(); i != q.end(); ++i)
    out += i->payload + "|";
  return out;
}

} // namespace

CAF_TEST(only the push that finds the inbox empty wakes the strand) {
  std::atomic<std::int64_t> gauge{0};
  frame_queue q{1000, gauge};
  std::size_t held = 0;
  CAF_CHECK(q.push(frame(1, 'a'), held) == pushed::first);
  CAF_CHECK(q.push(frame(1, 'b'), held) == pushed::joined);
  // The inbox counts nothing toward the queue until the strand takes it.
  CAF_CHECK_EQUAL(q.queued(), 0u);
  CAF_CHECK_EQUAL(gauge.load(), 0);
  q.take_inbox(false);
  CAF_CHECK_EQUAL(payloads(q), "a|b|");
  CAF_CHECK_EQUAL(q.bytes(), 2u);
  CAF_CHECK_EQUAL(gauge.load(), 2);
  // Emptied: the next push wakes the strand again; it lands behind.
  CAF_CHECK(q.push(frame(1, 'c'), held) == pushed::first);
  q.take_inbox(false);
  CAF_CHECK_EQUAL(payloads(q), "a|b|c|");
}

CAF_TEST(the inbox is capped and one frame of any size always fits) {
  std::atomic<std::int64_t> gauge{0};
  frame_queue q{100, gauge};
  std::size_t held = 0;
  CAF_CHECK(q.push(frame(5000), held) == pushed::first);
  q.take_inbox(false);
  CAF_CHECK(q.push(frame(60), held) == pushed::first);
  CAF_CHECK(q.push(frame(40), held) == pushed::joined);
  CAF_CHECK(q.push(frame(1), held) == pushed::overflow);
  CAF_CHECK_EQUAL(held, 101u);
  // Closed and emptied: later frames are dropped, the strand takes nothing.
  CAF_CHECK(q.push(frame(1), held) == pushed::closed);
  q.take_inbox(false);
  CAF_CHECK_EQUAL(q.queued(), 1u);
  CAF_CHECK_EQUAL(q.bytes(), 5000u);
}

CAF_TEST(over_cap counts what waits behind the write in flight) {
  std::atomic<std::int64_t> gauge{0};
  frame_queue q{100, gauge};
  std::size_t held = 0;
  q.push(frame(90), held);
  q.take_inbox(false);
  q.push(frame(90), held);
  q.take_inbox(false);
  // 180 bytes wait, 90 of them in a write.
  CAF_CHECK(q.over_cap(0, 0));
  CAF_CHECK(!q.over_cap(1, 90));
  q.push(frame(20), held);
  q.take_inbox(false);
  CAF_CHECK(q.over_cap(1, 90));
  // The frames behind the one in flight go; its buffers stay valid.
  const char* in_flight = q.begin()->payload.data();
  q.drop_behind(1, 90);
  CAF_CHECK_EQUAL(q.queued(), 1u);
  CAF_CHECK_EQUAL(q.bytes(), 90u);
  CAF_CHECK_EQUAL(gauge.load(), 90);
  CAF_CHECK_EQUAL(static_cast<const void*>(q.begin()->payload.data()),
                  static_cast<const void*>(in_flight));
}

CAF_TEST(written frames leave in order and the gauge follows to zero) {
  std::atomic<std::int64_t> gauge{0};
  {
    frame_queue q{1 << 20, gauge};
    std::size_t held = 0;
    for (char c = 'a'; c <= 'e'; ++c) {
      q.push(frame(2, c), held);
      q.take_inbox(false);
    }
    q.pop_written(2, 4);
    CAF_CHECK_EQUAL(payloads(q), "cc|dd|ee|");
    CAF_CHECK_EQUAL(gauge.load(), 6);
    q.pop_written(1, 2);
    CAF_CHECK_EQUAL(payloads(q), "dd|ee|");
    q.push(frame(3, 'f'), held);
    q.take_inbox(false); // through the spare vector, behind what waits
    CAF_CHECK_EQUAL(payloads(q), "dd|ee|fff|");
    q.pop_written(3, 7);
    CAF_CHECK_EQUAL(q.queued(), 0u);
    CAF_CHECK_EQUAL(gauge.load(), 0);
    q.push(frame(8), held);
    q.take_inbox(false);
    CAF_CHECK_EQUAL(gauge.load(), 8);
  }
  // A session that goes with frames queued gives its bytes back.
  CAF_CHECK_EQUAL(gauge.load(), 0);
}

CAF_TEST(a closed inbox drops frames and a discarded batch counts nothing) {
  std::atomic<std::int64_t> gauge{0};
  frame_queue q{1000, gauge};
  std::size_t held = 0;
  q.push(frame(10), held);
  q.take_inbox(true);
  CAF_CHECK_EQUAL(q.queued(), 0u);
  CAF_CHECK_EQUAL(gauge.load(), 0);
  q.push(frame(10), held);
  q.take_inbox(false);
  q.close_inbox();
  CAF_CHECK(q.push(frame(10), held) == pushed::closed);
  q.drop();
  CAF_CHECK_EQUAL(q.queued(), 0u);
  CAF_CHECK_EQUAL(gauge.load(), 0);
}

CAF_TEST(pushes from many threads arrive once each and in the order of each thread) {
  std::atomic<std::int64_t> gauge{0};
  frame_queue q{1 << 30, gauge};
  constexpr int threads = 4;
  constexpr int per_thread = 2000;
  std::atomic<int> wakeups{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::size_t held = 0;
      for (int i = 0; i < per_thread; ++i)
        if (q.push(out_frame{std::to_string(t) + ":" + std::to_string(i), false}, held)
            == pushed::first)
          ++wakeups;
    });
  for (auto& t : ts)
    t.join();
  q.take_inbox(false);
  CAF_CHECK_EQUAL(q.queued(), static_cast<std::size_t>(threads * per_thread));
  CAF_CHECK_EQUAL(wakeups.load(), 1);
  std::vector<int> next(threads, 0);
  bool ordered = true;
  for (auto i = q.begin(); i != q.end(); ++i) {
    auto colon = i->payload.find(':');
    int t = std::stoi(i->payload.substr(0, colon));
    int n = std::stoi(i->payload.substr(colon + 1));
    ordered = ordered && n == next[t]++;
  }
  CAF_CHECK(ordered);
}
