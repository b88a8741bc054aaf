#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"

#include <unordered_map>

namespace actor_host {

struct supervisor_state {
  live_count live{actor_kind::manager_supervisor};
  std::unordered_map<caf::actor_addr, caf::actor> children;
  caf::response_promise shutdown_done;
  bool stopping = false;
  static inline const char* name = "manager_supervisor";
};

/// Root of the manager's tree. Watches the long-lived actors (directory,
/// runtime connections, caller sessions) and takes them down on shutdown.
///
/// - (adopt_atom, child): monitor it; a stopping supervisor kills it at once
/// - (shutdown_atom) -> ok: kills every child, answers after the last is down
caf::behavior manager_supervisor(caf::stateful_actor<supervisor_state>* self);

} // namespace actor_host
