#pragma once

#include <caf/stateful_actor.hpp>

#include <cstddef>
#include <utility>

namespace actor_host {

/// A stateful actor whose behavior is built once and shared by every actor
/// of its kind, for kinds with many instances (a runtime connection per
/// socket; the pending request per call has since become a lean_actor, with
/// no behavior at all). CAF 0.17 builds a behavior per actor: its handlers,
/// each with its captured self pointer, and their dispatch table, ~45 bytes
/// a handler (a pending request's 11 handlers cost ~490 bytes per call). A
/// shared behavior's handlers capture nothing and act on
/// `current()`: the actor of this kind whose message the thread handles,
/// set by `resume`, within which CAF handles every message of a scheduled
/// actor (and calls its down, exit and error handlers).
///
/// Spawned like any function-based actor (the function takes a pointer to
/// this type as its self, sets up the state and returns the shared
/// behavior), or as a class derived from it whose make_behavior returns it
/// (a function's arguments wait on the heap, once more, until the actor
/// first runs). The behavior returned is a copy of one built
/// once and never freed: actors running at exit may still hold it.
template <class State, class Base>
class shared_behavior_actor : public caf::stateful_actor<State, Base> {
public:
  using super = caf::stateful_actor<State, Base>;

  explicit shared_behavior_actor(caf::actor_config& cfg) : super(cfg) {
  }

  /// The actor of this kind whose message this thread handles; null
  /// outside its handlers.
  static shared_behavior_actor* current() noexcept {
    return current_;
  }

  caf::resumable::resume_result resume(caf::execution_unit* ctx,
                                       std::size_t max_throughput) override {
    struct restore {
      shared_behavior_actor* prev;
      ~restore() {
        current_ = prev;
      }
    } guard{std::exchange(current_, this)};
    return super::resume(ctx, max_throughput);
  }

private:
  static inline thread_local shared_behavior_actor* current_ = nullptr;
};

} // namespace actor_host
