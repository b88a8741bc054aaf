#include "actions/cancel_flag.hpp"

#include <algorithm>
#include <cstdint>

#include <poll.h>

namespace actor_host::actions {

void cancel_flag::trigger() {
  if (!cancelled_.exchange(true))
    fd_.raise();
}

bool cancel_flag::cancelled() const {
  return cancelled_.load();
}

bool cancel_flag::wait_for(std::chrono::milliseconds d) const {
  auto deadline = std::chrono::steady_clock::now() + d;
  while (!cancelled()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd_.get(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30)));
  }
  return true;
}

int cancel_flag::fd() const {
  return fd_.get();
}

} // namespace actor_host::actions
