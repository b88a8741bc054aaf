// A run of an idempotent action with one more try (call_path.hpp,
// start_retry_relay).
#include "actors/common/live_counts.hpp"
#include "actors/dispatch/call_path.hpp"
#include "obs/metrics.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

using retry_actor = call_target_actor::extend_with<caller_actor, call_actor>;

struct retry_state {
  live_count live{actor_kind::retry_relay};
  front_door door; // without idempotent actions: the tries are plain calls
  call_request req;
  caller_actor caller; // the door's
  std::uint64_t tag = 0;
  call_handle current;      // the try in flight
  caf::actor_addr tried_on; // the replica of the first try
  bool streamed = false;    // something reached the caller: no retry then
  bool retried = false;
  static inline const char* name = "retry_relay";
};

using self_ptr = retry_actor::stateful_pointer<retry_state>;

void end(self_ptr self, call_end e) {
  auto& st = self->state;
  if (st.caller) {
    self->demonitor(st.caller.address());
    self->send(st.caller, done_atom_v, st.tag, std::move(e));
  }
  self->quit();
}

void attempt(self_ptr self, caf::actor_addr avoid) {
  auto& st = self->state;
  auto req = st.req;
  req.tag = 0;
  detail::route_and_hand_off(
    self, st.door, st.door.routes->current(), std::move(req), caf::actor_cast<caller_actor>(self),
    [self](call_handle call) { self->state.current = std::move(call); },
    [self](call_end e) { end(self, std::move(e)); }, avoid,
    &st.tried_on);
}

retry_actor::behavior_type retry_relay(self_ptr self, front_door door) {
  self->state.door = std::move(door);
  self->state.door.policy.idempotent_actions.clear();
  self->set_down_handler([self](caf::down_msg&) {
    // The caller left: its run is abandoned.
    auto& st = self->state;
    st.caller = nullptr;
    if (st.current)
      st.current.send_abort(self);
    self->quit();
  });
  return {
    [self](call_atom, call_request& req, caller_actor& caller) -> call_handle {
      auto& st = self->state;
      st.caller = std::move(caller);
      st.tag = req.tag;
      st.req = std::move(req);
      self->monitor(st.caller);
      attempt(self, {});
      return call_handle{caf::actor_cast<call_actor>(self), 0};
    },
    [self](trace_atom, std::uint64_t, std::string& trace) {
      auto& st = self->state;
      if (st.caller)
        self->send(st.caller, trace_atom_v, st.tag, std::move(trace));
    },
    [self](chunk_atom, std::uint64_t, std::string& raw) {
      auto& st = self->state;
      st.streamed = true;
      if (st.caller)
        self->send(st.caller, chunk_atom_v, st.tag, std::move(raw));
    },
    [self](done_atom, std::uint64_t, call_end& e) {
      auto& st = self->state;
      st.current = {};
      if (e.ok || st.retried || st.streamed
          || e.error.status != static_cast<int>(wire::status_code::unavailable))
        return end(self, std::move(e));
      st.retried = true;
      obs::global().idempotent_retries.fetch_add(1, std::memory_order_relaxed);
      spdlog::info("retrying {} on another replica (idempotent): the first run ended "
                   "UNAVAILABLE",
                   st.req.key);
      attempt(self, st.tried_on);
    },
    // The relay is its call's own actor: the call id is 0.
    [self](input_atom, std::uint64_t, std::string& chunk) {
      if (self->state.current)
        self->state.current.send_input(self, std::move(chunk));
    },
    [self](end_input_atom, std::uint64_t) {
      if (self->state.current)
        self->state.current.send_end_input(self);
    },
    [self](abort_atom, std::uint64_t) {
      auto& st = self->state;
      if (st.current)
        st.current.send_abort(self);
      st.caller = nullptr;
      self->quit();
    },
  };
}

} // namespace

call_target_actor start_retry_relay(caf::actor_system& sys, front_door door) {
  return caf::actor_cast<call_target_actor>(sys.spawn(retry_relay, std::move(door)));
}

} // namespace actor_host
