#pragma once

#include "actors/call/call_end.hpp"
#include "actors/call/call_request.hpp"
#include "actors/call/invocation_request.hpp"
#include "actors/call/replica_load.hpp"
#include "actors/common/messages.hpp"
#include "actors/common/socket_owner.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// The typed protocols of the manager's call path: a message that is not in an
// interface does not compile at the sender.
namespace actor_host {

/// A caller, as the call it started sees it: the run's events, in order,
/// `done` last. (api_session, http_caller; worker_connection for its calls
/// of Genkit actions.)
using caller_actor = caf::typed_actor<
  caf::reacts_to<trace_atom, std::uint64_t, std::string>,
  caf::reacts_to<chunk_atom, std::uint64_t, std::string>,
  caf::reacts_to<done_atom, std::uint64_t, call_end>>;

/// Calls in flight, as their callers drive them: bidi input, and giving up,
/// each naming the call by the id its hand-off answered (call_handle). A
/// per-call actor (pending_request; invocation for `/iii/` calls; the relays
/// and holds of the call path) answers 0 and ignores the id; this node's
/// cluster gateway runs many calls and tells them apart by it.
using call_actor = caf::typed_actor<caf::reacts_to<input_atom, std::uint64_t, std::string>,
                                    caf::reacts_to<end_input_atom, std::uint64_t>,
                                    caf::reacts_to<abort_atom, std::uint64_t>>;

/// A call in flight as its caller keeps it: the actor that takes its input
/// and abort, and the call's id there. What a hand-off answers
/// (call_target_actor), what the bidi index keeps (directory_actor); CAF
/// 0.17 handles carry no per-call data, so the id travels beside the actor.
struct call_handle {
  call_actor actor;
  std::uint64_t id = 0; // 0: `actor` is the call's own
  // The call's own actor answers `done` however it ends (pending_request:
  // killed with its connection, an exception), so its caller need not
  // monitor it: a monitor is a 48-byte block per call on the call's actor
  // and a locked scan of its list at every demonitor.
  bool answers_at_end = false;

  explicit operator bool() const noexcept {
    return static_cast<bool>(actor);
  }

  /// Whether `actor` is this call's alone. Only then may the caller monitor
  /// it: a shared one (the gateway) lives as long as the node, would keep a
  /// monitor per call (CAF 0.17 scans them on every demonitor), and answers
  /// every call it took with `done`, also when it ends.
  bool own_actor() const noexcept {
    return id == 0;
  }

  template <class Self>
  void send_input(Self* self, std::string chunk) const {
    self->send(actor, input_atom_v, id, std::move(chunk));
  }

  template <class Self>
  void send_end_input(Self* self) const {
    self->send(actor, end_input_atom_v, id);
  }

  template <class Self>
  void send_abort(Self* self) const {
    self->send(actor, abort_atom_v, id);
  }

  /// Monitors the call's actor if it is the call's own (own_actor()),
  /// unless it answers at its end by itself and lives on this node (a lost
  /// node's actors answer nothing).
  template <class Self>
  void monitor(Self* self) const {
    if (needs_monitor(self))
      self->monitor(actor);
  }

  template <class Self>
  void demonitor(Self* self) const {
    if (needs_monitor(self))
      self->demonitor(actor.address());
  }

  template <class Self>
  bool needs_monitor(Self* self) const {
    return actor && own_actor() && (!answers_at_end || actor->node() != self->node());
  }

  friend bool operator==(const call_handle& a, const call_handle& b) noexcept {
    return a.actor == b.actor && a.id == b.id;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, call_handle& x) {
  return f(caf::meta::type_name("call_handle"), x.actor, x.id, x.answers_at_end);
}

/// An invocation of an iii function: a call_actor that the executing worker
/// connection also feeds.
using invocation_actor = call_actor::extend<caf::reacts_to<response_atom, bool, std::string>,
                                            caf::reacts_to<conn_lost_atom, std::string>,
                                            caf::reacts_to<expired_atom>>;

/// A pending_request: a call_actor that its runtime connection also feeds.
using pending_actor = call_actor::extend<
  caf::reacts_to<run_trace_atom, std::string>, caf::reacts_to<run_chunk_atom, std::string>,
  caf::reacts_to<response_atom, bool, std::string>, caf::reacts_to<conn_lost_atom, std::string>,
  caf::reacts_to<expired_atom>, caf::reacts_to<cancel_atom>,
  caf::reacts_to<oversized_atom, call_error>, caf::reacts_to<response_atom, call_error>>;

/// Where a routed call is handed: a runtime's connection, or an iii
/// worker's for `/iii/` keys (and the relays and holds of the call path).
/// The answer is the call in flight; the caller then gets its events.
using call_target_actor = caf::typed_actor<
  caf::replies_to<call_atom, call_request, caller_actor>::with<call_handle>>;

/// The /api/ws session: a caller fed by its socket, and a dashboard feed's
/// subscriber (notifications to write).
using api_session_actor = caller_actor::extend_with<socket_owner_actor>::extend<
  caf::reacts_to<feed_atom, std::string>>;

/// A Genkit runtime's connection (runtime_connection.hpp): takes calls, is
/// fed by its socket, and hears from its pending requests and the directory.
using connection_actor = call_target_actor::extend_with<socket_owner_actor>::extend<
  caf::reacts_to<forget_atom, std::string, std::string, bool>, caf::reacts_to<expired_atom>,
  caf::replies_to<drain_atom>::with<caf::ok_atom>, caf::reacts_to<cancel_atom>,
  caf::reacts_to<stop_atom, std::uint16_t>,
  caf::replies_to<probe_atom>::with<bool>, caf::reacts_to<pong_atom, bool>,
  caf::reacts_to<oversized_atom, std::string, std::string, std::uint64_t>>;

/// An iii worker's connection (worker_connection.hpp): takes calls of its
/// functions (from the front door, and from the registry for iii callers),
/// is fed by its socket, and is the caller of its own calls of Genkit
/// actions.
using worker_connection_actor = call_target_actor::extend_with<socket_owner_actor, caller_actor>::extend<
  caf::reacts_to<execute_atom, caller_actor, std::uint64_t, invocation_request>,
  caf::reacts_to<forget_inv_atom, std::string>, caf::reacts_to<expired_atom>,
  caf::reacts_to<replaced_atom>, caf::reacts_to<flush_atom>>;

/// The iii function registry as the folders below actors/iii/ use it: the
/// call path routes `/iii/` keys and lists the functions through it, the
/// dashboard and the gRPC catalog read and watch its workers. Its whole
/// protocol is function_registry_actor (actors/iii/function_registry.hpp).
using iii_catalog_actor = caf::typed_actor<
  caf::replies_to<route_iii_atom, std::string>::with<worker_connection_actor, std::string,
                                                      std::string>,
  caf::replies_to<list_iii_atom>::with<std::string>,
  caf::replies_to<snapshot_atom>::with<std::string>, caf::reacts_to<subscribe_atom, caf::actor>>;

/// Hears when a runtime id registers and when it goes away (child_runtime,
/// the supervisor waiting for its services).
using runtime_watcher_actor = caf::typed_actor<caf::reacts_to<ready_atom, std::string>,
                                               caf::reacts_to<unready_atom, std::string>>;

/// Told when a replica finished a call (a service's queue, service_queue.hpp).
using slot_listener_actor = caf::typed_actor<caf::reacts_to<slot_atom>>;

/// What a runtime's connection registers (runtime_directory.hpp): its id,
/// the service it is a replica of (its `name`, default its id), its
/// RuntimeInfo, and its load figure (replica_load.hpp). Local only.
struct runtime_registration {
  std::string id;
  std::string service;
  std::string info_json;
  replica_load_ptr load;
};

/// The runtime directory (runtime_directory.hpp).
using directory_actor = caf::typed_actor<
  caf::replies_to<register_atom, runtime_registration, connection_actor>::with<
    bool, std::string, slot_listener_actor>,
  caf::reacts_to<limits_atom, service_limits>, caf::replies_to<services_atom>::with<std::string>,
  caf::reacts_to<deregister_atom, std::string, connection_actor>,
  caf::reacts_to<idempotent_atom, std::string, std::vector<std::string>, connection_actor>,
  caf::replies_to<list_atom>::with<std::string>,
  caf::reacts_to<bidi_open_atom, std::string, call_handle>,
  caf::reacts_to<bidi_close_atom, std::string>,
  caf::replies_to<bidi_find_atom, std::string>::with<bool, call_handle>,
  caf::reacts_to<watch_atom, std::string, runtime_watcher_actor>,
  caf::replies_to<drain_atom>::with<std::vector<connection_actor>>,
  caf::replies_to<drain_atom, std::string>::with<connection_actor>,
  caf::reacts_to<cluster_atom, caf::actor, caf::actor, std::string>,
  caf::reacts_to<cluster_atom, std::string, caf::timespan>,
  caf::reacts_to<remote_up_atom, std::string, std::string, std::string, connection_actor>,
  caf::reacts_to<remote_down_atom, std::string, std::string>,
  caf::reacts_to<node_lost_atom, std::string>,
  caf::reacts_to<remote_load_atom, std::string, std::vector<std::string>,
                 std::vector<std::int32_t>>,
  caf::reacts_to<subscribe_atom, caf::actor>, caf::reacts_to<flush_atom>>;

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::runtime_registration)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::service_limits)
