#pragma once

// What the bridge_tsan_test parts share: the failure count every check adds
// to, the worker pool that plays the actors, and a count of closed sessions.

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bridge_tsan {

inline int failures = 0;

inline void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
  }
}

/// Stands in for the actor side: work posted from I/O threads runs here.
class worker_pool {
public:
  explicit worker_pool(unsigned n) {
    for (unsigned i = 0; i < n; ++i)
      threads_.emplace_back([this] { run(); });
  }
  ~worker_pool() {
    {
      std::lock_guard<std::mutex> g{mtx_};
      done_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      t.join();
  }
  void post(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> g{mtx_};
      q_.push_back(std::move(f));
    }
    cv_.notify_one();
  }

private:
  void run() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> g{mtx_};
        cv_.wait(g, [this] { return done_ || !q_.empty(); });
        if (q_.empty())
          return;
        f = std::move(q_.front());
        q_.pop_front();
      }
      f();
    }
  }
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool done_ = false;
  std::vector<std::thread> threads_;
};

/// Counts closed sessions; the test waits on it.
struct close_count {
  std::mutex mtx;
  std::condition_variable cv;
  int n = 0;

  void add() {
    {
      std::lock_guard<std::mutex> g{mtx};
      ++n;
    }
    cv.notify_all();
  }
  bool wait_for(int want, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> g{mtx};
    return cv.wait_for(g, limit, [&] { return n >= want; });
  }
};

/// Echoes every frame from a pool thread, in order, like an actor: frames
/// queue in a mailbox that one pool thread at a time drains. Closes the

// Read-side backpressure and child processes (bridge_flow_traffic.cpp).
void windowed_traffic();
void child_processes();

} // namespace bridge_tsan
