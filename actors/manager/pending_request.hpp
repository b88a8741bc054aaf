#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace actor_host {

struct pending_args {
  caf::actor conn;              // the runtime_connection that sent the request
  net::transport_ptr transport; // its socket, for input-stream notifications
  caf::actor caller;            // receives the events; null for detached calls
  std::uint64_t tag = 0;        // the caller's correlation id
  std::string wire_id;          // raw JSON id on the runtime socket ("\"7\"")
  std::string method;
  std::string runtime_id;
  std::string action_key;         // runAction only
  caf::timespan timeout{0};       // 0 = none
  caf::timespan cancel_timeout{0}; // for the cancelAction sent when abandoned
};

struct pending_state {
  live_count live{actor_kind::pending_request};
  pending_args args;
  std::string trace_id;
  bool caller_gone = false;
  // Input held until the runtime reports the trace id: Genkit JS runtimes
  // create a run's input channel only after an asynchronous lookup and drop
  // earlier input. "" marks the end of input.
  std::vector<std::string> held_input;
  bool cancel_sent = false;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  static inline const char* name = "pending_request";
};

/// One request sent to a runtime, alive until its answer. Owns the deadline
/// (a delayed message), relays runActionState and streamChunk to the caller,
/// forwards bidi input, and turns a lost connection into an error for the
/// caller. A caller that goes away cancels the run on the runtime.
///
/// From the connection: (trace_atom, trace), (chunk_atom, raw),
///   (response_atom, ok, raw), (conn_lost_atom, reason)
/// From the caller: (input_atom, raw), (end_input_atom), (abort_atom)
/// To the caller: (trace_atom, tag, trace), (chunk_atom, tag, raw),
///   (done_atom, tag, ok, raw result or error object)
caf::behavior pending_request(caf::stateful_actor<pending_state>* self, pending_args args);

} // namespace actor_host
