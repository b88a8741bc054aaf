#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/common/held_input.hpp"
#include "actors/common/lean_actor.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/packed_trace_id.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace actor_host {

class route_span_queue; // actors/tracing/route_span_queue.hpp

/// What every request of one runtime connection has in common: made once by
/// the connection (again when its runtime id changes) and shared by its
/// pending requests instead of copied into each (100,000 calls in flight
/// kept 100,000 copies of these strings and handles).
struct pending_shared {
  net::transport_ptr transport; // the connection's socket, for input-stream notifications
  std::string runtime_id;
  // Bidi input held before the run reports its trace id; 0 = no cap.
  std::size_t max_held_input_bytes = 0;
  // Takes the manager's span of each run (to the trace keeper); null = none.
  std::shared_ptr<route_span_queue> traces;
  std::string node;  // this manager's node name in a cluster, for that span
  replica_load_ptr load; // its runtime's: how the call ended (outlier detection)
};
using pending_shared_ptr = std::shared_ptr<const pending_shared>;

/// The request's id on the runtime socket as the wire writes it: a quoted
/// decimal ("\"7\"").
std::string quoted_wire_id(std::uint64_t id);

struct pending_args {
  pending_shared_ptr shared;    // the connection's, shared
  connection_actor conn;        // the runtime_connection that sent the request
  caller_actor caller;          // receives the events; null for detached calls
  std::uint64_t tag = 0;        // the caller's correlation id
  std::uint64_t wire_id = 0;    // its id on the runtime socket (quoted_wire_id)
  call_method method = call_method::run_action;
  // The connection relays the run's chunks and trace id to the caller
  // itself (a streaming run): this actor does not tell the caller the trace.
  bool connection_relays = false;
  // The timeout in ms (0 = none), for the expiry's message only: the
  // connection keeps the deadline. 4 bytes in what was padding.
  std::uint32_t timeout_ms = 0;
  std::string action_key;       // runAction only
};

struct pending_state {
  live_count live{actor_kind::pending_request};
  pending_args args;
  packed_trace_id trace_id; // OpenTelemetry's hex ids without a heap block
  // Input held until the runtime reports the trace id: Genkit JS runtimes
  // create a run's input channel only after an asynchronous lookup and drop
  // earlier input. Made when the first input has to wait (most calls have
  // none).
  std::unique_ptr<held_input> held;
  // The wall clock time of the start (the route span's) is derived from this
  // one when the call ends: one clock read and 8 bytes less per call.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

/// One request sent to a runtime, alive until its answer. Its deadline is
/// kept by the connection (deadline_queue.hpp says why), which sends
/// (expired_atom) when it passes. Relays runActionState and streamChunk to the caller
/// (a streaming run's are relayed by the connection itself: one hop per chunk),
/// forwards bidi input, and turns a lost connection into an error for the
/// caller. A caller that goes away (its connection watches the callers of
/// its calls, each once, and aborts their calls) or a deadline, or too much
/// held input, ends it at once: the connection forgets the wire id and cancels the run
/// on the runtime, now or when its trace id arrives.
///
/// From the connection: (run_trace_atom, trace), (run_chunk_atom, raw),
///   (response_atom, ok, raw), (conn_lost_atom, reason), (expired_atom)
/// From the caller (or, for a caller gone, its connection): (input_atom, 0,
///   raw), (end_input_atom, 0), (abort_atom, 0)
/// To the caller: (trace_atom, tag, trace), (chunk_atom, tag, raw),
///   (done_atom, tag, call_end): the result or the error, also when the
///   actor ends otherwise (its connection's end, a kill, an exception), so
///   that callers need not monitor it (call_handle::answers_at_end)
/// To the connection: (forget_atom, wire_id, trace_id, cancel) when it ends
///   without an answer
///
/// A lean_actor (lean_actor.hpp): one per call in flight, so CAF's
/// scheduled_actor (~960 bytes of mailbox queues, handler functions and
/// tables it never used) was most of what a pending call cost. Spawned by
/// spawn_lean<pending_request_actor, pending_actor>(system, args); its
/// messages are pending_actor's, checked where they are sent.
class pending_request_actor : public lean_actor<pending_request_actor> {
public:
  static constexpr const char* kind_name = "pending_request";

  pending_request_actor(caf::actor_config& cfg, pending_args args);

  ~pending_request_actor() override {
    // The state went at the end (on_end), which every lean_actor reaches.
  }

  void handle(caf::mailbox_element& element);

  /// Answers a caller still waiting (finishing clears args.caller), then
  /// lets the state go: the actor itself may outlive its end a little,
  /// held by the handles of its connection and caller.
  void on_end(const caf::error& reason);

  union {
    pending_state state;
  };
};

} // namespace actor_host
