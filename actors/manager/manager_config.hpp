#pragma once

#include <caf/timespan.hpp>

#include <chrono>

namespace actor_host {

/// Call policy of the manager, shared by every caller session.
struct call_policy {
  caf::timespan request_timeout{std::chrono::seconds(30)}; // listActions, listValues, cancelAction
  caf::timespan run_timeout{0};                            // runAction; 0 = none
};

} // namespace actor_host
