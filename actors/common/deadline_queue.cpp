#include "actors/common/deadline_queue.hpp"

namespace actor_host {

template <class Key>
bool basic_deadline_queue<Key>::add(const Key& id, time_point at) {
  remove(id);
  by_key_.emplace(id, by_time_.emplace(at, id));
  if (armed_ && *armed_ <= at)
    return false;
  armed_ = at;
  return true;
}

template <class Key>
void basic_deadline_queue<Key>::remove(const Key& id) {
  auto i = by_key_.find(id);
  if (i == by_key_.end())
    return;
  by_time_.erase(i->second);
  by_key_.erase(i);
}

template <class Key>
std::vector<Key> basic_deadline_queue<Key>::take_due(time_point now) {
  std::vector<Key> due;
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

template <class Key>
std::optional<typename basic_deadline_queue<Key>::time_point> basic_deadline_queue<Key>::rearm() {
  if (by_time_.empty())
    return std::nullopt;
  auto next = by_time_.begin()->first;
  if (armed_ && *armed_ <= next)
    return std::nullopt;
  armed_ = next;
  return next;
}

template class basic_deadline_queue<std::string>;
template class basic_deadline_queue<std::uint64_t>;

} // namespace actor_host
