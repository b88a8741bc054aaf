#pragma once

#include <caf/actor_clock.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
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
/// leaves no trace once the queue is compacted.
///
/// The owner keeps each thing's deadline itself (the call table: beside its
/// actor); this is a min-heap of (deadline, id) that forgets nothing on its
/// own. An entry whose id no longer has that deadline at its owner is
/// stale: skipped when it comes up, and dropped by `compact` once stale
/// entries are as many as live ones. 16 bytes a deadline (a number id),
/// where an ordered map by time and an index by id cost ~150 bytes of heap.
template <class Key>
class basic_deadline_queue {
public:
  using time_point = caf::actor_clock::time_point;

  /// Adds the deadline `at` of `id`. True if the owner must arm a wake-up at
  /// `at`: it is earlier than every wake-up armed so far.
  bool add(Key id, time_point at) {
    heap_.emplace_back(at, std::move(id));
    std::push_heap(heap_.begin(), heap_.end(), later{});
    if (armed_ && *armed_ <= at)
      return false;
    armed_ = at;
    return true;
  }

  /// Removes and returns the ids due at `now` whose deadline the owner
  /// still holds (`holds(id, at)`), earliest first, and forgets the wake-up
  /// that brought the owner here.
  template <class Holds>
  std::vector<Key> take_due(time_point now, Holds&& holds) {
    std::vector<Key> due;
    while (!heap_.empty() && heap_.front().first <= now) {
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      auto [at, id] = std::move(heap_.back());
      heap_.pop_back();
      if (holds(id, at))
        due.push_back(std::move(id));
    }
    // Only a wake-up at or before `now` has fired; a later one is still armed.
    if (armed_ && *armed_ <= now)
      armed_.reset();
    return due;
  }

  /// The wake-up the owner must arm after take_due, if any is still needed.
  template <class Holds>
  std::optional<time_point> rearm(Holds&& holds) {
    while (!heap_.empty() && !holds(heap_.front().second, heap_.front().first)) {
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      heap_.pop_back();
    }
    if (heap_.empty())
      return std::nullopt;
    auto next = heap_.front().first;
    if (armed_ && *armed_ <= next)
      return std::nullopt;
    armed_ = next;
    return next;
  }

  /// Rebuilt from the owner's `live` deadlines (`each(fn)` calls `fn(id,
  /// at)` for each) when stale entries outnumber them: amortized O(1) per
  /// deadline removed, and at most twice the live deadlines kept.
  template <class Each>
  void compact(std::size_t live, Each&& each) {
    if (heap_.size() < 2 * live + min_stale)
      return;
    heap_.clear();
    if (heap_.capacity() > 4 * live + min_stale)
      heap_.shrink_to_fit();
    each([this](const Key& id, time_point at) { heap_.emplace_back(at, id); });
    std::make_heap(heap_.begin(), heap_.end(), later{});
  }

  /// Forgets every deadline (and the wake-up armed: the owner may arm again).
  void clear() {
    heap_ = {};
    armed_.reset();
  }

  /// Entries, stale ones included.
  std::size_t entries() const noexcept { return heap_.size(); }

private:
  using entry = std::pair<time_point, Key>;
  // std::push_heap keeps the greatest first; this puts the earliest there.
  struct later {
    bool operator()(const entry& a, const entry& b) const { return a.first > b.first; }
  };
  static constexpr std::size_t min_stale = 64;
  std::vector<entry> heap_;
  // The earliest wake-up already armed (delayed messages cannot be recalled,
  // so a later deadline never needs a second one).
  std::optional<time_point> armed_;
};

using deadline_queue = basic_deadline_queue<std::string>;

} // namespace actor_host
