#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// The manager speaks Reflection V2 to every runtime; a V1 runtime (an HTTP
// server found through its runtime file) is reached through this adapter:
// each V2 request becomes one HTTP request, and what the runtime answers
// becomes the V2 frames a V2 runtime would have sent. Pure functions; the
// sockets are in v1_runtime_link. Shapes: ../shared/spec/REFLECTION_V1.md.
namespace actor_host::wire::v1 {

/// What one V2 request of the manager becomes on a V1 runtime.
struct http_plan {
  enum class kind { none, run, list_actions, list_values, cancel };
  kind what = kind::none;
  bool post = false;
  std::string target; // path and query
  std::string body;   // POST
  bool stream = false; // run: the answer is NDJSON chunks, then the final record
  /// Set: no HTTP at all, answer the request with this JSON-RPC error object.
  std::string refusal;
  /// run: the managers the call has passed through (params' `actorHostHops`,
  /// set by the HTTP door from X-Actor-Host-Hops); the request carries one
  /// more, so a runtime URL that leads back to a manager shows as a loop.
  std::uint32_t hops = 0;
};

/// Plans `method` with its raw `params` (a JSON object or "").
/// Notifications V1 has no use for (bidi input) plan to kind::none.
http_plan plan_request(std::string_view method, std::string params);

/// runActionState for request `request_id` (raw JSON id) with the trace id
/// the runtime sent in X-Genkit-Trace-Id (the connection checks its form).
std::string run_state_frame(std::string_view request_id, std::string_view trace_id);

/// streamChunk for one NDJSON line of a streaming run; "" when the line is
/// not one valid JSON value (nothing unchecked is relayed).
std::string chunk_frame(std::string_view request_id, std::string_view line);

/// The V2 response for the whole answer (`status`, `body`) of a planned
/// request. For runs `body` is the final record and `header_trace` the trace
/// id from the head ("" if none), put into `telemetry` when the record lacks
/// it, as Genkit's manager does.
std::string answer_frame(const http_plan& plan, std::string_view request_id, int status,
                         std::string body, std::string_view header_trace);

/// The V2 response for a request whose HTTP exchange failed (`why`, for a
/// person: connection refused, answer too large, ...): UNAVAILABLE.
std::string failure_frame(std::string_view request_id, std::string_view runtime_id,
                          std::string_view why);

} // namespace actor_host::wire::v1
