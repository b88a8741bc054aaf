#pragma once

#include <bit>
#include <cstddef>
#include <utility>
#include <vector>

namespace actor_host {

/// A hash map of at most `cap` entries, held inline in one array sized
/// once (open addressing, linear probing, deletion by backward shift: no
/// tombstones, so probes stay short however often entries come and go).
/// The trace keeper's indexes (trace_key -> count, trace_key -> root): as
/// std::unordered_map every lookup walked a bucket and then a node elsewhere
/// in memory, and every insert and erase was a heap block; those maps were
/// a tenth of the keeper's thread with the store on
/// (bench/runs/2026-12-07-trace-cost2.md). Key needs hash() and ==.
/// Bounded: try_emplace refuses a new key once `cap` are held.
template <class Key, class Value>
class flat_key_map {
public:
  // At most two thirds full (a probe that misses then looks at ~5 slots,
  // ~1.4 at a quarter full): the tables are a few thousand slots looked up at
  // random, so their size in cache lines is what a lookup costs
  // (bench/runs/2026-12-07-trace-rowid.md).
  explicit flat_key_map(std::size_t cap)
    : slots_(std::bit_ceil(cap + cap / 2 + 1)), mask_(slots_.size() - 1), cap_(cap) {
  }

  std::size_t size() const noexcept {
    return size_;
  }
  std::size_t capacity() const noexcept {
    return cap_;
  }

  /// The value of `key`, or null.
  Value* find(const Key& key) noexcept {
    auto h = key.hash();
    for (auto i = h & mask_;; i = (i + 1) & mask_) {
      auto& s = slots_[i];
      if (!s.used)
        return nullptr;
      if (s.hash == h && s.key == key)
        return &s.value;
    }
  }

  /// The value of `key`, added as `value` if it was not there (second:
  /// whether it was added); {null, false} if it was not there and the map
  /// is full.
  std::pair<Value*, bool> try_emplace(const Key& key, Value value) {
    auto h = key.hash();
    auto i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      auto& s = slots_[i];
      if (!s.used)
        break;
      if (s.hash == h && s.key == key)
        return {&s.value, false};
    }
    if (size_ == cap_)
      return {nullptr, false};
    auto& s = slots_[i];
    s.key = key;
    s.value = std::move(value);
    s.hash = h;
    s.used = true;
    ++size_;
    return {&s.value, true};
  }

  /// Whether `key` was there.
  bool erase(const Key& key) {
    auto h = key.hash();
    auto i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      auto& s = slots_[i];
      if (!s.used)
        return false;
      if (s.hash == h && s.key == key)
        break;
    }
    // Backward shift: every entry after the hole that may sit in it (its
    // home slot is not between the hole and itself) moves back.
    for (auto j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      auto& next = slots_[j];
      if (!next.used)
        break;
      auto home = next.hash & mask_;
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = std::move(next);
        i = j;
      }
    }
    slots_[i] = slot{};
    --size_;
    return true;
  }

private:
  struct slot {
    Key key{};
    Value value{};
    std::size_t hash = 0;
    bool used = false;
  };
  std::vector<slot> slots_;
  std::size_t mask_;
  std::size_t cap_;
  std::size_t size_ = 0;
};

} // namespace actor_host
