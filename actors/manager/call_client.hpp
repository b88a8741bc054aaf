#pragma once

#include "actors/common/messages.hpp"

#include <string>

namespace actor_host {

struct call_request {
  std::uint64_t tag = 0;  // the caller's correlation id, echoed in every event
  std::string runtime_id; // "" = the most recent runtime
  std::string method;
  std::string params;     // raw JSON object, or "" for none
  caf::timespan timeout{0};
};

/// Routes a call through the directory and starts it on the runtime's
/// connection. Everything about it then arrives at `self` as messages:
///   (accepted_atom, tag, pending)   the pending_request, for input and abort
///   (trace_atom, tag, trace_id)     runActionState
///   (chunk_atom, tag, raw_chunk)    streamChunk
///   (done_atom, tag, ok, raw)       the result, or an error object
/// `accepted` and the events come from different actors, so they may arrive
/// in any order; `done` is always last among the events.
void start_call(caf::event_based_actor* self, const caf::actor& directory, call_request req);

/// Largest `timeoutMs` accepted (~24.8 days, as JavaScript's setTimeout).
inline constexpr double max_timeout_ms = 2147483647.0;

/// Reads an optional `timeoutMs` from raw params; `fallback` when absent.
/// Returns false for a value that is not a number from 0 to max_timeout_ms.
bool read_timeout(const std::string* raw_timeout_ms, caf::timespan fallback, caf::timespan& out);

} // namespace actor_host
