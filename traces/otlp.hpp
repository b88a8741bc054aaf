#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace actor_host::traces {

/// OTLP/HTTP JSON (an ExportTraceServiceRequest: resourceSpans ->
/// scopeSpans -> spans) as Genkit TraceData documents, one per trace id,
/// converted the way @genkit-ai/telemetry-server does (times in ms, the
/// span kind by name, attribute values unwrapped, status only when not
/// OK). Returns "" and fills `out`, or why the document is not OTLP.
std::string trace_data_from_otlp(std::string_view json, std::vector<std::string>& out);

/// The other way, for an OpenTelemetry collector: the ended spans of a
/// Genkit TraceData document as one OTLP/HTTP JSON export (resource
/// service.name "actor-host", times in ns, the kind by number, attribute
/// values wrapped, status ERROR for Genkit's code 2). Returns "" and sets
/// `out` ("" when no span has ended), or why the document is not TraceData.
std::string otlp_from_trace_data(std::string_view trace_data, std::string& out);

} // namespace actor_host::traces
