#pragma once

#include <utility>

#include <unistd.h>

namespace actor_host::proc {

/// Owns one file descriptor.
class unique_fd {
public:
  unique_fd() = default;
  explicit unique_fd(int fd) : fd_(fd) {
  }
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {
  }
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other)
      reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~unique_fd() {
    reset();
  }

  int get() const noexcept {
    return fd_;
  }
  explicit operator bool() const noexcept {
    return fd_ >= 0;
  }
  int release() noexcept {
    return std::exchange(fd_, -1);
  }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }

private:
  int fd_ = -1;
};

} // namespace actor_host::proc
