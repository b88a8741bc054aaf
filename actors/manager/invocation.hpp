#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <string>

namespace actor_host {

/// Which protocol the caller of an iii function speaks, i.e. the shape of
/// the (done_atom, tag, ok, raw) it gets back.
enum class reply_format {
  iii,    // raw = the result ("" = none) or an iii error object {code, message}
  genkit, // raw = {result, telemetry:{traceId}} or a JSON-RPC error with a Status
};

/// A call of an iii function, as the caller's side made it.
struct invocation_request {
  std::string function_id;      // as registered (prefix included)
  std::string data = "null";    // raw JSON payload, _caller_worker_id already added
  std::string metadata;         // raw JSON, "" when absent
  std::string traceparent;
  std::string baggage;
  std::string caller_worker_id; // "" for front-door callers
  bool wants_reply = true;      // false for void calls
  reply_format format = reply_format::iii;
  caf::timespan timeout{0};     // 0 = none
};

struct invocation_args {
  caf::actor conn;              // the executing worker_connection
  net::transport_ptr transport; // its socket
  caf::actor caller;            // receives (done_atom, ...); null for void calls
  std::uint64_t tag = 0;        // the caller's correlation id
  std::string invocation_id;    // id on the executor's socket
  std::string worker_id;        // executor, for logs
  invocation_request req;
};

struct invocation_state {
  live_count live{actor_kind::invocation};
  invocation_args args;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  static inline const char* name = "invocation";
};

/// One call of an iii function in flight, spawned (linked) by the executing
/// worker_connection once it has sent `invokefunction`. Times out when the
/// connection, which keeps the deadlines of all its invocations, sends
/// (expired_atom) (deadline_queue.hpp); turns the executor's answer into the caller's protocol, and fails the
/// call with `invocation_stopped` when the executor's socket goes away. A
/// caller that goes away abandons the call: iii has no cancel message, so
/// the executor's late answer is dropped.
///
/// From the connection: (response_atom, ok, raw), (conn_lost_atom, reason),
///   (expired_atom)
/// From a front-door caller: (abort_atom); (input_atom, ...) is ignored
/// To the connection: (forget_inv_atom, invocation_id) when it ends early
/// To the caller: (done_atom, tag, ok, raw) in the caller's reply_format
caf::behavior invocation(caf::stateful_actor<invocation_state>* self, invocation_args args);

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::invocation_request)
