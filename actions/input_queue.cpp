#include "actions/input_queue.hpp"

#include <poll.h>

namespace actor_host::actions {

input_queue::input_queue(const cancel_flag& cancel) : cancel_(cancel) {
}

void input_queue::update_readiness() {
  bool want = !items_.empty() || ended_;
  if (want && !readable_)
    fd_.raise();
  else if (!want && readable_)
    fd_.lower();
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
    pollfd p[2] = {{fd_.get(), POLLIN, 0}, {cancel_.fd(), POLLIN, 0}};
    ::poll(p, 2, -1);
  }
}

int input_queue::fd() const {
  return fd_.get();
}

} // namespace actor_host::actions
