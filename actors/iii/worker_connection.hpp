#pragma once

#include "actors/common/call_table.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/iii/function_registry.hpp"
#include "net/transport.hpp"
#include "registry/worker_rbac.hpp"

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace actor_host {

struct worker_options {
  /// Deadline of an invocation on a worker, and of a worker's call of a
  /// Genkit action; iii itself has none (its SDK times out client-side).
  caf::timespan invocation_timeout{std::chrono::minutes(5)};
  /// Set on the public (RBAC) listener: auth function, exposed functions,
  /// registration hooks. Null on the trusted listener.
  std::shared_ptr<const registry::worker_rbac_config> rbac;
};

struct worker_connection_state {
  enum class call_kind {
    worker,            // the worker's own call of an iii function
    genkit,            // the worker's own call of a Genkit action
    auth,              // RBAC: the auth function, before workerregistered
    function_hook,     // RBAC: on_function_registration for `frame`
    trigger_type_hook, // RBAC: on_trigger_type_registration for `frame`
    trigger_hook,      // RBAC: on_trigger_registration for `frame`
  };
  struct call {                // a call waiting for its answer
    call_kind kind = call_kind::worker;
    std::string invocation_id; // the worker's own id for it
    std::string function_id;
    std::string frame;         // hooks: the registration frame they decide on
  };

  live_count live{actor_kind::worker_connection};
  net::transport_ptr transport;
  function_registry_actor registry;
  front_door door; // for this worker's calls of Genkit actions
  worker_options opts;
  std::string worker_id;
  std::string token;
  basic_call_table<invocation_actor> executing; // invocation id -> invocation, with deadlines
  std::unordered_map<std::uint64_t, call> calls;         // by tag
  std::uint64_t next_tag = 1;
  registry::worker_session session; // what this connection may do (RBAC)
  // Frames read while the RBAC gate is closed (the behaviors authenticating
  // and awaiting_hook, worker_connection_ops.hpp), in order; ready takes
  // them one per (flush_atom) it sends itself, and holds new ones behind
  // them meanwhile. Each counts against the socket's read window until
  // handled.
  std::deque<std::string> held;
  static inline const char* name = "worker_connection";
};

/// One iii worker's WebSocket (`/` on the worker port). Authenticates (RBAC
/// listener only: the auth function is called with headers, query and ip),
/// sends `workerregistered`, then reads frames in order (a frame that needs
/// a hook call holds the ones behind it): registrations go to the
/// function registry, calls are routed (through the registry, or to a Genkit
/// runtime for `genkit::` ids), `invocationresult`s go to the invocation
/// they answer (only when it was sent to this connection). When the socket
/// closes, every invocation it was executing fails with `invocation_stopped`;
/// when the actor ends the socket closes.
///
/// - (frame_atom, text), (closed_atom, reason): from the socket
/// - (execute_atom, caller, tag, invocation_request): run a call here;
///   `caller` (null for a void call) gets (done_atom, tag, call_end)
/// - (call_atom, call_request, caller) -> call_handle (the invocation): a
///   front-door runAction of `/iii/<function_id>` (Genkit shapes); the
///   call_target_actor interface
/// - (forget_inv_atom, invocation_id): an invocation ended early
/// - (flush_atom): its own: the next held frame, once the gate is open
/// - (done_atom, tag, call_end) and a run's events: answers to this
///   worker's own calls
worker_connection_actor::behavior_type
worker_connection(worker_connection_actor::stateful_pointer<worker_connection_state> self,
                  net::transport_ptr transport, function_registry_actor registry, front_door door,
                  worker_options opts);

} // namespace actor_host
