#pragma once

#include "actors/call/describe.hpp"
#include "actors/call/interfaces.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/doors/http/caller_slots.hpp"
#include "net/http_exchange.hpp"

#include <optional>
#include <string>

namespace actor_host {

/// The front door's HTTP routes that reach into the actor tree.
enum class http_route {
  runtimes,
  services, // GET /api/services: each service with its replicas
  actions,
  values,
  run_action,
  stream_action,
  cancel_action,
  send_bidi_input,
  end_bidi_input,
  readiness, // GET /readyz
  current_runtime, // tRPC getCurrentRuntime: the newest runtime, or {}
  describe,        // GET /api/describe?symbol=&runtimeId=
};

struct http_caller_args {
  net::http_request req;
  net::http_responder_ptr res;
  front_door door;
  http_route route = http_route::runtimes;
  caller_slot slot; // given back when the caller ends
  caf::actor supervisor; // readiness
  std::string trpc;      // a tools-server tRPC procedure (trpc.hpp): answers in its envelope
  /// runAction / streamAction as the tools server answers them: errors as
  /// `{"error": tools_error(...)}` (errors.hpp); else JSON-RPC error objects.
  bool tools_shape = false;
};

struct http_caller_state {
  live_count live{actor_kind::caller_session};
  http_caller_args args;
  bool bidi = false;      // streamAction?bidi=true
  call_handle pending;    // the call in flight, once accepted
  std::string trace_id;
  stream_sink_ptr sink;   // streamAction: the NDJSON body
  describe_target described; // http_route::describe
  static inline const char* name = "http_caller";
};

/// The caller of one HTTP request (a caller_session of the design): parses
/// the request once, starts its call on the manager's one call path
/// (call_path.hpp), relays the answer (streamAction: NDJSON chunks as they
/// come) and ends. The client hanging up ends it, and its pending request,
/// which monitors it, then cancels the run. Spawned per request by the HTTP
/// handler and adopted by the manager's supervisor.
///
/// From the pending request: (trace_atom, tag, trace), (chunk_atom, tag, raw),
/// (done_atom, tag, call_end)
caller_actor::behavior_type http_caller(caller_actor::stateful_pointer<http_caller_state> self,
                                        http_caller_args args);

// What every caller of the HTTP door answers with (http_caller and the
// runAction hubs, http_run_hub.hpp), so a route answers the same whoever
// made its call.

/// A failed call in the route's shape: its HTTP status (429 with
/// Retry-After), the body tRPC's envelope for a tools-server procedure
/// (`trpc`), else `{"error": ...}`, the tools server's (`tools_shape`) or
/// JSON-RPC's error object.
void respond_call_error(net::http_responder& res, const call_error& error,
                        const std::string& trpc, bool tools_shape);

/// A call's end as runAction and cancelAction answer it: the result (in
/// tRPC's envelope for `trpc`) with the run's trace id in X-Genkit-Trace-Id
/// (`trace_id`, else the one in the result), or the error
/// (respond_call_error).
void respond_end(net::http_responder& res, call_end& end, std::string trace_id,
                 const std::string& trpc, bool tools_shape);

/// A call that came back through a manager (X-Actor-Host-Hops, which our V1
/// link sends: a runtime URL that leads back to a manager, through a proxy
/// or another name) is counted in its params for the next hop, and refused
/// past max_call_hops: a loop would otherwise take every call slot. `header`:
/// the request's X-Actor-Host-Hops, null if none. None, or the caller's error.
std::optional<call_error> count_hop(const std::string* header, call_request& req);

} // namespace actor_host
