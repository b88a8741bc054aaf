#pragma once

#include "proc/unique_fd.hpp"

#include <cerrno>
#include <cstdint>
#include <system_error>

#include <sys/eventfd.h>
#include <unistd.h>

namespace actor_host::proc {

/// A non-blocking eventfd used as a flag that poll() can see: readable while
/// raised. How one thread wakes another thread's poll() loop.
class event_fd {
public:
  /// Lowered. Throws std::system_error if the kernel refuses an eventfd.
  event_fd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!fd_)
      throw std::system_error(errno, std::generic_category(), "eventfd");
  }

  int get() const noexcept {
    return fd_.get();
  }

  /// Makes the fd readable. Raising twice needs one lower().
  void raise() noexcept {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
  }

  /// Makes the fd unreadable again.
  void lower() noexcept {
    std::uint64_t v;
    [[maybe_unused]] auto n = ::read(fd_.get(), &v, sizeof v);
  }

private:
  unique_fd fd_;
};

} // namespace actor_host::proc
