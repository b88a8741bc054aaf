#include "traces/trace_filter.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace actor_host::traces {

namespace json = boost::json;

namespace {

constexpr std::size_t max_filter_bytes = 16 * 1024;
constexpr const char* ops[] = {"eq", "neq", "gt", "gte", "lt", "lte", "contains"};

/// JavaScript's `${v}` for the scalars attributes hold.
std::string js_text(const json::value& v) {
  if (v.is_string())
    return std::string{v.as_string()};
  if (v.is_bool())
    return v.as_bool() ? "true" : "false";
  if (v.is_null())
    return "null";
  return json::serialize(v);
}

/// The index record of the telemetry server's file store (Index.add).
json::object index_record(const json::object& trace) {
  json::object d;
  if (auto* id = trace.if_contains("traceId"))
    d["id"] = *id;
  const json::object* root = nullptr;
  if (auto* spans = trace.if_contains("spans"); spans && spans->is_object())
    for (auto& [k, s] : spans->as_object())
      if (s.is_object() && !s.as_object().contains("parentSpanId")) {
        root = &s.as_object();
        break;
      }
  const json::object* attrs = nullptr;
  if (root)
    if (auto* a = root->if_contains("attributes"); a && a->is_object())
      attrs = &a->as_object();
  auto attr = [&](const char* k) -> const json::value* {
    auto* v = attrs ? attrs->if_contains(k) : nullptr;
    return v && !(v->is_string() && v->as_string().empty()) ? v : nullptr;
  };
  auto* type = attr("genkit:metadata:subtype");
  if (!type)
    type = attr("genkit:type");
  d["type"] = type ? js_text(*type) : std::string{"UNKNOWN"};
  if (!root)
    return d;
  auto num = [&](const char* k) -> const json::value* {
    auto* v = root->if_contains(k);
    return v && v->is_number() && v->to_number<double>() != 0 ? v : nullptr;
  };
  if (auto* s = num("startTime"))
    d["start"] = *s;
  auto* name = root->if_contains("displayName");
  bool named = name && name->is_string() && !name->as_string().empty();
  if (named)
    d["name"] = *name;
  if (auto* e = num("endTime"))
    d["end"] = *e;
  if (named) {
    const json::value* code = nullptr;
    if (auto* st = root->if_contains("status"); st && st->is_object())
      code = st->as_object().if_contains("code");
    d["status"] = code && !code->is_null() ? *code : json::value(json::string("UNKNOWN"));
  }
  if (attrs)
    for (auto& [k, v] : *attrs)
      if (k.starts_with("genkitx:"))
        d[k] = js_text(v);
  return d;
}

bool includes(const json::value& filter_value, const json::value* val) {
  auto same = [&](const json::value& f) {
    if (!val)
      return false;
    if (f.is_number() && val->is_number())
      return f.to_number<double>() == val->to_number<double>();
    return f == *val;
  };
  if (filter_value.is_array())
    return std::any_of(filter_value.as_array().begin(), filter_value.as_array().end(), same);
  return same(filter_value);
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

std::string trace_filter::parse(std::string_view text, trace_filter& out) {
  if (text.size() > max_filter_bytes)
    return "filter is larger than 16 KiB";
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object())
    return "filter must be a JSON object";
  for (auto& [op, fields] : v.as_object()) {
    if (std::none_of(std::begin(ops), std::end(ops), [&](const char* o) { return op == o; }))
      return "filter: unknown operator '" + std::string{op}
             + "' (eq, neq, gt, gte, lt, lte, contains)";
    if (!fields.is_object())
      return "filter." + std::string{op} + " must be an object of field: value";
    bool ordered = op != "eq" && op != "neq" && op != "contains";
    for (auto& [k, f] : fields.as_object())
      if (ordered && !f.is_number())
        return "filter." + std::string{op} + "." + std::string{k} + " must be a number";
  }
  out.filter_ = std::make_shared<const json::object>(std::move(v.as_object()));
  return {};
}

bool trace_filter::matches(std::string_view trace_data) const {
  if (!filter_)
    return true;
  json::error_code ec;
  auto trace = json::parse(trace_data, ec);
  if (ec || !trace.is_object())
    return false;
  auto d = index_record(trace.as_object());
  for (auto& [op, fields] : *filter_) {
    for (auto& [k, f] : fields.as_object()) {
      auto* val = d.if_contains(k);
      if (op == "eq" && !includes(f, val))
        return false;
      if (op == "neq" && includes(f, val))
        return false;
      if (op == "contains") {
        if (!val || !val->is_string())
          return false;
        auto hay = lower(std::string{val->as_string()});
        auto hit = [&](const json::value& fv) { return hay.find(lower(js_text(fv))) != std::string::npos; };
        bool any = f.is_array() ? std::any_of(f.as_array().begin(), f.as_array().end(), hit) : hit(f);
        if (!any)
          return false;
      }
      if (op == "gt" || op == "gte" || op == "lt" || op == "lte") {
        if (!val || !val->is_number())
          return false;
        double x = val->to_number<double>();
        double y = f.to_number<double>();
        if ((op == "gt" && !(x > y)) || (op == "gte" && !(x >= y)) || (op == "lt" && !(x < y))
            || (op == "lte" && !(x <= y)))
          return false;
      }
    }
  }
  return true;
}

} // namespace actor_host::traces
