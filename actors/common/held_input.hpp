#pragma once

#include "actors/common/messages.hpp"

#include <cstddef>
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
    if (cap != 0 && bytes_ + chunk.size() > cap)
      return false;
    bytes_ += chunk.size();
    items_.push_back({std::move(chunk), false});
    return true;
  }

  /// Holds the end of input, after what came before it.
  void hold_end() {
    items_.push_back({std::string{}, true});
  }

  /// Hands on what is held, in order: `chunk(std::string&&)` for each chunk,
  /// `end()` for the end of input. Holds nothing after.
  template <class Chunk, class End>
  void release(Chunk&& chunk, End&& end) {
    auto items = std::move(items_);
    items_.clear();
    bytes_ = 0;
    for (auto& i : items) {
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
    return items_.empty();
  }

  /// What is held: chunks, and the end of input if it came.
  std::size_t size() const noexcept {
    return items_.size();
  }

private:
  struct item {
    std::string text;
    bool end;
  };
  std::vector<item> items_;
  std::size_t bytes_ = 0;
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
