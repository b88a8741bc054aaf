#define CAF_SUITE grpc_wakeups

#include <caf/test/unit_test.hpp>

#include "grpc_door/detail/cq_wakeups.hpp"

#include <grpcpp/completion_queue.h>

#include <chrono>
#include <thread>
#include <vector>

using actor_host::grpc_door::detail::cq_tag;
using actor_host::grpc_door::detail::cq_wakeups;
using actor_host::grpc_door::detail::wakeup_target;

namespace {

struct target final : wakeup_target {
  std::vector<int>* order = nullptr;
  int id = 0;
  int woken_times = 0;
  void woken() override {
    ++woken_times;
    order->push_back(id);
  }
};

/// The next event of `cq` within a second, handed to its tag as the door's
/// poller does; false when none came.
bool poll_one(grpc::CompletionQueue& cq) {
  void* tag = nullptr;
  bool ok = false;
  auto st = cq.AsyncNext(&tag, &ok, std::chrono::system_clock::now() + std::chrono::seconds(1));
  if (st != grpc::CompletionQueue::GOT_EVENT)
    return false;
  static_cast<cq_tag*>(tag)->on_event(ok);
  return true;
}

/// Whether an event is ready now (no wait).
bool event_ready(grpc::CompletionQueue& cq) {
  void* tag = nullptr;
  bool ok = false;
  auto st = cq.AsyncNext(&tag, &ok, std::chrono::system_clock::now());
  if (st == grpc::CompletionQueue::GOT_EVENT)
    static_cast<cq_tag*>(tag)->on_event(ok);
  return st == grpc::CompletionQueue::GOT_EVENT;
}

void drain(grpc::CompletionQueue& cq) {
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
}

} // namespace

CAF_TEST(a batch pushed from another thread is woken once in order by one event) {
  grpc::CompletionQueue cq;
  std::vector<int> order;
  {
    cq_wakeups w;
    w.bind(&cq);
    std::vector<target> ts(5);
    for (int i = 0; i < 5; ++i)
      ts[i].order = &order, ts[i].id = i;
    std::thread pusher{[&] {
      for (auto& t : ts)
        w.push(&t);
    }};
    pusher.join();
    CAF_CHECK_EQUAL(w.queued(), 5u);
    CAF_REQUIRE(poll_one(cq));
    CAF_CHECK_EQUAL(w.queued(), 0u);
    CAF_CHECK_EQUAL(order, (std::vector<int>{0, 1, 2, 3, 4}));
    for (auto& t : ts)
      CAF_CHECK_EQUAL(t.woken_times, 1);
    // One alarm for the batch: nothing else is on the queue.
    CAF_CHECK(!event_ready(cq));
  }
  drain(cq);
}

CAF_TEST(the alarm is set again for the next batch once its event came) {
  grpc::CompletionQueue cq;
  std::vector<int> order;
  {
    cq_wakeups w;
    w.bind(&cq);
    target a;
    target b;
    a.order = b.order = &order;
    a.id = 1;
    b.id = 2;
    w.push(&a);
    CAF_REQUIRE(poll_one(cq));
    w.push(&b);
    CAF_REQUIRE(poll_one(cq));
    CAF_CHECK_EQUAL(order, (std::vector<int>{1, 2}));
    CAF_CHECK(!event_ready(cq));
  }
  drain(cq);
}
