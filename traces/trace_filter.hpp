#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace boost::json {
class object;
}

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
    return !filter_;
  }

  /// Whether the trace (TraceData JSON) passes.
  bool matches(std::string_view trace_data) const;

private:
  // Parsed once and shared: a listing judges up to 10,000 traces with it.
  std::shared_ptr<const boost::json::object> filter_; // validated; null = no filter
};

} // namespace actor_host::traces
