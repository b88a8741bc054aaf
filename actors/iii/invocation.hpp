#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <string>

namespace actor_host {

struct invocation_args {
  worker_connection_actor conn; // the executing worker_connection
  net::transport_ptr transport; // its socket
  caller_actor caller;          // receives (done_atom, ...); null for void calls
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

/// One call of an iii function in flight, spawned by the executing
/// worker_connection once it has sent `invokefunction`. Times out when the
/// connection, which keeps the deadlines of all its invocations, sends
/// (expired_atom) (deadline_queue.hpp); turns the executor's answer into the caller's protocol, and fails the
/// call with `invocation_stopped` when the executor's socket goes away. A
/// caller that goes away abandons the call: iii has no cancel message, so
/// the executor's late answer is dropped.
///
/// From the connection: (response_atom, ok, raw), (conn_lost_atom, reason),
///   (expired_atom)
/// From a front-door caller: (abort_atom, 0); (input_atom, ...) is ignored
/// To the connection: (forget_inv_atom, invocation_id) when it ends early
/// To the caller: (done_atom, tag, call_end) in the caller's reply_format
invocation_actor::behavior_type
invocation(invocation_actor::stateful_pointer<invocation_state> self, invocation_args args);

} // namespace actor_host

