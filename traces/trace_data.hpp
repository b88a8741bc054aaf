#pragma once

#include <boost/json/fwd.hpp>

#include <string>
#include <string_view>

/// TraceData documents as the telemetry server's schema (TraceDataSchema,
/// SpanDataSchema) accepts them: what the trace store takes. Internal to
/// traces/.
namespace actor_host::traces {

/// Parses `text` (depth-capped) into `out` and checks it; false with `error`
/// (naming the field) when it is not JSON or not a TraceData document.
bool parse_trace_data(std::string_view text, boost::json::value& out, std::string& error);

} // namespace actor_host::traces
