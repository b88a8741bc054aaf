#pragma once

#include <string>
#include <string_view>

namespace actor_host::traces {

/// Genkit's TraceQueryFilter ({eq?, neq?, gt?, gte?, lt?, lte?, contains?},
/// each {field: value | [values]}), judged the way @genkit-ai/telemetry-server
/// judges it: on a trace's index record, made from its root span (id, type,
/// name, start, end, status, and its `genkitx:*` attributes as text).
class trace_filter {
public:
  /// "" and the filter, or why `json` is not one (size-capped, checked).
  static std::string parse(std::string_view json, trace_filter& out);

  bool empty() const {
    return json_.empty();
  }

  /// Whether the trace (TraceData JSON) passes.
  bool matches(std::string_view trace_data) const;

private:
  std::string json_; // validated
};

} // namespace actor_host::traces
