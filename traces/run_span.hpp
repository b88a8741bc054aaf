#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace actor_host::traces {

/// One action run as a Genkit span: what the real tools (the Dev UI,
/// `genkit trace:get`) need to render it.
struct run_span {
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id; // "" for a root span
  std::string kind = "action"; // genkit:type
  std::string action_type;    // "flow", "tool", ...
  std::string name;           // "echo"
  std::string input;          // raw JSON; "" = none
  std::string output;         // raw JSON; "" = none
  bool ok = true;
  std::string error_message;  // when !ok
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  /// More attributes as (name, string value), e.g. the runtime that ran it.
  std::vector<std::pair<std::string, std::string>> attributes;
};

/// A TraceData document with the one span, attributes named as Genkit's JS
/// tracer names them: genkit:type (`kind`), genkit:metadata:subtype (the
/// action type), genkit:name, genkit:path "/{name,t:action,s:type}",
/// genkit:isRoot, genkit:input / genkit:output (JSON as strings),
/// genkit:state "success" | "error"; status code 0, or 2 with the message.
std::string trace_data_json(const run_span& span);

/// Its SpanData alone (what trace_data_json puts under `spans`).
std::string span_json(const run_span& span);
/// The same, appended to `out`.
void append_span_json(std::string& out, const run_span& span);
/// span_json(span).size(), without writing it.
std::size_t span_json_size(const run_span& span);

} // namespace actor_host::traces
