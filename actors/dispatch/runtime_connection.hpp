#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/common/call_table.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/common/monitor_counts.hpp"
#include "actors/common/shared_behavior.hpp"
#include "actors/dispatch/stream_splices.hpp"
#include "net/transport.hpp"

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host {

struct pending_shared; // pending_request.hpp
class route_span_queue; // actors/tracing/route_span_queue.hpp

struct connection_options {
  std::string reflection_url;      // ws://localhost:<port>, reported in RuntimeInfo
  std::size_t max_bidi_input_bytes = 0; // held per run before it starts; 0 = no cap
  std::string telemetry_url; // the register answer's telemetryServerUrl; "" = left out
  std::string protocol;      // listed as RuntimeInfo's `protocol` ("v1"); "" = left out (V2)
  // Where the manager's span of each run goes (then to the trace keeper); null = none.
  std::shared_ptr<route_span_queue> traces;
  std::string node;          // this manager's node name in a cluster ("" outside one)
  // After each register, list the runtime's actions once to learn which it
  // declares safe to run twice (metadata `retry: "idempotent"`).
  bool learn_actions = false;
  // The socket's frame cap (net::ws_limits), quoted when a message over it
  // fails its call.
  std::size_t max_frame_bytes = 0;
  // In a cluster: the other nodes' reflection URLs, listed in the register
  // answer (managerUrls) for runtimes that move when this node goes.
  std::function<std::vector<std::string>()> peer_manager_urls;
  // This connection's own (set per socket, with the socket's frame_bridge
  // as its tap): the streaming runs whose chunks the reader writes to their
  // callers itself. Null: every chunk passes through the connection.
  stream_splices_ptr splices;
};

/// A connection's options as it keeps them: what every connection of a
/// listener has in common, shared (an idle connection kept its own copy, a
/// ~250 bytes), and its own splices. Made from connection_options (a copy
/// of its own) or from options shared by the caller.
struct connection_setup {
  stream_splices_ptr splices; // (first: taken from the options before they move)
  std::shared_ptr<const connection_options> common; // its `splices` unused

  connection_setup(connection_options opts)
    : splices(std::move(opts.splices)),
      common(std::make_shared<const connection_options>(std::move(opts))) {
  }

  connection_setup(std::shared_ptr<const connection_options> common, stream_splices_ptr splices)
    : splices(std::move(splices)), common(std::move(common)) {
  }
};

struct connection_state {
  live_count live{actor_kind::runtime_connection};
  net::transport_ptr transport;
  directory_actor directory;
  std::shared_ptr<const connection_options> opts; // shared with the listener's other connections
  stream_splices_ptr splices; // its own (connection_options::splices)
  std::string runtime_id; // empty until the runtime registers
  std::uint64_t next_id = 1;
  std::string actions_wire_id; // our own listActions in flight ("" = none)
  // wire id (its number; the wire quotes it) -> pending_request, with their
  // deadlines and callers (watched in `seldom::callers`)
  basic_call_table<pending_actor, std::uint64_t, caf::actor_addr> pending;
  // The callers of `pending`, each monitored once: one that dies has its
  // calls here aborted (its pending requests do not monitor it).
  monitor_counts callers;
  // The streaming runs of `pending` that have a caller: their chunks and
  // trace id go from here to the caller in one hop (the pending request
  // keeps the call's state, not the relay). An entry leaves with its call.
  struct stream_route {
    caller_actor caller;
    std::uint64_t tag = 0;
    bool traced = false; // the first runActionState counts (Go sends one per span)
    stream_sink_ptr sink; // the caller's socket, when its door gave one
  };
  // What a connection needs only once it streams, forgets, drains or is
  // probed: made then (`more()`), so an idle connection keeps one pointer
  // instead of ~210 bytes of empty containers.
  struct seldom {
    std::unordered_map<std::string, stream_route, wire_id_hash, std::equal_to<>> streams;
    // Wire ids nobody waits for any more -> whether a runActionState naming
    // one still has to be cancelled (a run abandoned before its trace id was
    // known). Their late frames are dropped quietly. Bounded: the oldest go.
    std::unordered_map<std::string, bool, wire_id_hash, std::equal_to<>> forgotten;
    // A list, not a deque: an empty std::deque allocates ~0.6 KB.
    std::list<std::string> forgotten_order;
    caf::response_promise drained; // answered when `pending` is empty
    // Directory probes waiting for the pong to our ping (register takeover).
    std::vector<caf::response_promise> probes;
  };
  std::unique_ptr<seldom> extra; // null until needed
  // `pending`'s size as the front doors see it when they balance calls
  // (replica_load.hpp); registered with the directory.
  replica_load_ptr load = std::make_shared<replica_load>();
  // Its service's queue when the service has a cap (told of every call
  // that ends here); null otherwise.
  slot_listener_actor service_queue;
  // What its pending requests share (pending_request.hpp); made at the first
  // call, again when runtime_id changes.
  std::shared_ptr<const pending_shared> shared;
  static inline const char* name = "runtime_connection";

  const std::string& who() const;

  seldom& more() {
    if (!extra)
      extra = std::make_unique<seldom>();
    return *extra;
  }
};

/// One runtime's WebSocket (the connection_actor interface). Answers `register`, allocates string ids for
/// requests to the runtime, spawns a pending_request per request, and
/// demultiplexes responses, runActionState and streamChunk by id (a streaming
/// run's chunks and trace id straight to its caller, the rest through the
/// pending_request). When the
/// socket closes every pending request fails at once with "connection
/// closed"; when the actor ends the socket closes.
///
/// - (frame_atom, text), (closed_atom, reason): from the socket
/// - (call_atom, call_request, caller) -> call_handle: starts a request (the
///   call_target_actor interface); `caller` gets its events
/// - (forget_atom, wire_id, trace_id, cancel): a pending request ended without
///   its answer (caller gone, timeout, drain); `cancel` sends cancelAction
///   for the run, now or when its trace id arrives
/// - (drain_atom) -> ok: once no request is in flight (shutdown)
/// - (cancel_atom): cancels every request in flight (drain timeout passed)
/// - (probe_atom) -> bool: true once the socket answers a WebSocket ping; no
///   answer otherwise (the directory's liveness probe before a takeover)
///
/// Its behavior is built once for all connections (shared_behavior.hpp).
using runtime_connection_actor = shared_behavior_actor<connection_state, connection_actor::base>;

connection_actor::behavior_type runtime_connection(runtime_connection_actor* self,
                                                   net::transport_ptr transport,
                                                   directory_actor directory,
                                                   connection_setup opts);

} // namespace actor_host
