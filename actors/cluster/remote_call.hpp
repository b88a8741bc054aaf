#pragma once

#include "actors/call/interfaces.hpp"

#include <caf/fwd.hpp>

#include <string>

namespace actor_host {

/// The caller side of one call to a runtime (or, for `/iii/` keys, a worker)
/// on another cluster node. The front door hands the call to this relay as
/// it would to a local connection; the relay hands it to this node's
/// gateway (gateway.hpp), which sends it to the owner's. The run's events
/// come back from the gateway straight to the caller, in order; the relay is
/// the caller's handle for the call: its input and abort (or death) go out
/// through it, and it ends with the call. It answers the
/// hand-off at once; a call the owner cannot take ends with the same error
/// a local one gets. `conn` is the owner's connection (a proxy), named by
/// the route entry; `gateway` this node's.
/// `load`: the owner's runtime as this node counts it (routing.hpp), taken
/// off when the call ends; null: not counted.
call_target_actor start_remote_call(caf::actor_system& sys, const caf::actor& gateway,
                                    const call_target_actor& conn, std::string node,
                                    std::string target, replica_load_ptr load = nullptr);

} // namespace actor_host
