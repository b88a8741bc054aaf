#pragma once

#include <string>
#include <string_view>

/// The notifications of a run in progress (Reflection V2: runtime ->
/// manager, and manager -> /api/ws callers alike). `request_id` is the raw
/// JSON id of the request they belong to, as it came on the wire.
namespace actor_host::wire::reflection {

/// `runActionState` carrying the run's trace id (quoted here).
std::string run_action_state(std::string_view request_id, std::string_view trace_id);

/// `streamChunk` carrying `chunk` (raw JSON). One allocation: it runs once
/// per streamed chunk.
std::string stream_chunk(std::string_view request_id, std::string_view chunk);

} // namespace actor_host::wire::reflection
