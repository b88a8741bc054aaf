#include "actors/cluster/remote_call.hpp"

#include "actors/call/errors.hpp"
#include "actors/common/live_counts.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

using relay_actor = call_target_actor::extend_with<caller_actor, call_actor>;

/// The gateway as a relay uses it (gateway.hpp; messages.hpp lists the rest).
using relay_gateway_actor = caf::typed_actor<
  caf::reacts_to<call_atom, std::string, std::string, caf::actor, call_request, caller_actor>,
  caf::reacts_to<input_atom, std::uint64_t, std::string>,
  caf::reacts_to<end_input_atom, std::uint64_t>, caf::reacts_to<abort_atom, std::uint64_t>>;

struct remote_call_state {
  live_count live{actor_kind::remote_call};
  relay_gateway_actor gateway; // this node's
  caf::actor conn;    // the owner's connection (a proxy)
  std::string node;
  std::string target;
  std::string method;
  caller_actor caller; // the front door's caller, on this node
  std::uint64_t tag = 0;
  replica_load_ptr load; // released at the end, once the call was taken
  static inline const char* name = "remote_call";
};

using self_ptr = relay_actor::stateful_pointer<remote_call_state>;

void finish(self_ptr self) {
  auto& st = self->state;
  // The caller may be a long-lived session and the gateway lives as long as
  // the node: leave nothing attached to them.
  if (st.caller)
    self->demonitor(st.caller.address());
  self->demonitor(st.gateway.address());
  st.caller = nullptr;
  if (auto load = std::exchange(st.load, nullptr))
    load->release();
  self->quit();
}

void give_up(self_ptr self) {
  self->send(self->state.gateway, abort_atom_v, std::uint64_t{self->id()});
  finish(self);
}

} // namespace

relay_actor::behavior_type remote_call(self_ptr self, caf::actor gateway, caf::actor conn,
                                       std::string node, std::string target,
                                       replica_load_ptr load) {
  auto& st = self->state;
  // Before the call is taken, a failed hand-off is the door's to uncount.
  auto pending_load = std::make_shared<replica_load_ptr>(std::move(load));
  st.gateway = caf::actor_cast<relay_gateway_actor>(gateway);
  st.conn = std::move(conn);
  st.node = std::move(node);
  st.target = std::move(target);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.caller && dm.source == st.caller.address()) {
      // The caller died without a word: its run is abandoned at the owner.
      st.caller = nullptr;
      return give_up(self);
    }
    if (dm.source == st.gateway.address()) {
      // This node is shutting down.
      if (st.caller)
        self->send(st.caller, done_atom_v, st.tag,
                   failed(manager_errors::connection_closed(st.target, st.method)));
      finish(self);
    }
  });
  return {
    [self, pending_load](call_atom, call_request& req, caller_actor& caller) -> call_actor {
      auto& st = self->state;
      st.load = std::exchange(*pending_load, nullptr);
      st.caller = std::move(caller);
      st.tag = req.tag;
      st.method = std::string{method_name(req.method)};
      self->monitor(st.caller);
      self->monitor(st.gateway);
      self->send(st.gateway, call_atom_v, st.node, st.target, st.conn, std::move(req),
                 caf::actor_cast<caller_actor>(self));
      return caf::actor_cast<call_actor>(self);
    },
    // The run's events, from the gateway, in order.
    [self](trace_atom, std::uint64_t, std::string& trace) {
      if (self->state.caller)
        self->send(self->state.caller, trace_atom_v, self->state.tag, std::move(trace));
    },
    [self](chunk_atom, std::uint64_t, std::string& raw) {
      if (self->state.caller)
        self->send(self->state.caller, chunk_atom_v, self->state.tag, std::move(raw));
    },
    [self](done_atom, std::uint64_t, call_end& end) {
      if (self->state.caller)
        self->send(self->state.caller, done_atom_v, self->state.tag, std::move(end));
      finish(self);
    },
    // From the caller.
    [self](input_atom, std::string& chunk) {
      self->send(self->state.gateway, input_atom_v, std::uint64_t{self->id()}, std::move(chunk));
    },
    [self](end_input_atom) {
      self->send(self->state.gateway, end_input_atom_v, std::uint64_t{self->id()});
    },
    [self](abort_atom) { give_up(self); },
  };
}

call_target_actor start_remote_call(caf::actor_system& sys, const caf::actor& gateway,
                                    const call_target_actor& conn, std::string node,
                                    std::string target, replica_load_ptr load) {
  return caf::actor_cast<call_target_actor>(
    sys.spawn(remote_call, gateway, caf::actor_cast<caf::actor>(conn), std::move(node),
              std::move(target), std::move(load)));
}

} // namespace actor_host
