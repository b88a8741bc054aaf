#include "actors/dispatch/cancel_broadcast.hpp"

#include "actors/call/errors.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/dispatch/call_path.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace actor_host {

namespace {

using broadcast_actor = call_target_actor::extend_with<caller_actor, call_actor>;

struct broadcast_state {
  live_count live{actor_kind::cancel_broadcast};
  std::vector<cancel_target> targets;
  caller_actor caller;
  std::uint64_t tag = 0;
  std::size_t waiting = 0;
  call_error refusal; // the last runtime's
  static inline const char* name = "cancel_broadcast";
};

using self_ptr = broadcast_actor::stateful_pointer<broadcast_state>;

void answer(self_ptr self, call_end end) {
  auto& st = self->state;
  self->send(st.caller, done_atom_v, st.tag, std::move(end));
  self->quit();
}

void one_refused(self_ptr self, call_error error) {
  auto& st = self->state;
  st.refusal = std::move(error);
  if (--st.waiting == 0)
    answer(self, failed(std::move(st.refusal)));
}

broadcast_actor::behavior_type cancel_broadcast(self_ptr self, std::vector<cancel_target> targets) {
  self->state.targets = std::move(targets);
  return {
    [self](call_atom, call_request& req, caller_actor& caller) -> call_handle {
      auto& st = self->state;
      st.caller = std::move(caller);
      st.tag = req.tag;
      st.waiting = st.targets.size();
      // Each runtime's answer comes back tagged with its index.
      for (std::size_t i = 0; i < st.targets.size(); ++i) {
        auto one = req;
        one.tag = i;
        one.runtime_id = st.targets[i].runtime_id;
        auto method = req.method;
        self
          ->request(st.targets[i].conn, answered_in_handler, call_atom_v, std::move(one),
                    caf::actor_cast<caller_actor>(self))
          .then([](call_handle&) {},
                [self, method, id = st.targets[i].runtime_id](caf::error&) {
                  one_refused(self, manager_errors::connection_closed(id, method_name(method)));
                });
      }
      if (st.targets.empty())
        self->send(self, done_atom_v, std::uint64_t{0}, failed(manager_errors::no_runtimes()));
      return call_handle{caf::actor_cast<call_actor>(self), 0};
    },
    [](trace_atom, std::uint64_t, const std::string&) {},
    [](chunk_atom, std::uint64_t, const std::string&) {},
    [self](done_atom, std::uint64_t, call_end& end) {
      if (end.ok || self->state.targets.empty())
        return answer(self, std::move(end));
      one_refused(self, std::move(end.error));
    },
    [](input_atom, std::uint64_t, const std::string&) {},
    [](end_input_atom, std::uint64_t) {},
    [self](abort_atom, std::uint64_t) { self->quit(); },
  };
}

} // namespace

call_target_actor start_cancel_broadcast(caf::actor_system& sys,
                                         std::vector<cancel_target> targets) {
  return caf::actor_cast<call_target_actor>(sys.spawn(cancel_broadcast, std::move(targets)));
}

} // namespace actor_host
