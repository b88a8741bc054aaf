#include "actors/cluster/remote_call.hpp"

#include "actors/call/errors.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/live_counts.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

/// A call target and then the caller's call handle; the gateway tells it the
/// call's end (the done message of caller_actor; the events go to the caller).
using relay_actor = call_target_actor::extend_with<call_actor>::extend<
  caf::reacts_to<done_atom, std::uint64_t, call_end>>;

struct remote_call_state {
  live_count live{actor_kind::remote_call};
  gateway_actor gateway; // this node's
  caf::actor conn;       // the owner's connection (a proxy)
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

relay_actor::behavior_type remote_call(self_ptr self, gateway_actor gateway, caf::actor conn,
                                       std::string node, std::string target,
                                       replica_load_ptr load) {
  auto& st = self->state;
  // Before the call is taken, a failed hand-off is the door's to uncount.
  auto pending_load = std::make_shared<replica_load_ptr>(std::move(load));
  st.gateway = std::move(gateway);
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
      self->send(st.gateway, call_atom_v, st.node, st.target, st.conn, std::move(req), st.caller,
                 caf::actor_cast<caf::actor>(self));
      return caf::actor_cast<call_actor>(self);
    },
    // The call ended (the gateway told the caller).
    [self](done_atom, std::uint64_t, const call_end&) { finish(self); },
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
    sys.spawn(remote_call, caf::actor_cast<gateway_actor>(gateway),
              caf::actor_cast<caf::actor>(conn), std::move(node), std::move(target),
              std::move(load)));
}

} // namespace actor_host
