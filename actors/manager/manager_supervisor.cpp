#include "actors/manager/manager_supervisor.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

caf::behavior manager_supervisor(caf::stateful_actor<supervisor_state>* self) {
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    st.children.erase(dm.source);
    if (st.stopping && st.children.empty()) {
      st.shutdown_done.deliver(caf::ok_atom_v);
      self->quit();
    }
  });
  return {
    [self](adopt_atom, caf::actor& child) {
      auto& st = self->state;
      self->monitor(child);
      if (st.stopping) {
        self->send_exit(child, caf::exit_reason::user_shutdown);
        return;
      }
      st.children.emplace(child.address(), std::move(child));
    },
    [self](shutdown_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      st.stopping = true;
      spdlog::debug("supervisor: stopping {} actor(s)", st.children.size());
      if (st.children.empty()) {
        self->quit();
        return caf::ok_atom_v;
      }
      for (auto& [addr, c] : st.children)
        self->send_exit(c, caf::exit_reason::user_shutdown);
      st.shutdown_done = self->make_response_promise();
      return st.shutdown_done;
    },
  };
}

} // namespace actor_host
