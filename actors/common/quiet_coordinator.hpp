#pragma once

#include "actors/common/quiet_clock.hpp"

#include <caf/detail/set_thread_name.hpp>
#include <caf/scheduler/coordinator.hpp>

#include <thread>

namespace actor_host {

/// CAF's coordinator with its clock swapped. The base keeps its own clock
/// and thread (private to it, idle: nothing reaches that clock once
/// clock() is overridden); this one runs the quiet clock's dispatch loop.
template <class Policy>
class quiet_coordinator : public caf::scheduler::coordinator<Policy> {
public:
  using super = caf::scheduler::coordinator<Policy>;

  using super::super;

  quiet_clock& clock() noexcept override {
    return clock_;
  }

protected:
  void start() override {
    super::start();
    timer_ = std::thread{[this] {
      caf::detail::set_thread_name("caf.clock");
      this->system().thread_started();
      clock_.run_dispatch_loop();
      this->system().thread_terminates();
    }};
  }

  void stop() override {
    // The workers' last cleanups may still cancel timeouts: the loop ends
    // after them.
    super::stop();
    clock_.cancel_dispatch_loop();
    timer_.join();
  }

private:
  quiet_clock clock_;
  std::thread timer_;
};

} // namespace actor_host
