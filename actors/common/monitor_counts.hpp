#pragma once

// Actors one actor watches on behalf of many calls: each monitored once,
// however many of its calls are open, and demonitored with the last.
//
// CAF 0.17 keeps a monitored actor's monitors in a list it searches
// linearly at every demonitor: with one monitor per call, each call's end
// cost a scan of every call its caller had open (15 % of a node's I/O
// thread when one gateway had 512 calls on one runtime connection,
// bench/ANALYSIS.md). With one per caller it is a scan of that caller's
// watchers, a few.

#include <caf/actor_addr.hpp>

#include <cstdint>
#include <memory>
#include <unordered_map>

namespace actor_host {

/// 8 bytes until the first watch (a runtime connection has one, and most
/// idle ones are never called).
class monitor_counts {
public:
  /// One more call of `who`'s: monitored by `self` if it is the first.
  template <class Self, class Handle>
  void watch(Self* self, const Handle& who) {
    if (!counts_)
      counts_ = std::make_unique<map>();
    if ((*counts_)[who.address()]++ == 0)
      self->monitor(who);
  }

  /// A call of `who`'s ended: demonitored by `self` with the last. Nothing
  /// if `who` is not watched (it went down: forgotten then).
  template <class Self>
  void unwatch(Self* self, const caf::actor_addr& who) {
    if (!counts_)
      return;
    auto i = counts_->find(who);
    if (i == counts_->end())
      return;
    if (--i->second == 0) {
      self->demonitor(who);
      counts_->erase(i);
    }
  }

  /// `who` went down (its down message): true if it was watched here. Its
  /// monitor went with it.
  bool forget(const caf::actor_addr& who) {
    return counts_ && counts_->erase(who) > 0;
  }

  /// Every monitor removed (the watcher ends while the callers live on: a
  /// monitor left behind would stay in the caller until it ends).
  template <class Self>
  void unwatch_all(Self* self) {
    if (!counts_)
      return;
    for (auto& [who, n] : *counts_)
      self->demonitor(who);
    counts_->clear();
  }

  bool contains(const caf::actor_addr& who) const {
    return counts_ && counts_->contains(who);
  }

  /// How many calls `who` has open here (0 if it is not watched).
  std::uint32_t calls_of(const caf::actor_addr& who) const {
    if (!counts_)
      return 0;
    auto i = counts_->find(who);
    return i == counts_->end() ? 0 : i->second;
  }

  bool empty() const noexcept {
    return !counts_ || counts_->empty();
  }

  std::size_t size() const noexcept {
    return counts_ ? counts_->size() : 0;
  }

private:
  using map = std::unordered_map<caf::actor_addr, std::uint32_t>;
  std::unique_ptr<map> counts_;
};

} // namespace actor_host
