#include "traces/otlp.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <map>

namespace actor_host::traces {

namespace json = boost::json;

namespace {

/// An AnyValue unwrapped; null for kinds Genkit does not keep (kvlist,
/// bytes). Arrays nest at most as deep as the parser allows (it is not
/// recursive: Boost.JSON's depth limit, 32 by default, bounds this too).
json::value from_any(const json::value& v, int depth = 0) {
  auto* o = v.if_object();
  if (!o || depth > 32)
    return nullptr;
  if (auto* x = o->if_contains("stringValue"))
    return *x;
  if (auto* x = o->if_contains("intValue")) {
    // int64 travels as a string in OTLP JSON; Genkit keeps what came.
    return *x;
  }
  if (auto* x = o->if_contains("boolValue"))
    return *x;
  if (auto* x = o->if_contains("doubleValue"))
    return *x;
  if (auto* x = o->if_contains("arrayValue")) {
    json::array out;
    if (auto* a = x->is_object() ? x->as_object().if_contains("values") : nullptr;
        a && a->is_array())
      for (auto& e : a->as_array())
        out.push_back(from_any(e, depth + 1));
    return out;
  }
  return nullptr;
}

/// Nanoseconds (a string or a number) to rounded milliseconds.
bool to_millis(const json::value* v, std::int64_t& ms) {
  if (!v)
    return false;
  std::int64_t ns = 0;
  if (v->is_string()) {
    auto& s = v->as_string();
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), ns);
    if (ec != std::errc{} || p != s.data() + s.size())
      return false;
  } else if (v->is_int64()) {
    ns = v->as_int64();
  } else {
    return false; // a uint64 is past INT64_MAX
  }
  if (ns < 0)
    return false;
  // Rounded without adding first: ns + 500000 overflowed near INT64_MAX.
  ms = ns / 1000000 + (ns % 1000000 >= 500000 ? 1 : 0);
  return true;
}

const char* kind_name(const json::value* k) {
  switch (k && k->is_int64() ? k->as_int64() : 0) {
    case 1: return "INTERNAL";
    case 2: return "SERVER";
    case 3: return "CLIENT";
    case 4: return "PRODUCER";
    case 5: return "CONSUMER";
    default: return "UNSPECIFIED";
  }
}

const json::array* array_member(const json::object& o, const char* k) {
  auto* v = o.if_contains(k);
  return v && v->is_array() ? &v->as_array() : nullptr;
}

std::string text(const json::object& o, const char* k) {
  auto* v = o.if_contains(k);
  return v && v->is_string() ? std::string{v->as_string()} : std::string{};
}

} // namespace

std::string trace_data_from_otlp(std::string_view text_in, std::vector<std::string>& out) {
  json::error_code ec;
  auto doc = json::parse(text_in, ec);
  if (ec || !doc.is_object())
    return "an OTLP/HTTP JSON export must be a JSON object";
  std::map<std::string, json::object> traces; // by trace id, in a stable order
  auto* resources = array_member(doc.as_object(), "resourceSpans");
  if (!resources)
    return doc.as_object().contains("resourceSpans") ? "resourceSpans must be an array" : "";
  for (auto& r : *resources) {
    auto* scopes = r.is_object() ? array_member(r.as_object(), "scopeSpans") : nullptr;
    if (!scopes)
      return "resourceSpans[].scopeSpans must be an array";
    for (auto& sc : *scopes) {
      if (!sc.is_object())
        return "scopeSpans[] must be objects";
      auto& so = sc.as_object();
      json::object library{{"name", ""}, {"version", ""}};
      if (auto* scope = so.if_contains("scope"); scope && scope->is_object()) {
        library["name"] = text(scope->as_object(), "name");
        library["version"] = text(scope->as_object(), "version");
      }
      auto* spans = array_member(so, "spans");
      if (!spans)
        return "scopeSpans[].spans must be an array";
      for (auto& sp : *spans) {
        if (!sp.is_object())
          return "spans[] must be objects";
        auto& s = sp.as_object();
        auto trace_id = text(s, "traceId");
        auto span_id = text(s, "spanId");
        if (trace_id.empty() || span_id.empty())
          return "every span needs a traceId and a spanId";
        std::int64_t start = 0, end = 0;
        if (!to_millis(s.if_contains("startTimeUnixNano"), start))
          return "span " + span_id + ": startTimeUnixNano must be a count of nanoseconds";
        if (auto* e = s.if_contains("endTimeUnixNano"); e && !to_millis(e, end))
          return "span " + span_id + ": endTimeUnixNano must be a count of nanoseconds";
        json::object attrs;
        if (auto* a = array_member(s, "attributes"))
          for (auto& kv : *a)
            if (kv.is_object())
              if (auto key = text(kv.as_object(), "key"); !key.empty())
                if (auto* v = kv.as_object().if_contains("value")) {
                  auto val = from_any(*v);
                  if (!val.is_null())
                    attrs[key] = std::move(val);
                }
        json::object span{{"traceId", trace_id},
                          {"spanId", span_id},
                          {"startTime", start},
                          {"endTime", end},
                          {"displayName", text(s, "name")},
                          {"attributes", std::move(attrs)},
                          {"instrumentationLibrary", library},
                          {"spanKind", kind_name(s.if_contains("kind"))}};
        if (auto parent = text(s, "parentSpanId"); !parent.empty())
          span["parentSpanId"] = parent;
        if (auto* st = s.if_contains("status"); st && st->is_object()) {
          auto* code = st->as_object().if_contains("code");
          if (code && code->is_int64() && code->as_int64() != 0) {
            json::object status{{"code", code->as_int64()}};
            if (auto m = text(st->as_object(), "message"); !m.empty())
              status["message"] = m;
            span["status"] = std::move(status);
          }
        }
        auto& t = traces[trace_id];
        if (t.empty()) {
          t["traceId"] = trace_id;
          t["spans"] = json::object{};
        }
        t["spans"].as_object()[span_id] = std::move(span);
      }
    }
  }
  for (auto& [id, t] : traces)
    out.push_back(json::serialize(t));
  return {};
}

namespace {

json::object any_value(const json::value& v) {
  json::object o;
  if (v.is_string())
    o["stringValue"] = v.as_string();
  else if (v.is_bool())
    o["boolValue"] = v.as_bool();
  else if (v.is_int64())
    o["intValue"] = std::to_string(v.as_int64());
  else if (v.is_uint64())
    o["intValue"] = std::to_string(v.as_uint64());
  else if (v.is_double())
    o["doubleValue"] = v.as_double();
  else
    o["stringValue"] = json::serialize(v);
  return o;
}

std::string nanos(const json::value* ms) {
  if (!ms || !ms->is_number())
    return "0";
  // Milliseconds written as nanoseconds by appending digits: no arithmetic
  // that can overflow, and a double past int64's range is not cast (UB).
  if (ms->is_double()) {
    auto d = ms->as_double();
    if (!(d >= 0 && d < 9.2e18))
      return "0";
    return std::to_string(static_cast<std::int64_t>(d)) + "000000";
  }
  if (ms->is_int64())
    return ms->as_int64() < 0 ? "0" : std::to_string(ms->as_int64()) + "000000";
  return std::to_string(ms->as_uint64()) + "000000";
}

int kind_number(const json::value* name) {
  static const std::pair<std::string_view, int> kinds[] = {
    {"INTERNAL", 1}, {"SERVER", 2}, {"CLIENT", 3}, {"PRODUCER", 4}, {"CONSUMER", 5}};
  if (name && name->is_string())
    for (auto& [n, k] : kinds)
      if (name->as_string() == n)
        return k;
  return 1;
}

} // namespace

std::string otlp_from_trace_data(std::string_view trace_data, std::string& out) {
  out.clear();
  json::error_code ec;
  auto doc = json::parse(trace_data, ec);
  auto* spans = !ec && doc.is_object() ? doc.as_object().if_contains("spans") : nullptr;
  if (!spans || !spans->is_object())
    return "not TraceData: no spans object";
  json::array list;
  for (auto& [id, v] : spans->as_object()) {
    auto* s = v.if_object();
    if (!s)
      return "not TraceData: span " + std::string{id} + " is not an object";
    auto* end = s->if_contains("endTime");
    if (!end || !end->is_number() || end->to_number<double>() <= 0)
      continue; // still running: exported once it has ended
    json::object o;
    for (auto* k : {"traceId", "spanId", "parentSpanId"})
      if (auto* x = s->if_contains(k); x && x->is_string())
        o[k] = x->as_string();
    auto* name = s->if_contains("displayName");
    o["name"] = name && name->is_string() ? name->as_string() : json::string{"span"};
    o["kind"] = kind_number(s->if_contains("spanKind"));
    o["startTimeUnixNano"] = nanos(s->if_contains("startTime"));
    o["endTimeUnixNano"] = nanos(end);
    json::array attrs;
    if (auto* a = s->if_contains("attributes"); a && a->is_object())
      for (auto& [k, av] : a->as_object())
        attrs.push_back(json::object{{"key", k}, {"value", any_value(av)}});
    o["attributes"] = std::move(attrs);
    json::object status;
    auto* st = s->if_contains("status");
    auto* code = st && st->is_object() ? st->as_object().if_contains("code") : nullptr;
    if (code && code->is_number() && code->to_number<double>() == 2) {
      status["code"] = 2;
      if (auto* m = st->as_object().if_contains("message"); m && m->is_string())
        status["message"] = m->as_string();
    } else {
      status["code"] = 0;
    }
    o["status"] = std::move(status);
    list.push_back(std::move(o));
  }
  if (list.empty())
    return {};
  json::object resource{{"attributes",
                         json::array{json::object{
                           {"key", "service.name"},
                           {"value", json::object{{"stringValue", "actor-host"}}}}}}};
  json::object scope_spans{{"scope", json::object{{"name", "actor-host"}}},
                           {"spans", std::move(list)}};
  json::object rs{{"resource", std::move(resource)},
                  {"scopeSpans", json::array{std::move(scope_spans)}}};
  out = json::serialize(json::object{{"resourceSpans", json::array{std::move(rs)}}});
  return {};
}

} // namespace actor_host::traces
