#pragma once

#include "actors/call/interfaces.hpp"

#include <caf/fwd.hpp>

#include <string>
#include <vector>

namespace actor_host {

/// One runtime a cancel by trace id alone is asked of.
struct cancel_target {
  call_target_actor conn;
  std::string runtime_id;
};

/// A cancelAction that names a trace id and no runtime, with several
/// runtimes registered here (the replicas of a service, or unrelated ones):
/// the run is on one of them, and only the runtime that holds a run knows
/// its trace id, so each is asked; the first that cancels it answers the
/// caller, and when none does, the last refusal does (the runtime's own
/// "not found"). The front door hands the call to this relay as it would to
/// a connection (start_call), and it stands for the call here. It ends with
/// the answer, or when the caller aborts.
call_target_actor start_cancel_broadcast(caf::actor_system& sys,
                                         std::vector<cancel_target> targets);

} // namespace actor_host
