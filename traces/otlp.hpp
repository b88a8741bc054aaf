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

} // namespace actor_host::traces
