#include "traces/trace_data.hpp"

#include "traces/trace_store.hpp"

#include "registry/runtime_info.hpp"

#include <boost/json.hpp>

namespace actor_host::traces {

namespace json = boost::json;

namespace {

// The checks of TraceDataSchema/SpanDataSchema, each failure naming its field.
std::string check_span(const std::string& trace_id, const std::string& key, const json::value& v) {
  auto where = "spans['" + key.substr(0, 64) + "']";
  auto* s = v.if_object();
  if (!s)
    return where + " must be an object";
  auto str = [&](const char* k, bool required) -> std::string {
    auto* x = s->if_contains(k);
    if (!x)
      return required ? where + "." + k + " is missing" : std::string{};
    return x->is_string() ? std::string{} : where + "." + k + " must be a string";
  };
  auto num = [&](const char* k) -> std::string {
    auto* x = s->if_contains(k);
    if (!x)
      return where + "." + k + " is missing";
    return x->is_number() ? std::string{} : where + "." + k + " must be a number";
  };
  auto obj = [&](const char* k) -> std::string {
    auto* x = s->if_contains(k);
    if (!x)
      return where + "." + k + " is missing";
    return x->is_object() ? std::string{} : where + "." + k + " must be an object";
  };
  for (auto err : {str("spanId", true), str("traceId", true), str("parentSpanId", false),
                   num("startTime"), num("endTime"), obj("attributes"), str("displayName", true),
                   obj("instrumentationLibrary"), str("spanKind", true)})
    if (!err.empty())
      return err;
  auto& span_id = s->at("spanId").as_string();
  if (span_id != key)
    return where + ".spanId must be its key in spans";
  if (!registry::valid_trace_id({span_id.data(), span_id.size()}))
    return where + ".spanId must be 1-128 of [A-Za-z0-9._-]";
  if (s->at("traceId").as_string() != trace_id)
    return where + ".traceId must be the trace's traceId";
  return {};
}

constexpr std::size_t max_display_name_bytes = 4096;

std::string check(const json::value& doc) {
  auto* o = doc.if_object();
  if (!o)
    return "a TraceData document must be a JSON object";
  auto* id = o->if_contains("traceId");
  if (!id || !id->is_string())
    return "traceId must be a string";
  std::string trace_id{id->as_string()};
  if (!registry::valid_trace_id(trace_id))
    return "traceId must be 1-128 of [A-Za-z0-9._-]";
  if (auto* d = o->if_contains("displayName"); d && !d->is_string())
    return "displayName must be a string";
  // A name, kept in the trace's row and listed with it: bounded like ids.
  if (auto* d = o->if_contains("displayName"); d && d->as_string().size() > max_display_name_bytes)
    return "displayName must be at most " + std::to_string(max_display_name_bytes) + " bytes";
  for (auto k : {"startTime", "endTime"})
    if (auto* t = o->if_contains(k); t && !t->is_number())
      return std::string{k} + " must be a number";
  auto* spans = o->if_contains("spans");
  if (!spans || !spans->is_object())
    return "spans must be an object of SpanData by span id";
  for (auto& [key, span] : spans->as_object())
    if (auto err = check_span(trace_id, std::string{key}, span); !err.empty())
      return err;
  return {};
}

} // namespace

bool parse_trace_data(std::string_view text, json::value& out, std::string& error) {
  json::parse_options opts;
  opts.max_depth = 64; // Boost.JSON parses without recursion; attributes stay shallow
  std::error_code ec;
  out = json::parse(text, ec, {}, opts);
  if (ec) {
    error = "not valid JSON: " + ec.message();
    return false;
  }
  error = check(out);
  return error.empty();
}

std::string check_trace_data(std::string_view text) {
  json::value doc;
  std::string error;
  parse_trace_data(text, doc, error);
  return error;
}

} // namespace actor_host::traces
