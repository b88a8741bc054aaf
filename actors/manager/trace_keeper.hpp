#pragma once

#include "traces/trace_store.hpp"

#include <caf/all.hpp>

#include <memory>
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
CAF_END_TYPE_ID_BLOCK(actor_host_traces)

namespace actor_host {

using namespace trace_atoms;

struct trace_keeper_state {
  std::shared_ptr<traces::trace_store> store; // the keeper's alone once spawned
  static inline const char* name = "trace_keeper";
};

/// Owns the trace store. SQLite blocks on disk, so this actor is spawned
/// detached (its own thread), never on the scheduler's threads; everything
/// else asks it. Prunes by the store's retention every minute.
caf::behavior trace_keeper(caf::stateful_actor<trace_keeper_state>* self,
                           std::shared_ptr<traces::trace_store> store);

} // namespace actor_host
