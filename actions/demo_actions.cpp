#include "actions/demo_actions.hpp"

#include "schema/json_schema.hpp"

#include <boost/json.hpp>

#include <cctype>
#include <chrono>
#include <cmath>
#include <string>
#include <string_view>

// Actions are declared with designated initializers, naming only the fields
// they use; GCC 12 warns about the others unless they have `{}` initializers.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace actor_host::actions {

namespace json = boost::json;
using namespace std::chrono;

namespace {

// -- small helpers ---------------------------------------------------------------

/// The top level of a JSON Schema as zod-to-json-schema writes it (draft-07,
/// `$schema` last). Genkit lists these texts verbatim in listActions.
std::string schema(std::string_view type_and_more) {
  return "{" + std::string{type_and_more} + R"(,"$schema":"http://json-schema.org/draft-07/schema#"})";
}

/// A top-level z.object({...}): `properties` and `required` are the inner
/// text of those two members (`required` is omitted by zod when empty).
std::string object_schema(std::string_view properties, std::string_view required = {}) {
  std::string s = R"("type":"object","properties":{)" + std::string{properties} + "}";
  if (!required.empty())
    s += R"(,"required":[)" + std::string{required} + "]";
  return schema(s + R"(,"additionalProperties":true)");
}

double num(const json::value& v) {
  return v.to_number<double>();
}

/// A JS number as JSON: integral values as integers (17, not 1.7E1).
json::value js_num(double x) {
  if (std::trunc(x) == x && std::fabs(x) <= 9007199254740992.0)
    return static_cast<std::int64_t>(x);
  return x;
}

/// String(v) of JavaScript, for values used as messages.
std::string js_string(const json::value& v) {
  if (auto* s = v.if_string())
    return std::string{*s};
  if (auto* a = v.if_array()) {
    std::string out;
    for (size_t i = 0; i < a->size(); ++i)
      out += (i ? "," : "") + ((*a)[i].is_null() ? std::string{} : js_string((*a)[i]));
    return out;
  }
  return v.is_object() ? "[object Object]" : schema::json_stringify(v);
}

bool truthy(const json::value& v) {
  if (v.is_null())
    return false;
  if (auto* b = v.if_bool())
    return *b;
  if (auto* s = v.if_string())
    return !s->empty();
  if (v.is_number())
    return num(v) != 0; // NaN cannot come from JSON
  return true;
}

/// A member of an object input, or nullptr.
const json::value* field(const json::value& v, std::string_view key) {
  auto* o = v.if_object();
  return o ? o->if_contains(key) : nullptr;
}

/// How long Node's setTimeout(f, ms) waits: below 1 or above 2^31-1 means 1.
milliseconds node_timeout(double ms) {
  return milliseconds{ms >= 1 && ms <= 2147483647.0 ? static_cast<long>(ms) : 1};
}

/// Calls `f` for each input chunk: the bidi input stream or else, as Genkit's
/// inputStream defaults to [input], the single input. A run cancelled while
/// waiting for input ends with CANCELLED.
template <class F>
void for_each_input(action_context& ctx, F f) {
  if (auto* in = ctx.inputs()) {
    while (auto chunk = in->next())
      f(*chunk);
    ctx.throw_if_cancelled();
  } else {
    f(ctx.input());
  }
}

std::string ascii_case(std::string s, int (*conv)(int)) {
  for (auto& c : s)
    c = static_cast<char>(conv(static_cast<unsigned char>(c)));
  return s;
}

/// `{...v}` of JavaScript: objects copy, arrays and strings spread by index,
/// anything else (null, numbers, booleans) gives {}.
json::object spread(const json::value& v) {
  json::object out;
  if (auto* o = v.if_object())
    out = *o;
  else if (auto* a = v.if_array())
    for (size_t i = 0; i < a->size(); ++i)
      out[std::to_string(i)] = (*a)[i];
  else if (auto* s = v.if_string())
    for (size_t i = 0; i < s->size(); ++i) // per code point (JS: per UTF-16 unit)
      if ((static_cast<unsigned char>((*s)[i]) & 0xC0) != 0x80) {
        size_t n = 1;
        while (i + n < s->size() && (static_cast<unsigned char>((*s)[i + n]) & 0xC0) == 0x80)
          ++n;
        out[std::to_string(out.size())] = s->subview(i, n);
      }
  return out;
}

// -- the actions -------------------------------------------------------------------

json::value stream_count(action_context& ctx) {
  auto& in = ctx.input();
  auto n = static_cast<std::int64_t>(num(in.at("n")));
  auto* delay = field(in, "delayMs");
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    ctx.throw_if_cancelled();
    ctx.send_chunk(json::object{{"i", i}});
    sum += static_cast<double>(i);
    if (delay && truthy(*delay))
      ctx.sleep_for(node_timeout(num(*delay)));
    // yieldEvery: JS yields to its event loop; each run has its own thread here.
  }
  return json::object{{"count", js_num(num(in.at("n")))}, {"sum", js_num(sum)}};
}

json::value slow(action_context& ctx) {
  auto t0 = steady_clock::now();
  ctx.sleep_for(node_timeout(num(ctx.input().at("ms"))));
  return json::object{
    {"waitedMs", duration_cast<milliseconds>(steady_clock::now() - t0).count()}};
}

/// {status?, message?}: with a status, what `throw new GenkitError({status,
/// message})` gives; otherwise a plain Error (INTERNAL).
json::value fail(action_context& ctx) {
  auto* status = field(ctx.input(), "status");
  auto* message = field(ctx.input(), "message");
  auto text = [&](const char* fallback) {
    return message && truthy(*message) ? js_string(*message) : std::string{fallback};
  };
  if (status && truthy(*status)) {
    auto name = js_string(*status);
    auto code = wire::status_from_name(name);
    if (!code) // GenkitError's constructor itself throws for an unknown status
      throw action_error(wire::status_code::internal, "Invalid status code " + name);
    throw action_error(*code, name + ": " + text("harness failure with status"));
  }
  throw action_error(wire::status_code::internal, text("boom: harness failure"));
}

json::value create_order(action_context& ctx) {
  auto& order = ctx.input();
  auto& customer = order.at("customer");
  auto& address = customer.at("address");
  auto& items = order.at("items").as_array();
  double total = 0;
  double count = 0;
  for (auto& item : items) {
    total += num(item.at("qty")) * num(item.at("unitPrice"));
    count += num(item.at("qty"));
  }
  double cents = total * 100; // Math.round: nearest, ties towards +infinity
  double rounded = std::floor(cents) + (cents - std::floor(cents) >= 0.5 ? 1 : 0);
  auto* priority = field(order, "priority");
  return json::object{
    {"orderId", "ord-" + ascii_case(js_string(customer.at("name")), ::tolower) + "-"
                  + std::to_string(items.size())},
    {"total", js_num(rounded / 100)},
    {"itemCount", js_num(count)},
    {"priority", priority && !priority->is_null() ? *priority : json::value("normal")},
    {"shipTo", js_string(address.at("city")) + " " + js_string(address.at("zip"))},
  };
}

json::value chat(action_context& ctx) {
  json::array transcript;
  for_each_input(ctx, [&](const json::value& msg) {
    auto text = js_string(msg.at("text"));
    transcript.emplace_back(text);
    ctx.send_chunk(json::object{{"reply", ascii_case(text, ::toupper)},
                                {"turn", static_cast<std::int64_t>(transcript.size())}});
  });
  return json::object{{"turns", static_cast<std::int64_t>(transcript.size())},
                      {"transcript", std::move(transcript)}};
}

json::value bidi_sum(action_context& ctx) {
  double total = 0;
  std::int64_t count = 0;
  for_each_input(ctx, [&](const json::value& x) {
    total += num(x);
    ++count;
    ctx.send_chunk(json::object{{"runningTotal", js_num(total)}});
  });
  return json::object{{"total", js_num(total)}, {"count", count}};
}

} // namespace

void add_demo_actions(action_catalog& catalog) {
  catalog.add({
    .type = "flow",
    .name = "echo",
    .handler = [](action_context& ctx) { return ctx.input(); },
  });
  catalog.add({
    .type = "flow",
    .name = "streamCount",
    .input_schema = object_schema(R"("n":{"type":"integer","minimum":0},)"
                                  R"("delayMs":{"type":"number","minimum":0},)"
                                  R"("yieldEvery":{"type":"integer","minimum":1})",
                                  R"("n")"),
    .output_schema = object_schema(R"("count":{"type":"number"},"sum":{"type":"number"})",
                                   R"("count","sum")"),
    .stream_schema = object_schema(R"("i":{"type":"number"})", R"("i")"),
    .handler = stream_count,
  });
  catalog.add({
    .type = "flow",
    .name = "slow",
    .input_schema = object_schema(R"("ms":{"type":"number","minimum":0})", R"("ms")"),
    .output_schema = object_schema(R"("waitedMs":{"type":"number"})", R"("waitedMs")"),
    .handler = slow,
  });
  catalog.add({.type = "flow", .name = "fail", .handler = fail});

  constexpr auto priority = R"("priority":{"type":"string","enum":["low","normal","high"])";
  catalog.add({
    .type = "flow",
    .name = "createOrder",
    .input_schema = object_schema(
      R"("customer":{"type":"object","properties":{)"
      R"("name":{"type":"string","minLength":1},)"
      R"("email":{"type":"string","format":"email"},)"
      R"("address":{"type":"object","properties":{)"
      R"("street":{"type":"string"},"city":{"type":"string"},)"
      R"("zip":{"type":"string","pattern":"^[0-9]{5}$","description":"5-digit ZIP"}},)"
      R"("required":["street","city","zip"],"additionalProperties":true}},)"
      R"("required":["name","address"],"additionalProperties":true},)"
      R"("items":{"type":"array","items":{"type":"object","properties":{)"
      R"("sku":{"type":"string"},)"
      R"("qty":{"type":"integer","exclusiveMinimum":0},)"
      R"("unitPrice":{"type":"number","minimum":0}},)"
      R"("required":["sku","qty","unitPrice"],"additionalProperties":true},"minItems":1},)"
        + std::string{priority} + R"(,"default":"normal"},)"
        R"("tags":{"type":"array","items":{"type":"string"}},)"
        R"("note":{"type":["string","null"]})",
      R"("customer","items")"),
    .output_schema = object_schema(R"("orderId":{"type":"string"},"total":{"type":"number"},)"
                                   R"("itemCount":{"type":"integer"},)"
                                     + std::string{priority} + R"(},"shipTo":{"type":"string"})",
                                   R"("orderId","total","itemCount","priority","shipTo")"),
    .metadata = R"({"category":"harness","version":2})",
    .handler = create_order,
  });
  catalog.add({
    .type = "flow",
    .name = "whoami",
    .handler =
      [](action_context& ctx) {
        return json::object{{"input", ctx.input()}, {"context", spread(ctx.context())}};
      },
  });
  catalog.add({
    .type = "flow",
    .name = "chat",
    .input_schema = object_schema(R"("text":{"type":"string"})", R"("text")"),
    .output_schema = object_schema(
      R"("turns":{"type":"number"},"transcript":{"type":"array","items":{"type":"string"}})",
      R"("turns","transcript")"),
    .stream_schema = object_schema(R"("reply":{"type":"string"},"turn":{"type":"number"})",
                                   R"("reply","turn")"),
    .handler = chat,
  });
  catalog.add({
    .type = "flow",
    .name = "bidiSum",
    .input_schema = schema(R"("type":"number")"),
    .output_schema = object_schema(R"("total":{"type":"number"},"count":{"type":"number"})",
                                   R"("total","count")"),
    .stream_schema = object_schema(R"("runningTotal":{"type":"number"})", R"("runningTotal")"),
    .metadata = R"({"bidi":true})",
    .handler = bidi_sum,
  });
  catalog.add({
    .type = "tool",
    .name = "add",
    .description = "Adds two numbers.",
    .input_schema = object_schema(R"("a":{"type":"number"},"b":{"type":"number"})", R"("a","b")"),
    .output_schema = schema(R"("type":"number")"),
    .metadata = R"({"type":"tool"})",
    .handler =
      [](action_context& ctx) {
        return js_num(num(ctx.input().at("a")) + num(ctx.input().at("b")));
      },
  });

  catalog.add_value("defaultModel", "defaultModel", R"({"name":"harness/fake-model"})");
  catalog.add_value("middleware", "harnessTag",
                    R"({"name":"harnessTag","description":"Harness middleware (does nothing).",)"
                    R"("configSchema":)" + object_schema(R"("tag":{"type":"string"})")
                      + R"(,"metadata":{"harness":true}})");
}

} // namespace actor_host::actions
