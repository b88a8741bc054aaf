#define CAF_SUITE demo_actions

#include <caf/test/unit_test.hpp>

#include "actions/demo_actions.hpp"
#include "fake_action_context.hpp"
#include "schema/json_schema.hpp"

#include <boost/json/parse.hpp>

#include <chrono>
#include <future>
#include <optional>
#include <set>
#include <string>

using namespace actor_host::actions;
using actor_host::wire::status_code;
using actor_host::wire::status_from_name;
using actor_host::schema::json_stringify;
using actor_host::schema::schema_error_message;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

// Upper bound for what the test thread waits on, so a bug fails a check
// instead of hanging the suite.
constexpr auto patience = std::chrono::milliseconds{10s};

struct fixture {
  fixture() {
    add_demo_actions(catalog);
  }

  const action_descriptor& action(std::string_view key) {
    auto* a = catalog.find(key);
    if (!a)
      CAF_FAIL("no action " << key);
    return *a;
  }

  /// Runs `key` and returns its result as JSON text.
  std::string run(std::string_view key, fake::run_context& ctx) {
    return json_stringify(action(key).handler(ctx));
  }

  /// Runs `key`, expecting an action_error.
  std::optional<action_error> run_error(std::string_view key, fake::run_context& ctx) {
    try {
      auto result = action(key).handler(ctx);
      CAF_FAIL(key << " returned " << json_stringify(result));
    } catch (const action_error& e) {
      return e;
    }
    return std::nullopt;
  }

  static std::string chunks(const fake::run_context& ctx) {
    return json_stringify(json::array(ctx.chunks.begin(), ctx.chunks.end()));
  }

  action_catalog catalog;
};

json::value parse(std::string_view text) {
  return json::parse(text);
}

// The order the harness scenario sends (manager.mjs ORDER).
constexpr std::string_view order
  = R"({"customer":{"name":"Ada","email":"ada@example.com","address":{"street":"1 Main St","city":"Springfield","zip":"12345"}},"items":[{"sku":"A-1","qty":2,"unitPrice":3.5},{"sku":"B-2","qty":1,"unitPrice":10}],"tags":["x"]})";

} // namespace

CAF_TEST_FIXTURE_SCOPE(demo_actions_tests, fixture)

CAF_TEST(create order validates and computes like the js runtime) {
  auto& a = action("/flow/createOrder");
  CAF_REQUIRE(a.input_validator != nullptr);
  std::vector<std::string> errors;
  CAF_CHECK(a.input_validator->validate(parse(order), errors));
  fake::run_context ctx{parse(order)};
  CAF_CHECK_EQUAL(run("/flow/createOrder", ctx),
                  R"({"orderId":"ord-ada-2","total":17,"itemCount":3,"priority":"normal",)"
                  R"("shipTo":"Springfield 12345"})");
  fake::run_context cents{parse(
    R"({"customer":{"name":"BOB","address":{"street":"s","city":"X","zip":"00001"}},)"
    R"("items":[{"sku":"a","qty":3,"unitPrice":0.1},{"sku":"b","qty":1,"unitPrice":1.005}],"priority":"high"})")};
  CAF_CHECK_EQUAL(run("/flow/createOrder", cents),
                  R"({"orderId":"ord-bob-2","total":1.31,"itemCount":4,"priority":"high",)"
                  R"("shipTo":"X 00001"})");
}

CAF_TEST(create order rejects invalid input naming the missing property) {
  auto& a = action("/flow/createOrder");
  auto input = parse(R"({"customer":{"name":""},"items":[]})");
  std::vector<std::string> errors;
  CAF_CHECK(!a.input_validator->validate(input, errors));
  CAF_REQUIRE_EQUAL(errors.size(), 1u);
  CAF_CHECK_EQUAL(errors[0], "customer: must have required property 'address'");
  auto msg = schema_error_message(errors, input, a.input_schema);
  CAF_CHECK(msg.starts_with("Schema validation failed. Parse Errors:\n\n"
                            "- customer: must have required property 'address'\n\n"
                            "Provided data:\n\n{\n  \"customer\": {\n"));
  errors.clear();
  CAF_CHECK(!a.input_validator->validate(parse(R"({"items":[{"sku":"a","qty":1,"unitPrice":1}]})"),
                                         errors));
  CAF_REQUIRE_EQUAL(errors.size(), 1u);
  CAF_CHECK_EQUAL(errors[0], "(root): must have required property 'customer'");
}

CAF_TEST(stream count sends its chunks in order) {
  fake::run_context ctx{parse(R"({"n":5})")};
  CAF_CHECK_EQUAL(run("/flow/streamCount", ctx), R"({"count":5,"sum":10})");
  CAF_CHECK_EQUAL(chunks(ctx), R"([{"i":0},{"i":1},{"i":2},{"i":3},{"i":4}])");
  fake::run_context slow{parse(R"({"n":3,"delayMs":2})")};
  CAF_CHECK_EQUAL(run("/flow/streamCount", slow), R"({"count":3,"sum":3})");
  CAF_CHECK_EQUAL(slow.chunks.size(), 3u);
  fake::run_context none{parse(R"({"n":0})")};
  CAF_CHECK_EQUAL(run("/flow/streamCount", none), R"({"count":0,"sum":0})");
  CAF_CHECK(none.chunks.empty());
}

CAF_TEST(fail maps status names like genkit) {
  auto check = [&](std::string_view input, status_code code, std::string_view message) {
    fake::run_context ctx{parse(input)};
    auto e = run_error("/flow/fail", ctx);
    CAF_REQUIRE(e.has_value());
    CAF_CHECK_EQUAL(static_cast<int>(e->code()), static_cast<int>(code));
    CAF_CHECK_EQUAL(std::string{e->what()}, message);
  };
  check(R"({"status":"FAILED_PRECONDITION","message":"nope"})", status_code::failed_precondition,
        "FAILED_PRECONDITION: nope");
  check(R"({"status":"NOT_FOUND"})", status_code::not_found,
        "NOT_FOUND: harness failure with status");
  check(R"({"status":"UNAUTHENTICATED","message":"who"})", status_code::unauthenticated,
        "UNAUTHENTICATED: who");
  check(R"({"message":"kaboom"})", status_code::internal, "kaboom");
  check(R"({})", status_code::internal, "boom: harness failure");
  check("null", status_code::internal, "boom: harness failure");
  check(R"({"status":"","message":"m"})", status_code::internal, "m");
  check(R"({"status":"NOPE","message":"m"})", status_code::internal, "Invalid status code NOPE");
  CAF_CHECK(status_from_name("DATA_LOSS") == status_code::data_loss);
  CAF_CHECK(status_from_name("OK") == status_code::ok);
  CAF_CHECK(!status_from_name("data_loss"));
}

CAF_TEST(slow waits and honours cancel) {
  fake::run_context quick{parse(R"({"ms":5})")};
  auto result = action("/flow/slow").handler(quick);
  CAF_CHECK_GREATER_OR_EQUAL(result.at("waitedMs").as_int64(), 5);

  fake::run_context ctx{parse(R"({"ms":20000})")};
  auto t0 = std::chrono::steady_clock::now();
  auto outcome = std::async(std::launch::async, [&] { return run_error("/flow/slow", ctx); });
  // Cancel while the handler waits, not before it starts.
  auto waiting = ctx.wait_until_waiting(patience);
  ctx.trigger_cancel();
  CAF_CHECK(waiting);
  auto e = outcome.get();
  CAF_CHECK_LESS(std::chrono::steady_clock::now() - t0, 5s);
  CAF_REQUIRE(e.has_value());
  CAF_CHECK_EQUAL(static_cast<int>(e->code()), 1);
  CAF_CHECK_EQUAL(std::string{e->what()}, "Action was cancelled");
}

CAF_TEST(chat reads the input stream) {
  fake::run_context ctx;
  ctx.feed({parse(R"({"text":"hi"})"), parse(R"({"text":"how are you"})"),
            parse(R"({"text":"bye"})")});
  CAF_CHECK_EQUAL(run("/flow/chat", ctx),
                  R"({"turns":3,"transcript":["hi","how are you","bye"]})");
  CAF_CHECK_EQUAL(chunks(ctx), R"([{"reply":"HI","turn":1},{"reply":"HOW ARE YOU","turn":2},)"
                               R"({"reply":"BYE","turn":3}])");
  // Without an input stream the input is the only message, as in Genkit.
  fake::run_context single{parse(R"({"text":"yo"})")};
  CAF_CHECK_EQUAL(run("/flow/chat", single), R"({"turns":1,"transcript":["yo"]})");
  CAF_CHECK_EQUAL(chunks(single), R"([{"reply":"YO","turn":1}])");
}

CAF_TEST(chat waiting for input ends when cancelled) {
  fake::run_context ctx;
  auto& in = ctx.feed({parse(R"({"text":"a"})")}, true);
  auto outcome = std::async(std::launch::async, [&] { return run_error("/flow/chat", ctx); });
  // "a" answered, then "b" pushed while the input is open and answered too;
  // cancel once the handler has taken everything and waits for more.
  auto first = ctx.wait_chunks(1, patience);
  in.push(parse(R"({"text":"b"})"));
  auto second = ctx.wait_chunks(2, patience);
  auto starved = in.wait_until_starved(patience);
  ctx.trigger_cancel();
  CAF_CHECK(first);
  CAF_CHECK(second);
  CAF_CHECK(starved);
  auto e = outcome.get();
  CAF_REQUIRE(e.has_value());
  CAF_CHECK_EQUAL(static_cast<int>(e->code()), 1);
  CAF_CHECK_EQUAL(chunks(ctx), R"([{"reply":"A","turn":1},{"reply":"B","turn":2}])");
}

CAF_TEST(bidi sum streams running totals) {
  fake::run_context ctx;
  ctx.feed({json::value(1), json::value(2), json::value(3), json::value(4)});
  CAF_CHECK_EQUAL(run("/flow/bidiSum", ctx), R"({"total":10,"count":4})");
  CAF_CHECK_EQUAL(chunks(ctx), R"([{"runningTotal":1},{"runningTotal":3},{"runningTotal":6},)"
                               R"({"runningTotal":10}])");
  fake::run_context half;
  half.feed({json::value(0.5), json::value(2)});
  CAF_CHECK_EQUAL(run("/flow/bidiSum", half), R"({"total":2.5,"count":2})");
}

CAF_TEST(echo whoami and add) {
  fake::run_context echo{parse(R"({"hello":"world","n":[1,2,3],"nested":{"ok":true,"nil":null}})")};
  CAF_CHECK_EQUAL(run("/flow/echo", echo),
                  R"({"hello":"world","n":[1,2,3],"nested":{"ok":true,"nil":null}})");
  fake::run_context who{json::value("x"), parse(R"({"auth":{"uid":"u1"},"tenant":"t1"})")};
  CAF_CHECK_EQUAL(run("/flow/whoami", who),
                  R"({"input":"x","context":{"auth":{"uid":"u1"},"tenant":"t1"}})");
  fake::run_context nobody;
  CAF_CHECK_EQUAL(run("/flow/whoami", nobody), R"({"input":null,"context":{}})");
  fake::run_context add{parse(R"({"a":2,"b":40})")};
  CAF_CHECK_EQUAL(run("/tool/add", add), "42");
  fake::run_context add_half{parse(R"({"a":0.25,"b":1})")};
  CAF_CHECK_EQUAL(run("/tool/add", add_half), "1.25");
}

CAF_TEST(demo results match their own output schemas) {
  // The runtime fails a run whose result breaks its outputSchema, so every
  // demo action that declares one must keep to it.
  auto check = [&](std::string_view key, fake::run_context& ctx) {
    auto& a = action(key);
    CAF_REQUIRE(a.output_validator != nullptr);
    auto result = a.handler(ctx);
    std::vector<std::string> errors;
    CAF_MESSAGE(key << " -> " << json_stringify(result));
    CAF_CHECK(a.output_validator->validate(result, errors));
    CAF_CHECK_EQUAL(errors.size(), 0u);
  };
  fake::run_context create{parse(order)};
  check("/flow/createOrder", create);
  fake::run_context count{parse(R"({"n":3})")};
  check("/flow/streamCount", count);
  fake::run_context slow{parse(R"({"ms":1})")};
  check("/flow/slow", slow);
  fake::run_context chat;
  chat.feed({parse(R"({"text":"hi"})")});
  check("/flow/chat", chat);
  fake::run_context sum;
  sum.feed({json::value(1), json::value(2.5)});
  check("/flow/bidiSum", sum);
  fake::run_context add{parse(R"({"a":2,"b":40})")};
  check("/tool/add", add);
  // Actions without an outputSchema are not checked.
  CAF_CHECK(action("/flow/echo").output_validator == nullptr);
}

CAF_TEST(list actions describes the harness actions) {
  auto doc = parse(catalog.list_actions_json());
  auto& actions = doc.at("actions").as_object();
  std::set<std::string> keys;
  for (auto& kv : actions)
    keys.insert(std::string{kv.key()});
  CAF_CHECK(keys
            == std::set<std::string>({"/flow/echo", "/flow/streamCount", "/flow/slow", "/flow/fail",
                                      "/flow/createOrder", "/flow/whoami", "/flow/chat",
                                      "/flow/bidiSum", "/tool/add"}));
  for (auto& kv : actions) {
    auto& a = kv.value().as_object();
    CAF_CHECK_EQUAL(a.at("key").as_string(), kv.key());
    // Listed for the streaming actions (Genkit's JS runtime leaves it out;
    // its tools keep it, and the gRPC door makes those server-streaming).
    auto streams = std::set<std::string>{"/flow/streamCount", "/flow/chat", "/flow/bidiSum"};
    CAF_CHECK_EQUAL(a.contains("streamSchema"), streams.count(std::string{kv.key()}) == 1);
    if (auto* s = a.if_contains("inputSchema"))
      CAF_CHECK_EQUAL(s->at("$schema").as_string(), "http://json-schema.org/draft-07/schema#");
  }
  auto& co = actions.at("/flow/createOrder").as_object();
  CAF_CHECK_EQUAL(co.at("name").as_string(), "createOrder");
  CAF_CHECK_EQUAL(co.at("inputSchema").at("type").as_string(), "object");
  CAF_CHECK_EQUAL(co.at("outputSchema").at("type").as_string(), "object");
  CAF_CHECK_EQUAL(json_stringify(co.at("metadata")), R"({"category":"harness","version":2})");
  CAF_CHECK(!co.contains("description"));
  CAF_CHECK_EQUAL(json_stringify(actions.at("/flow/echo")),
                  R"({"key":"/flow/echo","name":"echo"})");
  CAF_CHECK_EQUAL(json_stringify(actions.at("/flow/bidiSum").at("metadata")), R"({"bidi":true})");
  CAF_CHECK_EQUAL(json_stringify(actions.at("/flow/bidiSum").at("inputSchema")),
                  R"({"type":"number","$schema":"http://json-schema.org/draft-07/schema#"})");
  auto& add = actions.at("/tool/add").as_object();
  CAF_CHECK_EQUAL(add.at("description").as_string(), "Adds two numbers.");
  CAF_CHECK_EQUAL(json_stringify(add.at("metadata")), R"({"type":"tool"})");
  CAF_CHECK_EQUAL(json_stringify(add.at("outputSchema")),
                  R"({"type":"number","$schema":"http://json-schema.org/draft-07/schema#"})");
}

CAF_TEST(list values) {
  CAF_CHECK_EQUAL(catalog.list_values_json("defaultModel").value_or(""),
                  R"({"values":{"defaultModel":{"name":"harness/fake-model"}}})");
  auto mw = parse(catalog.list_values_json("middleware").value_or("{}"));
  CAF_CHECK_EQUAL(json_stringify(mw),
                  R"({"values":{"harnessTag":{"name":"harnessTag","description":"Harness middleware (does nothing).",)"
                  R"("configSchema":{"type":"object","properties":{"tag":{"type":"string"}},)"
                  R"("additionalProperties":true,"$schema":"http://json-schema.org/draft-07/schema#"},)"
                  R"("metadata":{"harness":true}}}})");
}

CAF_TEST_FIXTURE_SCOPE_END()
