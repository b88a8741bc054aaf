#pragma once

#include "actors/common/messages.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actor_host {

/// Bidi input that arrives before the one it is for can take it: a call its
/// connection has not accepted yet (the front doors' callers, the cluster
/// gateway's inbound calls) or a run whose runtime has not reported its trace
/// id yet (pending_request: Genkit JS runtimes drop earlier input). Kept in
/// wire order with the end of input, within a byte cap, and handed on in one
/// go.
class held_input {
public:
  /// Holds a chunk. False, holding nothing, when the bytes held would pass
  /// `cap` (0: no cap); the caller then fails the call.
  [[nodiscard]] bool hold(std::string chunk, std::size_t cap) {
    auto bytes = held_ ? held_->bytes : 0;
    if (cap != 0 && bytes + chunk.size() > cap)
      return false;
    auto& h = part();
    h.bytes += chunk.size();
    h.items.push_back({std::move(chunk), false});
    return true;
  }

  /// Holds the end of input, after what came before it.
  void hold_end() {
    part().items.push_back({std::string{}, true});
  }

  /// Hands on what is held, in order: `chunk(std::string&&)` for each chunk,
  /// `end()` for the end of input. Holds nothing after.
  template <class Chunk, class End>
  void release(Chunk&& chunk, End&& end) {
    if (!held_)
      return;
    auto held = std::move(held_);
    for (auto& i : held->items) {
      if (i.end)
        end();
      else
        chunk(std::move(i.text));
    }
  }

  /// Releases to the call that now takes the input (a call_handle,
  /// actors/call/interfaces.hpp): its input for each chunk, its end of
  /// input for the end.
  template <class Self, class Handle>
  void release_to(Self* self, const Handle& to) {
    release([&](std::string&& text) { to.send_input(self, std::move(text)); },
            [&] { to.send_end_input(self); });
  }

  bool empty() const noexcept {
    return !held_ || held_->items.empty();
  }

  /// What is held: chunks, and the end of input if it came.
  std::size_t size() const noexcept {
    return held_ ? held_->items.size() : 0;
  }

private:
  struct item {
    std::string text;
    bool end;
  };
  struct part_type {
    std::vector<item> items;
    std::size_t bytes = 0;
  };

  part_type& part() {
    if (!held_)
      held_ = std::make_unique<part_type>();
    return *held_;
  }

  // Made when something is held: most calls hold nothing, and every call
  // a caller keeps has one of these (8 bytes rather than 32).
  std::unique_ptr<part_type> held_;
};

/// A call its connection accepted, as the caller that keeps `c` sees it:
/// `c` (null when the caller finished it meanwhile, so nobody waits for it
/// any more: the call is aborted) learns its call_handle and gets the input
/// held for it. False when aborted.
template <class Self, class Call, class Handle>
bool take_accepted(Self* self, Call* c, const Handle& pending) {
  if (c == nullptr) {
    pending.send_abort(self);
    return false;
  }
  c->pending = pending;
  c->held.release_to(self, pending);
  return true;
}

} // namespace actor_host
