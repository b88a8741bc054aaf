#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace actor_host::traces {

/// What @genkit-ai/telemetry-server tells the watchers of a trace
/// (`GET /api/traces/<id>/stream`) when a TraceData document is saved: for
/// each span of the document `span_start` (unless the span is still running
/// while the stored one has ended) and `span_end` once it has ended, as
/// {"type","traceId","span"} objects ordered by their times (a start before
/// an end at the same time). `merged` is the trace as stored after the save,
/// needed only when a span of the document is still running ("" otherwise).
std::vector<std::string> span_events(std::string_view saved_doc, std::string_view merged);

/// Whether any span of the document is still running (endTime 0 or absent).
bool has_running_span(std::string_view doc);

} // namespace actor_host::traces
