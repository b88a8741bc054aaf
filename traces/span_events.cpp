#include "traces/span_events.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace actor_host::traces {

namespace json = boost::json;

namespace {

double number(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_number() ? v->to_number<double>() : 0;
}

const json::object* spans_of(const json::value& doc) {
  auto* o = doc.if_object();
  auto* s = o ? o->if_contains("spans") : nullptr;
  return s ? s->if_object() : nullptr;
}

} // namespace

bool has_running_span(std::string_view doc) {
  json::error_code ec;
  auto v = json::parse(doc, ec);
  auto* spans = ec ? nullptr : spans_of(v);
  if (!spans)
    return false;
  return std::any_of(spans->begin(), spans->end(), [](auto& kv) {
    auto* s = kv.value().if_object();
    return s && !(number(*s, "endTime") > 0);
  });
}

std::vector<std::string> span_events(std::string_view saved_doc, std::string_view merged) {
  json::error_code ec;
  auto doc = json::parse(saved_doc, ec);
  auto* spans = ec ? nullptr : spans_of(doc);
  if (!spans)
    return {};
  json::value stored;
  if (!merged.empty())
    stored = json::parse(merged, ec);
  auto* stored_spans = spans_of(stored);
  auto trace = doc.as_object().at("traceId");
  struct event {
    double at;
    bool start;
    std::string json;
  };
  std::vector<event> events;
  for (auto& [id, v] : *spans) {
    auto* s = v.if_object();
    if (!s)
      continue;
    bool ended = number(*s, "endTime") > 0;
    const json::value* was = stored_spans ? stored_spans->if_contains(id) : nullptr;
    bool already_ended = was && was->is_object() && number(was->as_object(), "endTime") > 0;
    if (!ended && already_ended)
      continue;
    auto make = [&](const char* type) {
      return json::serialize(json::object{{"type", type}, {"traceId", trace}, {"span", v}});
    };
    events.push_back({number(*s, "startTime"), true, make("span_start")});
    if (ended)
      events.push_back({number(*s, "endTime"), false, make("span_end")});
  }
  std::stable_sort(events.begin(), events.end(), [](const event& a, const event& b) {
    if (a.at != b.at)
      return a.at < b.at;
    return a.start && !b.start;
  });
  std::vector<std::string> out;
  out.reserve(events.size());
  for (auto& e : events)
    out.push_back(std::move(e.json));
  return out;
}

} // namespace actor_host::traces
