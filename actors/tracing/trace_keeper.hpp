#pragma once

#include "actors/tracing/flat_key_map.hpp"
#include "actors/tracing/held_route_span.hpp"
#include "actors/tracing/route_span_queue.hpp"
#include "actors/tracing/trace_key.hpp"
#include "traces/run_span.hpp"
#include "traces/trace_store.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>
#include <string>

// The trace keeper's messages: its own type ID block (after actor_host's),
// so the code that never talks to it does not rebuild when they change.
CAF_BEGIN_TYPE_ID_BLOCK(actor_host_traces, caf::first_custom_type_id + 500)
// (trace_save_atom, trace_data_json) -> error ("" = stored)
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_save_atom, "tracesave")
// (trace_get_atom, trace_id) -> (found, trace_data_json)
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_get_atom, "traceget")
// (trace_list_atom, limit, offset, filter_json) -> {"traces":[...],"continuationToken"?}
//                                                ("" = no filter; trace_filter.hpp)
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_list_atom, "tracelist")
// (otlp_save_atom, otlp_json) -> error ("" = stored)   an OTLP/HTTP JSON export
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, otlp_save_atom, "otlpsave")
// (trace_prune_atom)   its own, every minute: retention
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_prune_atom, "traceprune")
// (route_span_atom, run_span)   the manager's span of one routed run: stored
// under the run's root span once the runtime's spans are in, else as the
// trace's root after route_span_wait
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, route_span_atom, "routespan")
// (route_flush_atom)   its own: route spans whose wait is over
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, route_flush_atom, "routeflush")
// (route_spans_atom, route_batch)   route spans in bulk, from route_span_queue
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, route_spans_atom, "routespans")
// (trace_commit_atom)   the keeper's own: the documents posted lately are committed
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_commit_atom, "tracecmt")
// (route_batch_atom)   to the route_span_batcher: a route_span_queue's batch window is over
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, route_batch_atom, "routebatch")
// (trace_watch_atom, trace_id, watcher) -> (accepted, snapshot)   the watcher
// gets (trace_event_atom, event_json) for every span of the trace stored from
// now on; snapshot = the trace so far ("" = none yet); not accepted: too many
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_watch_atom, "tracewatch")
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_event_atom, "traceevent")
// (trace_reader_atom, reader): the keeper's listings and loads go there
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_reader_atom, "tracereadr")
CAF_ADD_TYPE_ID(actor_host_traces, (actor_host::traces::run_span))
CAF_ADD_TYPE_ID(actor_host_traces, (actor_host::route_batch))
CAF_END_TYPE_ID_BLOCK(actor_host_traces)

namespace actor_host::traces {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_span& x) {
  return f(caf::meta::type_name("run_span"), x.trace_id, x.span_id, x.parent_span_id, x.kind,
           x.action_type, x.name, x.input, x.output, x.ok, x.error_message, x.start_ms, x.end_ms,
           x.attributes);
}

} // namespace actor_host::traces

namespace actor_host {

using namespace trace_atoms;

/// Watchers of traces (GET /api/traces/<id>/stream, POST /api/streamTrace)
/// at once; more are refused.
inline constexpr std::size_t max_trace_watchers = 256;

/// Route spans sent to the keeper and not yet taken (obs route_spans_queued):
/// past this, pending requests drop theirs (counted and logged) rather than
/// grow the keeper's mailbox when SQLite falls behind the call rate.
inline constexpr std::int64_t max_route_spans_queued = 10000;

/// Traces whose root span the keeper remembers (trace_keeper_state::recent_roots).
inline constexpr std::size_t max_recent_roots = 4096;

/// Route spans waiting for their root at once; past it the oldest are
/// stored as roots (route_span_wait).
inline constexpr std::size_t max_route_spans_waiting = 4096;

/// How long a route span waits for its run's root span before it is stored
/// as the root itself (the runtime exports no spans, or not here).
inline constexpr auto route_span_wait = std::chrono::seconds(10);

/// Documents posted to /api/traces are committed together: at most this
/// many (or bytes) wait, for at most incoming_window (one SQLite commit per
/// document cost more than the rest of storing it).
inline constexpr std::size_t max_incoming_docs = 64;
inline constexpr std::size_t max_incoming_bytes = 8u << 20;
inline constexpr auto incoming_window = std::chrono::milliseconds(5);

struct trace_keeper_state {
  std::shared_ptr<traces::trace_store> store; // the keeper's alone once spawned
  caf::actor exporter; // span_exporter to an OpenTelemetry collector; null = none
  // Route spans waiting for their root, oldest first; bounded.
  std::deque<std::pair<caf::actor_clock::time_point, held_route_span>> waiting;
  // How many of them wait per trace id (a save looks here before it scans).
  flat_key_map<trace_key, std::size_t> waiting_traces{max_route_spans_waiting};
  // Root span ids of the traces stored lately (by trace id), oldest first in
  // recent_order; bounded. A route span looks its root up here, not in
  // SQLite: its run has just ended, so a root that is in came in lately.
  flat_key_map<trace_key, span_key> recent_roots{max_recent_roots + 1};
  std::deque<trace_key> recent_order;
  // Route spans the message at hand attached to their roots (stored before it returns).
  std::vector<held_route_span> attached;
  // The run_span a held route span is filled into when it is exported or
  // watched (its strings keep their capacity).
  traces::run_span scratch;
  // Posted documents not committed yet, with their posters' promises; bounded.
  std::vector<std::pair<std::string, caf::response_promise>> incoming;
  std::size_t incoming_bytes = 0;
  bool incoming_window_open = false;
  std::unordered_map<std::string, std::vector<caf::actor>> watchers; // by trace id
  std::size_t watcher_count = 0;
  // What the store's retention dropped (and how often it summed its size
  // again) since the last log line, which the minute's prune writes.
  std::uint64_t dropped_by_age = 0;
  std::uint64_t dropped_by_size = 0;
  std::uint64_t resyncs = 0;
  // A trace_reader with a connection of its own: listings and loads go
  // there, so a slow filtered listing never holds up a store. Null: here.
  caf::actor reader;
  static inline const char* name = "trace_keeper";
};

struct trace_reader_state {
  std::shared_ptr<traces::trace_store> store; // its own connection to the keeper's file
  static inline const char* name = "trace_reader";
};

/// Answers (trace_get_atom, id) and (trace_list_atom, ...) as the keeper
/// does, from a second connection to the store's file: SQLite in WAL mode
/// lets it read while the keeper writes. Spawned detached, like the keeper;
/// the keeper hands it its reads once told (trace_reader_atom, reader).
caf::behavior trace_reader(caf::stateful_actor<trace_reader_state>* self,
                           std::shared_ptr<traces::trace_store> store);

/// Route spans collected before they go to the keeper in one message
/// (route_span_queue.hpp).
inline constexpr std::size_t route_batch_max = route_span_queue::batch_max;
inline constexpr auto route_batch_window = route_span_queue::batch_window;

struct route_span_batcher_state {
  route_span_queue_ptr queue;
  static inline const char* name = "route_span_batcher";
};

/// Owns the batch window of `queue` (made for `keeper`, which it returns):
/// (route_batch_atom), sent route_batch_window after the first span of a
/// batch, hands the keeper what is queued.
caf::behavior route_span_batcher(caf::stateful_actor<route_span_batcher_state>* self,
                                 route_span_queue_ptr queue);

/// The queue the runs' route spans go to, with its batcher spawned by
/// `spawn` (a function of the behavior and the queue, so the caller picks
/// how the batcher is spawned and supervised).
template <class Spawn>
route_span_queue_ptr make_route_span_queue(caf::actor keeper, Spawn&& spawn) {
  auto queue = std::make_shared<route_span_queue>(std::move(keeper));
  queue->set_batcher(spawn(route_span_batcher, queue));
  return queue;
}

/// Owns the trace store. SQLite blocks on disk, so this actor is spawned
/// detached (its own thread), never on the scheduler's threads; everything
/// else asks it. Prunes by the store's retention every minute.
/// With an `exporter` (--otlp-endpoint), every span it stores is also sent
/// there once ended, as OTLP JSON.
caf::behavior trace_keeper(caf::stateful_actor<trace_keeper_state>* self,
                           std::shared_ptr<traces::trace_store> store,
                           caf::actor exporter);

} // namespace actor_host
