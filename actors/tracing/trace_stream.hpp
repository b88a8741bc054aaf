#pragma once

#include "net/http_exchange.hpp"

#include <caf/fwd.hpp>

#include <string>

namespace actor_host {

/// How a trace's updates are written: Server-Sent Events (`data: <json>`
/// and a blank line, the telemetry server's GET /api/traces/<id>/stream) or
/// one JSON per line (the tools server's POST /api/streamTrace).
enum class trace_stream_format { sse, ndjson };

/// Streams one trace to one HTTP client: the trace so far, then every span
/// event the trace keeper reports for it (traces/span_events.hpp), until the
/// client leaves or the keeper ends. One actor per client, watched by the
/// keeper (which caps them); the response's write queue bounds a slow reader.
void start_trace_stream(caf::actor_system& sys, const caf::actor& keeper, std::string trace_id,
                        net::http_responder_ptr res, trace_stream_format format);

} // namespace actor_host
