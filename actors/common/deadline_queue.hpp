#pragma once

#include <caf/actor_clock.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace actor_host {

/// Deadlines of many short-lived things (requests, invocations), kept by the
/// long-lived actor that owns their ids, with one wake-up for the earliest.
///
/// Why not a delayed message per request: in CAF 0.17 a delayed message holds
/// a strong reference to its receiver until it fires, and `cancel_timeouts`
/// at exit does not drop it. A request answered in 1 ms with a 5-minute
/// deadline pinned its actor's memory (~1.4 KB) for the full 5 minutes: at
/// 3,000 calls/s that is ~1.2 GB held for nothing. Here a finished request
/// leaves no trace: its id is removed and nothing refers to its actor.
///
/// `Key` is the things' id: a string, or a number where the owner's ids are
/// numbers (a runtime connection's calls: smaller entries).
template <class Key>
class basic_deadline_queue {
public:
  using time_point = caf::actor_clock::time_point;

  /// Adds (or moves) the deadline of `id`. True if the owner must arm a
  /// wake-up at `at`: it is earlier than every wake-up armed so far.
  bool add(const Key& id, time_point at);

  /// Forgets `id`; no-op if it has no deadline.
  void remove(const Key& id);

  /// Removes and returns every id due at `now`, earliest first, and forgets
  /// the wake-up that brought the owner here.
  std::vector<Key> take_due(time_point now);

  /// The wake-up the owner must arm after take_due, if any is still needed.
  std::optional<time_point> rearm();

  std::size_t size() const noexcept { return by_key_.size(); }
  bool empty() const noexcept { return by_key_.empty(); }

private:
  using map_type = std::multimap<time_point, Key>;
  map_type by_time_;
  std::unordered_map<Key, typename map_type::iterator> by_key_;
  // The earliest wake-up already armed (delayed messages cannot be recalled,
  // so a later deadline never needs a second one).
  std::optional<time_point> armed_;
};

extern template class basic_deadline_queue<std::string>;
extern template class basic_deadline_queue<std::uint64_t>;

using deadline_queue = basic_deadline_queue<std::string>;

} // namespace actor_host
