#pragma once

#include "actors/manager/interfaces.hpp"

#include <caf/fwd.hpp>

#include <string>

namespace actor_host {

/// The caller side of a call to a runtime on another cluster node. The
/// front door hands the call to this relay as it would to a local
/// connection; the relay hands it to the owning node's connection (a proxy)
/// naming itself as the caller, and passes the run's events, input and abort
/// through in order. It watches the remote call: when the node is lost
/// (socket closed, or heartbeats missed past the timeout, which makes CAF
/// close the link), the caller gets UNAVAILABLE at once. The pending request
/// stays an actor at the owning node and watches the relay the same way, so
/// a lost entry node abandons (and cancels) its runs there.
call_target_actor start_remote_call(caf::actor_system& sys, const call_target_actor& conn,
                                    std::string node, std::string runtime_id);

/// The same for an iii invocation of another node's function: send the relay
/// (execute_atom, caller, tag, invocation_request) as to the owner's
/// worker_connection `conn`; a lost node answers the caller with an iii
/// invocation_failed error.
caf::actor start_remote_invocation(caf::actor_system& sys, const caf::actor& conn,
                                   std::string node, std::string function_id);

} // namespace actor_host
