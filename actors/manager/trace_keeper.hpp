#pragma once

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
// (trace_watch_atom, trace_id, watcher) -> (accepted, snapshot)   the watcher
// gets (trace_event_atom, event_json) for every span of the trace stored from
// now on; snapshot = the trace so far ("" = none yet); not accepted: too many
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_watch_atom, "tracewatch")
CAF_ADD_ATOM(actor_host_traces, actor_host::trace_atoms, trace_event_atom, "traceevent")
CAF_ADD_TYPE_ID(actor_host_traces, (actor_host::traces::run_span))
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

/// How long a route span waits for its run's root span before it is stored
/// as the root itself (the runtime exports no spans, or not here).
inline constexpr auto route_span_wait = std::chrono::seconds(10);

struct trace_keeper_state {
  std::shared_ptr<traces::trace_store> store; // the keeper's alone once spawned
  caf::actor exporter; // span_exporter to an OpenTelemetry collector; null = none
  // Route spans waiting for their root, oldest first; bounded.
  std::deque<std::pair<caf::actor_clock::time_point, traces::run_span>> waiting;
  std::unordered_map<std::string, std::vector<caf::actor>> watchers; // by trace id
  std::size_t watcher_count = 0;
  static inline const char* name = "trace_keeper";
};

/// Owns the trace store. SQLite blocks on disk, so this actor is spawned
/// detached (its own thread), never on the scheduler's threads; everything
/// else asks it. Prunes by the store's retention every minute.
/// With an `exporter` (--otlp-endpoint), every span it stores is also sent
/// there once ended, as OTLP JSON.
caf::behavior trace_keeper(caf::stateful_actor<trace_keeper_state>* self,
                           std::shared_ptr<traces::trace_store> store,
                           caf::actor exporter);

} // namespace actor_host
