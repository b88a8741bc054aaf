#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

namespace actor_host::apps {

/// Why the process should end: a signal, or the attached command finishing.
/// The first reason wins; later ones are ignored.
class exit_latch {
public:
  struct reason {
    int signal = 0;    // SIGINT/SIGTERM, or 0
    int exit_code = 0; // when signal == 0
    std::string reason;
  };

  void signal(int sig) {
    set({sig, 0, {}});
  }

  void finish(int exit_code, std::string why) {
    set({0, exit_code, std::move(why)});
  }

  reason wait() {
    std::unique_lock<std::mutex> guard{mtx_};
    cv_.wait(guard, [this] { return done_; });
    return why_;
  }

private:
  void set(reason r) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (done_)
        return;
      done_ = true;
      why_ = std::move(r);
    }
    cv_.notify_all();
  }

  std::mutex mtx_;
  std::condition_variable cv_;
  bool done_ = false;
  reason why_;
};

} // namespace actor_host::apps
