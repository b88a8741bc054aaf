#pragma once

#include "actions/action.hpp"

#include <boost/json.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>

namespace actor_host::testing {

/// Holds action handlers (which run on detached threads, even under the test
/// coordinator) until the test opens it, so that no handler finishes while
/// the test thread runs the scheduler. Fixtures open it at the end, so a
/// failing test never leaves a thread blocked.
struct gate {
  std::mutex mtx;
  std::condition_variable cv;
  bool is_open = false;

  void open() {
    {
      std::lock_guard<std::mutex> guard{mtx};
      is_open = true;
    }
    cv.notify_all();
  }

  void wait() {
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait(guard, [this] { return is_open; });
  }
};

using gate_ptr = std::shared_ptr<gate>;

/// A handler that waits for the gate, then drains its input stream (if any)
/// and returns the chunks it read.
inline actions::action_handler collect_inputs_after(gate_ptr g) {
  return [g = std::move(g)](actions::action_context& ctx) -> boost::json::value {
    g->wait();
    boost::json::array out;
    if (auto* in = ctx.inputs())
      while (auto chunk = in->next())
        out.push_back(std::move(*chunk));
    return out;
  };
}

} // namespace actor_host::testing
