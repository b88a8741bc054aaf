#include "actions/run_signals.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace actor_host::actions {

namespace {

int make_eventfd() {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(), "eventfd");
  return fd;
}

void raise(int fd) {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(fd, &one, sizeof(one));
}

void lower(int fd) {
  std::uint64_t v;
  [[maybe_unused]] auto n = ::read(fd, &v, sizeof(v));
}

} // namespace

cancel_flag::cancel_flag() : fd_(make_eventfd()) {
}

cancel_flag::~cancel_flag() {
  ::close(fd_);
}

void cancel_flag::trigger() {
  if (!cancelled_.exchange(true))
    raise(fd_);
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
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30)));
  }
  return true;
}

int cancel_flag::fd() const {
  return fd_;
}

input_queue::input_queue(const cancel_flag& cancel) : cancel_(cancel), fd_(make_eventfd()) {
}

input_queue::~input_queue() {
  ::close(fd_);
}

void input_queue::update_readiness() {
  bool want = !items_.empty() || ended_;
  if (want && !readable_)
    raise(fd_);
  else if (!want && readable_)
    lower(fd_);
  readable_ = want;
}

void input_queue::push(boost::json::value chunk, std::size_t bytes) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (ended_)
    return;
  held_bytes_ += bytes;
  items_.emplace_back(std::move(chunk), bytes);
  update_readiness();
}

void input_queue::end() {
  std::lock_guard<std::mutex> guard{mutex_};
  ended_ = true;
  update_readiness();
}

bool input_queue::ended() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return ended_;
}

std::size_t input_queue::held_bytes() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return held_bytes_;
}

std::optional<boost::json::value> input_queue::try_next(bool& ended) {
  std::lock_guard<std::mutex> guard{mutex_};
  ended = false;
  if (!items_.empty()) {
    auto v = std::move(items_.front().first);
    held_bytes_ -= items_.front().second;
    items_.pop_front();
    update_readiness();
    return v;
  }
  ended = ended_;
  return std::nullopt;
}

std::optional<boost::json::value> input_queue::next() {
  for (;;) {
    bool ended = false;
    if (auto v = try_next(ended))
      return v;
    if (ended || cancel_.cancelled())
      return std::nullopt;
    pollfd p[2] = {{fd_, POLLIN, 0}, {cancel_.fd(), POLLIN, 0}};
    ::poll(p, 2, -1);
  }
}

int input_queue::fd() const {
  return fd_;
}

} // namespace actor_host::actions
