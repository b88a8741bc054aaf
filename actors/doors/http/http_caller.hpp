#pragma once

#include "actors/call/describe.hpp"
#include "actors/call/interfaces.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/doors/http/caller_slots.hpp"
#include "net/http_exchange.hpp"

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

} // namespace actor_host
