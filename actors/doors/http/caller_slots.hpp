#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace actor_host {

/// Calls in flight per HTTP peer address. A plain HTTP caller is its address,
/// not its connection: a client can open any number of connections, and one
/// connection carries one request at a time anyway. Taken on the I/O thread
/// (a flood is refused before anything is spawned), given back by the
/// caller's actor, hence the lock.
class caller_slots {
public:
  explicit caller_slots(std::size_t cap) : cap_(cap) {
  }

  /// Takes a slot for `address`, or returns false at the cap (logged once per
  /// stretch at the cap).
  bool acquire(const std::string& address);
  void release(const std::string& address);

  std::size_t cap() const {
    return cap_;
  }

private:
  struct entry {
    std::size_t calls = 0;
    bool warned = false;
  };
  const std::size_t cap_;
  std::mutex mtx_;
  std::unordered_map<std::string, entry> in_flight_;
};

/// One slot, held by an HTTP caller for its lifetime, whichever way it ends.
class caller_slot {
public:
  caller_slot() = default;
  caller_slot(std::shared_ptr<caller_slots> slots, std::string address)
    : slots_(std::move(slots)), address_(std::move(address)) {
  }
  caller_slot(caller_slot&& other) noexcept = default;
  caller_slot& operator=(caller_slot&& other) noexcept {
    std::swap(slots_, other.slots_);
    std::swap(address_, other.address_);
    return *this;
  }
  caller_slot(const caller_slot&) = delete;
  caller_slot& operator=(const caller_slot&) = delete;
  ~caller_slot() {
    if (slots_)
      slots_->release(address_);
  }

private:
  std::shared_ptr<caller_slots> slots_;
  std::string address_;
};

/// "1.2.3.4" of "1.2.3.4:5678" (the port is the connection's, not the caller's).
std::string address_of(const std::string& peer);

} // namespace actor_host
