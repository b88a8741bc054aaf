#pragma once

#include "actors/call/call_request.hpp"
#include "actors/call/errors.hpp"
#include "actors/call/interfaces.hpp"
#include "actors/call/routing.hpp"
#include "actors/cluster/cluster_node.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/messages.hpp"
#include "actors/dispatch/cancel_broadcast.hpp"
#include "wire/iii_protocol.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace actor_host {

/// What every front door's caller needs to start calls: the published routes,
/// the directory (listings, the bidi index) and the iii function registry.
/// Held by value: actor handles and the board are safe to copy across threads.
struct front_door {
  route_board_ptr routes;
  directory_actor directory;
  iii_catalog_actor functions; // function_registry; null: no iii side
  call_policy policy;
  cluster_board_ptr cluster; // membership as this node sees it; null outside a cluster
  caf::actor feed;           // dashboard_feed: what `watch` on /api/ws subscribes to
  std::string project_name;  // the project root's base name (tools server listings)
  caf::actor supervisor;     // manager_supervisor: rolling restarts; null: none (tests)
  // Where calls for a runtime or service that is moving wait for it
  // (failover_hold.hpp); null: they fail at once.
  call_target_actor hold;
};

/// GET /api/cluster, `getCluster` on /api/ws.
inline std::string cluster_json(const front_door& door) {
  return door.cluster ? door.cluster->current()->json : R"({"self":null,"nodes":[]})";
}

/// How long one manager actor waits for another's immediate answer (a
/// listing, a bidi lookup): they answer at once, so this fires only when the
/// other side is wedged, and the caller then gets an error instead of
/// waiting forever.
inline constexpr auto internal_reply_timeout = std::chrono::seconds(10);

/// The hand-offs on the per-call path (a call to its connection, an `/iii/`
/// route from the registry) are answered inside the receiver's handler, and
/// CAF bounces a request whose receiver is gone (also one still queued when
/// it ends), so they cannot hang. They carry no timer on purpose: a CAF 0.17
/// request timeout is not cancelled by the answer and holds a strong
/// reference to the requester until it fires (unit test "hand-offs leave no
/// timer behind"), which would keep every finished HTTP caller alive for
/// the whole timeout, as delayed messages did to pending requests
/// (deadline_queue.hpp).
inline constexpr auto answered_in_handler = caf::infinite;

namespace detail {

/// The answer to a hand-off `asked` (a request whose answer is a
/// call_handle): `accepted(call)`, else `finished` with the refusal's error,
/// or `gone()` when the receiver had ended before it took the call (CAF
/// bounced the request), so the runtime never saw it; without `gone` that is
/// a failed call.
template <class Handle, class Accepted, class Finished, class Gone = std::nullptr_t>
void await_hand_off(Handle asked, call_method method, std::string target, Accepted accepted,
                    Finished finished, Gone gone = nullptr) {
  asked.then(
    [accepted](call_handle& call) mutable { accepted(std::move(call)); },
    [finished, gone, method, target = std::move(target)](caf::error& err) mutable {
      if (err.category() == caf::atom("refused") && err.context().match_elements<call_error>())
        return finished(failed(err.context().get_as<call_error>(0)));
      if constexpr (!std::is_same_v<Gone, std::nullptr_t>)
        if (err == caf::sec::request_receiver_down)
          return gone();
      // The connection ended between routing and the call.
      finished(failed(manager_errors::connection_closed(target, method_name(method))));
    });
}

/// Hands `req` to `conn` (await_hand_off).
template <class Self, class Accepted, class Finished, class Gone = std::nullptr_t>
void hand_off(Self* self, const call_target_actor& conn, std::string target, call_request req,
              caller_actor caller, Accepted accepted, Finished finished, Gone gone = nullptr) {
  auto method = req.method;
  await_hand_off(
    self->request(conn, answered_in_handler, call_atom_v, std::move(req), std::move(caller)),
    method, std::move(target), std::move(accepted), std::move(finished), std::move(gone));
}

/// Hands `req` for `target` (a runtime or function id) on another node to
/// this node's gateway (gateway.hpp), with `node`, the owner's connection
/// `conn` that the gateway names to the owner's gateway, and `load`, the
/// owner's replica as the door counted the call (null: not counted). No
/// actor per call: the gateway answers with itself and the call's id, and
/// from then on releases `load` when the call ends (with no link to the
/// node it ends at once, UNAVAILABLE); a gateway gone (this node shutting
/// down) reaches `finished`, which then owns `load`.
template <class Self, class Accepted, class Finished>
void hand_off_remote(Self* self, const caf::actor& gateway, std::string node, std::string target,
                     const call_target_actor& conn, replica_load_ptr load, call_request req,
                     caller_actor caller, Accepted accepted, Finished finished) {
  auto method = req.method;
  if (!gateway)
    return finished(failed(manager_errors::connection_closed(target, method_name(method))));
  // Asked first: `target` is copied into the request before it moves on.
  auto asked = self->request(caf::actor_cast<gateway_actor>(gateway), answered_in_handler,
                             call_atom_v, std::move(node), target,
                             caf::actor_cast<caf::actor>(conn), std::move(load), std::move(req),
                             std::move(caller));
  await_hand_off(std::move(asked), method, std::move(target), std::move(accepted),
                 std::move(finished));
}

} // namespace detail

/// A run of an idempotent action (call_policy::idempotent) balanced over a
/// service's replicas, with one more try: the relay is the run's caller and
/// stands for it before the door; a first run that ends UNAVAILABLE before
/// any chunk reached the caller is routed again, passing over the replica it
/// failed on (retry_relay.cpp).
call_target_actor start_retry_relay(caf::actor_system& sys, front_door door);

namespace detail {

/// start_call's routing (of `routes`, read from door.routes) and hand-off;
/// `avoid` is passed to route_call, and `routed_to` (if set) gets the
/// connection a runtime call went to.
template <class Self, class Accepted, class Finished>
void dispatch_route(Self* self, const front_door& door, std::shared_ptr<const route_table> routes,
                    call_route route, call_request req, caller_actor caller, Accepted accepted,
                    Finished finished, const caf::actor_addr& avoid);

template <class Self, class Accepted, class Finished>
void route_and_hand_off(Self* self, const front_door& door,
                        std::shared_ptr<const route_table> routes, call_request req,
                        caller_actor caller, Accepted accepted, Finished finished,
                        const caf::actor_addr& avoid, caf::actor_addr* routed_to) {
  auto route = route_call(*routes, req, avoid);
  if (routed_to)
    *routed_to = route.conn.address();
  dispatch_route(self, door, std::move(routes), std::move(route), std::move(req),
                 std::move(caller), std::move(accepted), std::move(finished), avoid);
}

/// The hand-off of a call route_call() placed (route_and_hand_off; the
/// failover hold once the call's runtime is back).
template <class Self, class Accepted, class Finished>
void dispatch_route(Self* self, const front_door& door, std::shared_ptr<const route_table> routes,
                    call_route route, call_request req, caller_actor caller, Accepted accepted,
                    Finished finished, const caf::actor_addr& avoid) {
  using kind = call_route::kind;
  if (route.how == kind::hold && door.hold)
    return detail::hand_off(self, door.hold, std::move(route.runtime_id), std::move(req),
                            std::move(caller), std::move(accepted), std::move(finished));
  if (route.how == kind::failed || route.how == kind::hold)
    return finished(failed(std::move(route.error)));
  if (route.how == kind::broadcast) {
    std::vector<cancel_target> targets;
    for (auto& e : routes->entries)
      if (route.service.empty() || e.service == route.service)
        targets.push_back({e.conn, e.runtime_id});
    auto relay = start_cancel_broadcast(self->system(), std::move(targets));
    return detail::hand_off(self, relay, "runtimes", std::move(req), std::move(caller),
                            std::move(accepted), std::move(finished));
  }
  if (route.how == kind::runtime) {
    req.counted = route.load != nullptr;
    // A hand-off that fails never reached the connection (or the gateway),
    // which would have taken the call off its load when it ended.
    auto uncount = [finished, load = route.load](call_end end) mutable {
      if (load)
        load->release();
      finished(std::move(end));
    };
    // Another node's runtime: straight to this node's gateway.
    if (!route.node.empty())
      return detail::hand_off_remote(self, route.gateway, std::move(route.node),
                                     std::move(route.runtime_id), route.conn, route.load,
                                     std::move(req), std::move(caller), std::move(accepted),
                                     std::move(uncount));
    auto& target = route.conn;
    if (!route.load)
      return detail::hand_off(self, target, std::move(route.runtime_id), std::move(req),
                              std::move(caller), std::move(accepted), std::move(finished));
    if (!route.reroutable || avoid)
      return detail::hand_off(self, target, std::move(route.runtime_id), std::move(req),
                              std::move(caller), std::move(accepted), std::move(uncount));
    // The replica's connection may end with the call still in its mailbox
    // (the routes are a snapshot): the runtime never saw it, so it goes to
    // another replica of the service, once. The copy is kept only while the
    // service has another replica here.
    auto reroute = [self, door, again = req, caller, accepted, finished, load = route.load,
                    dead = route.conn.address()]() mutable {
      load->release();
      route_and_hand_off(self, door, door.routes->current(), std::move(again), std::move(caller),
                         std::move(accepted), std::move(finished), dead, nullptr);
    };
    return detail::hand_off(self, target, std::move(route.runtime_id), std::move(req),
                            std::move(caller), std::move(accepted), std::move(uncount),
                            std::move(reroute));
  }
  if (!door.functions)
    return finished(failed(
      manager_errors::make_error(wire::status_code::not_found, "no iii functions on this manager")));
  if (route.how == kind::iii_listing) {
    self->request(door.functions, internal_reply_timeout, list_iii_atom_v)
      .then([finished](std::string& list) mutable { finished(succeeded(std::move(list))); },
            [finished](caf::error& err) mutable {
              finished(
                failed(manager_errors::internal("listing iii functions failed: " + to_string(err))));
            });
    return;
  }
  self->request(door.functions, answered_in_handler, route_iii_atom_v, route.function_id)
    .then(
      [self, req = std::move(req), caller, accepted, finished, gateway = route.gateway](
        worker_connection_actor& conn, std::string& id, std::string& node) mutable {
        // Another node's function: through this node's gateway, as for
        // its runtimes.
        if (!node.empty())
          return detail::hand_off_remote(self, gateway, std::move(node), std::move(id),
                                         call_target_actor{conn}, nullptr, std::move(req),
                                         std::move(caller), std::move(accepted),
                                         std::move(finished));
        detail::hand_off(self, call_target_actor{conn}, std::move(id), std::move(req),
                         std::move(caller), std::move(accepted), std::move(finished));
      },
      [finished](caf::error& err) mutable {
        // The registry refuses with the caller's error (not found, RBAC).
        if (err.category() == caf::atom("refused") && err.context().match_elements<call_error>())
          return finished(failed(err.context().get_as<call_error>(0)));
        finished(failed(manager_errors::internal("routing an iii call failed: " + to_string(err))));
      });
}

} // namespace detail

/// The manager's one call path, for every front door: routes `req` with
/// route_call() and hands it to the owning connection (a runtime's, or for
/// `/iii/` keys the iii worker's the registry names). In `self`'s context
/// then either `accepted(pending)` runs (the call is in flight; its events,
/// (trace_atom | chunk_atom | done_atom, tag, ...), come to `caller`, which
/// is `self`, from the pending request) or `finished(call_end)` runs (the
/// call ended here: an error, or an iii listing). Nothing is sent to
/// `self` in between.
template <class Self, class Accepted, class Finished>
void start_call(Self* self, const front_door& door, call_request req, caller_actor caller,
                Accepted accepted, Finished finished) {
  auto routes = door.routes->current();
  if (req.method == call_method::run_action && req.runtime_id.empty() && !req.stream_input
      && !req.key.starts_with(wire::iii::iii_key_prefix)
      && ((!door.policy.idempotent_actions.empty() && door.policy.idempotent(req.key))
          || declared_idempotent(*routes, req))) {
    auto relay = start_retry_relay(self->system(), door);
    return detail::hand_off(self, relay, req.key, std::move(req), std::move(caller),
                            std::move(accepted), std::move(finished));
  }
  detail::route_and_hand_off(self, door, std::move(routes), std::move(req), std::move(caller),
                             std::move(accepted), std::move(finished), {}, nullptr);
}

} // namespace actor_host
