#include "actions/slot_pool.hpp"

#include "actions/program_action.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace actor_host::actions {

slot_lease::~slot_lease() {
  if (pool_)
    pool_->release();
}

slot_pool::slot_pool(std::size_t slots)
  : fd_(::eventfd(static_cast<unsigned>(std::min<std::size_t>(slots, UINT_MAX)),
                  EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!fd_)
    throw std::system_error(errno, std::generic_category(), "eventfd");
}

slot_lease slot_pool::acquire(const cancel_signal& cancel, run_deadline deadline) {
  for (;;) {
    // Several waiters wake on one released slot; the losers' reads fail
    // with EAGAIN and they go back to poll().
    if (try_acquire())
      return slot_lease{shared_from_this()};
    pollfd fds[] = {{fd_.get(), POLLIN, 0}, {cancel.fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, poll_timeout(deadline));
    if (n < 0 && errno != EINTR)
      throw program_error(wire::status_code::internal,
                          std::string{"poll: "} + std::strerror(errno), {});
    if (cancel.cancelled() || passed(deadline))
      return slot_lease{};
  }
}

bool slot_pool::try_acquire() noexcept {
  std::uint64_t one = 0;
  return ::read(fd_.get(), &one, sizeof one) == sizeof one;
}

void slot_pool::release() noexcept {
  std::uint64_t one = 1;
  // Cannot fail: the counter never exceeds the slot count.
  [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
}

} // namespace actor_host::actions
