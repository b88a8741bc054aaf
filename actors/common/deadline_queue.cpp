#include "actors/common/deadline_queue.hpp"

namespace actor_host {

bool deadline_queue::add(const std::string& id, time_point at) {
  remove(id);
  by_key_.emplace(id, by_time_.emplace(at, id));
  if (armed_ && *armed_ <= at)
    return false;
  armed_ = at;
  return true;
}

void deadline_queue::remove(const std::string& id) {
  auto i = by_key_.find(id);
  if (i == by_key_.end())
    return;
  by_time_.erase(i->second);
  by_key_.erase(i);
}

std::vector<std::string> deadline_queue::take_due(time_point now) {
  std::vector<std::string> due;
  auto end = by_time_.upper_bound(now);
  for (auto i = by_time_.begin(); i != end; ++i) {
    by_key_.erase(i->second);
    due.push_back(std::move(i->second));
  }
  by_time_.erase(by_time_.begin(), end);
  // Only a wake-up at or before `now` has fired; a later one is still armed.
  if (armed_ && *armed_ <= now)
    armed_.reset();
  return due;
}

std::optional<deadline_queue::time_point> deadline_queue::rearm() {
  if (by_time_.empty())
    return std::nullopt;
  auto next = by_time_.begin()->first;
  if (armed_ && *armed_ <= next)
    return std::nullopt;
  armed_ = next;
  return next;
}

} // namespace actor_host
