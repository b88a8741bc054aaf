#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/cluster/cluster_types.hpp"

#include <caf/fwd.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actor_host {

/// The cluster gateway's protocol (messages.hpp has the list in words).
/// It is the call_actor of the calls made here for other nodes (their input
/// and abort, by the call id it answered), and the caller of the local
/// pending requests and invocations it runs for other nodes (caller_actor).
using gateway_actor = caf::typed_actor<
  // From this node: a peer's gateway (null: gone), from the cluster node.
  caf::reacts_to<gateway_atom, std::string, caf::actor>,
  // A call for another node's runtime or function, from the call path
  // (call_path.hpp): node, runtime or function id, the owner's connection,
  // the owner's replica load as this node counts it (null: not counted), the
  // request, and the front door's caller (which gets the events). The
  // answer: this gateway as the call's actor, and the call's id here (with
  // no link to the node, the call then ends UNAVAILABLE at once).
  caf::replies_to<call_atom, std::string, std::string, caf::actor, replica_load_ptr, call_request,
                  caller_actor>::with<call_handle>,
  // An iii invocation of another node's function: node, the owner's worker
  // connection, the caller and its tag.
  caf::reacts_to<execute_atom, std::string, caf::actor, caller_actor, std::uint64_t,
                 invocation_request>,
  // Its own: send what it batched; a gone peer's grace is over.
  caf::reacts_to<flush_atom>, caf::reacts_to<expired_atom, caf::actor_addr>,
  // Between gateways, batched.
  caf::reacts_to<gw_requests_atom, std::vector<gw_request>>,
  caf::reacts_to<gw_events_atom, std::vector<gw_event>>,
  // iii bindings and channel ends between nodes (gateway_iii.cpp): the
  // function registry (sink), a binding record for a node, a channel end
  // at this node opening its link, its frames, close and credits by link,
  // and the batches of other gateways.
  caf::reacts_to<subscribe_atom, caf::actor>, caf::reacts_to<bind_atom, std::string, iii_wire>,
  caf::reacts_to<attach_atom, std::string, std::string, std::string, bool>,
  caf::reacts_to<channel_frame_atom, std::uint64_t, bool, std::string>,
  caf::reacts_to<channel_closed_atom, std::uint64_t, bool, std::uint16_t, std::string>,
  caf::reacts_to<slot_atom, std::uint64_t, std::uint64_t>,
  caf::reacts_to<gw_requests_atom, std::vector<iii_wire>>>::extend_with<caller_actor, call_actor>;

/// This node's end of every call between it and the other nodes
/// (actors/cluster/gateway.cpp; the messages are in actors/common/messages.hpp).
///
/// Entry side: the call path (a front door's call) or the function registry
/// (an iii invocation) hands a call for another node's runtime or function
/// to this gateway, which sends it to the owner's gateway and passes its
/// events back, in order, by call id, straight to the call's caller. No
/// actor is spawned per call: the gateway is the caller's handle of the call
/// (call_handle: the gateway and the call's id) for input, end of input and
/// abort; it takes the replica load the door counted off when the call
/// ends; it monitors each caller once, however many calls it has (CAF 0.17
/// scans an actor's monitors on every demonitor), and abandons the runs of
/// a caller that dies without a word; and when it ends (this node shutting
/// down) it fails the calls still in flight with connection_closed, as a
/// local connection's end does. Owner side: the gateway is the caller of
/// the local pending request (or iii invocation) and sends its events to
/// the entry node's gateway.
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
gateway_actor spawn_cluster_gateway(caf::actor_system& sys);

} // namespace actor_host
