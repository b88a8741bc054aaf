#include "traces/run_span.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host::traces {

using wire::jsonrpc::quote;

std::string span_json(const run_span& s) {
  const bool root = s.parent_span_id.empty();
  std::string attrs = R"({"genkit:type":)" + quote(s.kind) + R"(,"genkit:metadata:subtype":)"
                      + quote(s.action_type)
                      + R"(,"genkit:name":)" + quote(s.name) + R"(,"genkit:path":)"
                      + quote("/{" + s.name + ",t:" + s.kind + ",s:" + s.action_type + "}")
                      + R"(,"genkit:state":)" + (s.ok ? R"("success")" : R"("error")");
  if (root)
    attrs += R"(,"genkit:isRoot":true)";
  if (!s.input.empty())
    attrs += R"(,"genkit:input":)" + quote(s.input);
  if (!s.output.empty())
    attrs += R"(,"genkit:output":)" + quote(s.output);
  for (auto& [k, v] : s.attributes)
    attrs += "," + quote(k) + ":" + quote(v);
  attrs += "}";
  std::string span = R"({"spanId":)" + quote(s.span_id) + R"(,"traceId":)" + quote(s.trace_id);
  if (!root)
    span += R"(,"parentSpanId":)" + quote(s.parent_span_id);
  span += R"(,"startTime":)" + std::to_string(s.start_ms) + R"(,"endTime":)"
          + std::to_string(s.end_ms) + R"(,"attributes":)" + attrs
          + R"(,"displayName":)" + quote(s.name)
          + R"(,"links":[],"instrumentationLibrary":{"name":"genkit-tracer","version":"v1"})"
            R"(,"spanKind":"INTERNAL","sameProcessAsParentSpan":{"value":true},"status":)"
          + (s.ok ? std::string{R"({"code":0})"}
                  : R"({"code":2,"message":)" + quote(s.error_message) + "}")
          + R"(,"timeEvents":{"timeEvent":[]}})";
  return span;
}

std::string trace_data_json(const run_span& s) {
  std::string out = R"({"traceId":)" + quote(s.trace_id);
  if (s.parent_span_id.empty())
    out += R"(,"displayName":)" + quote(s.name) + R"(,"startTime":)" + std::to_string(s.start_ms)
           + R"(,"endTime":)" + std::to_string(s.end_ms);
  out += R"(,"spans":{)" + quote(s.span_id) + ":" + span_json(s) + "}}";
  return out;
}

} // namespace actor_host::traces
