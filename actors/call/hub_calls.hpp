#pragma once

#include "actors/call/interfaces.hpp"

#include <caf/actor_addr.hpp>
#include <caf/system_messages.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace actor_host {

/// The calls of a hub: one actor that is the caller of many calls, told
/// apart by the tag its door gave each (grpc_caller, http_run_hub), instead
/// of an actor spawned, adopted and reaped per call. `Call` keeps its
/// `call_handle pending` once accepted. A call's actor is monitored only
/// when its caller must (call_handle::needs_monitor: another node's);
/// by_pending names the call a down message is about.
template <class Call>
struct hub_calls {
  std::unordered_map<std::uint64_t, Call> by_tag;
  std::unordered_map<caf::actor_addr, std::uint64_t> by_pending;

  Call* find(std::uint64_t tag) {
    auto i = by_tag.find(tag);
    return i == by_tag.end() ? nullptr : &i->second;
  }

  /// The call of `tag`, accepted as `pending` (its `pending` set already):
  /// monitored if need be.
  template <class Self>
  void watch(Self* self, std::uint64_t tag, const call_handle& pending) {
    if (!pending.needs_monitor(self))
      return;
    pending.monitor(self);
    by_pending.emplace(pending.actor.address(), tag);
  }

  /// The call of `tag` goes (answered, failed, or its client left).
  template <class Self>
  void forget(Self* self, std::uint64_t tag) {
    auto i = by_tag.find(tag);
    if (i == by_tag.end())
      return;
    if (auto& p = i->second.pending; p && p.needs_monitor(self)) {
      p.demonitor(self);
      by_pending.erase(p.actor.address());
    }
    by_tag.erase(i);
  }

  /// The tag of the call whose monitored actor `dm` says is gone (its
  /// handle cleared: nothing to demonitor), if it is one of ours.
  std::optional<std::uint64_t> gone(const caf::down_msg& dm) {
    auto i = by_pending.find(dm.source);
    if (i == by_pending.end())
      return std::nullopt;
    auto tag = i->second;
    by_pending.erase(i);
    if (auto* c = find(tag))
      c->pending = {};
    return tag;
  }
};

/// A door's hubs, taken round robin, and a tag per call unique across them.
/// Called from any thread (the door's).
template <class Hub>
class hub_ring {
public:
  explicit hub_ring(std::vector<Hub> hubs) : hubs_(std::move(hubs)) {
  }

  std::pair<const Hub&, std::uint64_t> next() {
    auto tag = next_.fetch_add(1, std::memory_order_relaxed);
    return {hubs_[tag % hubs_.size()], tag};
  }

private:
  std::vector<Hub> hubs_;
  std::atomic<std::uint64_t> next_{1};
};

} // namespace actor_host
