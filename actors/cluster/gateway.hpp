#pragma once

#include <caf/fwd.hpp>

namespace actor_host {

/// This node's end of every call between it and the other nodes
/// (actors/cluster/gateway.cpp; the messages are in actors/common/messages.hpp).
///
/// Entry side: a relay (remote_call.hpp) or the function registry hands a
/// call for another node's runtime or function to this gateway, which sends
/// it to the owner's gateway and passes its events back, in order, by call
/// id. Owner side: the gateway is the caller of the local pending request
/// (or iii invocation) and sends its events to the entry node's gateway.
///
/// Only the two gateways, long-lived, cross the link: a call costs one BASP
/// message each way per event and no remote actor of its own (CAF 0.17
/// announces, proxies and kills every remote actor a message names, which
/// tripled the messages of a call).
///
/// Failure: each gateway watches the other nodes' gateways it deals with.
/// When CAF loses a node (socket closed, or no heartbeat within the timeout)
/// it kills that node's proxies with remote_link_unreachable: the entry side
/// then fails the node's calls at once with UNAVAILABLE (iii:
/// invocation_failed), and the owner side abandons (and so cancels) the calls
/// the lost node made. A gateway that ended otherwise (a node shutting down)
/// may still have answers on the way: its calls get a grace first.
caf::actor spawn_cluster_gateway(caf::actor_system& sys);

} // namespace actor_host
