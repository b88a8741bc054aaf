#define CAF_SUITE schema

#include <caf/test/unit_test.hpp>

#include "schema/json_schema.hpp"

#include <boost/json/parse.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using actor_host::schema::json_schema;
using actor_host::schema::json_stringify;
using actor_host::schema::schema_error_message;

namespace {

std::shared_ptr<const json_schema> compile(std::string_view text) {
  auto s = json_schema::compile(text);
  if (!s)
    CAF_FAIL("schema does not compile: " << s.error());
  return *s;
}

/// Why `text` does not compile; "<compiled>" if it does.
std::string compile_error(std::string_view text) {
  auto s = json_schema::compile(text);
  return s ? std::string{"<compiled>"} : s.error();
}

/// The errors for `input` (JSON text); empty if valid.
std::vector<std::string> errors_of(const json_schema& s, std::string_view input,
                                   bool all = false) {
  std::vector<std::string> errors;
  bool ok = s.validate(boost::json::parse(input), errors, all);
  if (ok != errors.empty())
    CAF_FAIL("verdict and errors disagree for " << input);
  return errors;
}

std::string first_error(const json_schema& s, std::string_view input) {
  auto errors = errors_of(s, input);
  return errors.empty() ? std::string{"<valid>"} : errors.front();
}

// /flow/createOrder's input schema, as Genkit lists it.
constexpr std::string_view order_schema
  = R"({"type":"object","properties":{"customer":{"type":"object","properties":{"name":{"type":"string","minLength":1},"email":{"type":"string","format":"email"},"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$","description":"5-digit ZIP"}},"required":["street","city","zip"],"additionalProperties":true}},"required":["name","address"],"additionalProperties":true},"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","exclusiveMinimum":0},"unitPrice":{"type":"number","minimum":0}},"required":["sku","qty","unitPrice"],"additionalProperties":true},"minItems":1},"priority":{"type":"string","enum":["low","normal","high"],"default":"normal"},"tags":{"type":"array","items":{"type":"string"}},"note":{"type":["string","null"]}},"required":["customer","items"],"additionalProperties":true,"$schema":"http://json-schema.org/draft-07/schema#"})";

std::string order(std::string_view customer_extra, std::string_view items,
                  std::string_view extra = {}) {
  return R"({"customer":{"name":"Ada","address":{"street":"1 Main St","city":"Springfield","zip":"12345"})"
         + std::string{customer_extra} + R"(},"items":)" + std::string{items} + std::string{extra}
         + "}";
}

constexpr std::string_view one_item = R"([{"sku":"A-1","qty":2,"unitPrice":3.5}])";

} // namespace

CAF_TEST(compile rejects what is not a schema) {
  CAF_CHECK(compile_error("{nope").starts_with("schema is not valid JSON: "));
  CAF_CHECK_EQUAL(compile_error("42"), "schema must be an object or a boolean");
  auto why = compile_error(R"({"type":"object","minimum":"x"})");
  CAF_CHECK(!why.empty() && why != "<compiled>");
  CAF_CHECK(compile_error(R"({"type":"string","pattern":"(a"})").find("pattern") != std::string::npos);
  CAF_CHECK_EQUAL(compile_error("true"), "<compiled>");
}

CAF_TEST(valid order) {
  auto s = compile(order_schema);
  CAF_CHECK_EQUAL(s->text(), order_schema);
  CAF_CHECK_EQUAL(first_error(*s, order("", one_item)), "<valid>");
  CAF_CHECK_EQUAL(first_error(*s, order(R"(,"email":"ada@example.com")", one_item,
                                        R"(,"priority":"high","tags":["x"],"note":null)")),
                  "<valid>");
  CAF_CHECK_EQUAL(first_error(*s, order("", one_item, R"(,"note":"leave at door")")), "<valid>");
}

CAF_TEST(the first error is the one ajv reports) {
  auto s = compile(order_schema);
  // Genkit's transcript (errors step) for exactly this input.
  CAF_CHECK_EQUAL(first_error(*s, R"({"customer":{"name":""},"items":[]})"),
                  "customer: must have required property 'address'");
  CAF_CHECK_EQUAL(errors_of(*s, R"({"customer":{"name":""},"items":[]})").size(), 1u);
  CAF_CHECK_EQUAL(first_error(*s, R"({"items":[]})"),
                  "(root): must have required property 'customer'");
  auto all = errors_of(*s, R"({"customer":{"name":""},"items":[]})", true);
  CAF_REQUIRE_EQUAL(all.size(), 3u);
  CAF_CHECK_EQUAL(all[0], "customer: must have required property 'address'");
  CAF_CHECK_EQUAL(all[1], "customer.name: must NOT have fewer than 1 characters");
  CAF_CHECK_EQUAL(all[2], "items: must NOT have fewer than 1 items");
}

CAF_TEST(keyword messages) {
  auto s = compile(order_schema);
  CAF_CHECK_EQUAL(first_error(*s, "5"), "(root): must be object");
  CAF_CHECK_EQUAL(first_error(*s, order("", R"([{"sku":"A","qty":0,"unitPrice":1}])")),
                  "items.0.qty: must be > 0");
  CAF_CHECK_EQUAL(first_error(*s, order("", R"([{"sku":"A","qty":1.5,"unitPrice":1}])")),
                  "items.0.qty: must be integer");
  CAF_CHECK_EQUAL(first_error(*s, order("", R"([{"sku":"A","qty":1,"unitPrice":-1}])")),
                  "items.0.unitPrice: must be >= 0");
  CAF_CHECK_EQUAL(first_error(*s, order("", one_item, R"(,"priority":"urgent")")),
                  "priority: must be equal to one of the allowed values");
  CAF_CHECK_EQUAL(first_error(*s, order("", one_item, R"(,"note":5)")),
                  "note: must be string,null");
  CAF_CHECK_EQUAL(first_error(*s, order("", one_item, R"(,"tags":["a",1])")),
                  "tags.1: must be string");
  CAF_CHECK_EQUAL(first_error(*s, order(R"(,"email":"not-an-email")", one_item)),
                  "customer.email: must match format \"email\"");
  auto bad_zip = R"({"customer":{"name":"Ada","address":{"street":"s","city":"c","zip":"1234"}},)"
                 R"("items":[{"sku":"A","qty":1,"unitPrice":1}]})";
  CAF_CHECK_EQUAL(first_error(*s, bad_zip), "customer.address.zip: must match pattern \"^[0-9]{5}$\"");
}

CAF_TEST(integral numbers are integers) {
  auto s = compile(R"({"type":"integer","minimum":1})");
  CAF_CHECK_EQUAL(first_error(*s, "2"), "<valid>");
  CAF_CHECK_EQUAL(first_error(*s, "2.0"), "<valid>");
  CAF_CHECK_EQUAL(first_error(*s, "2.5"), "(root): must be integer");
  CAF_CHECK_EQUAL(first_error(*s, "0"), "(root): must be >= 1");
}

CAF_TEST(combinators and object keywords) {
  auto any = compile(R"({"anyOf":[{"type":"string"},{"type":"number"}]})");
  CAF_CHECK_EQUAL(first_error(*any, R"("x")"), "<valid>");
  CAF_CHECK_EQUAL(first_error(*any, "3"), "<valid>");
  // As ajv: the first failure of each branch, then the anyOf itself.
  auto errors = errors_of(*any, "true");
  CAF_CHECK_EQUAL(errors, (std::vector<std::string>{"(root): must be string", "(root): must be number",
                                                    "(root): must match a schema in anyOf"}));
  auto nullable = compile(R"({"type":"object","properties":{"p":{"anyOf":[{"type":"object",)"
                          R"("properties":{"a":{"type":"string"}},"required":["a"]},{"type":"null"}]}}})");
  CAF_CHECK_EQUAL(first_error(*nullable, R"({"p":null})"), "<valid>");
  CAF_CHECK_EQUAL(errors_of(*nullable, R"({"p":{"a":1}})"),
                  (std::vector<std::string>{"p.a: must be string", "p: must be null",
                                            "p: must match a schema in anyOf"}));
  auto closed = compile(R"({"type":"object","properties":{"a":{}},"additionalProperties":false})");
  CAF_CHECK_EQUAL(first_error(*closed, R"({"a":1})"), "<valid>");
  CAF_CHECK_EQUAL(first_error(*closed, R"({"a":1,"b":2})"),
                  "(root): must NOT have additional properties");
  auto bidi = compile(R"({"type":"number","$schema":"http://json-schema.org/draft-07/schema#"})");
  CAF_CHECK_EQUAL(first_error(*bidi, "1"), "<valid>");
  CAF_CHECK_EQUAL(first_error(*bidi, R"("1")"), "(root): must be number");
  // A format on a non-string is ignored, as ajv does.
  auto email = compile(R"({"format":"email"})");
  CAF_CHECK_EQUAL(first_error(*email, R"({"a":[1]})"), "<valid>");
  CAF_CHECK_EQUAL(first_error(*email, R"("a@b.co")"), "<valid>");
}

CAF_TEST(validate is thread safe) {
  auto s = compile(order_schema);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      auto good = boost::json::parse(order("", one_item));
      auto bad = boost::json::parse(order("", R"([{"sku":"A","qty":0,"unitPrice":1}])"));
      for (int i = 0; i < 200; ++i) {
        std::vector<std::string> errors;
        if (!s->validate(good, errors) || s->validate(bad, errors) || errors.size() != 1)
          ++wrong;
      }
    });
  for (auto& t : threads)
    t.join();
  CAF_CHECK_EQUAL(wrong.load(), 0);
}

CAF_TEST(genkit error message) {
  auto msg = schema_error_message({"(root): must be string", "x: y"}, boost::json::parse("5"),
                                  R"({"type":"string"})");
  CAF_CHECK_EQUAL(msg, "Schema validation failed. Parse Errors:\n\n"
                       "- (root): must be string\n- x: y\n\n"
                       "Provided data:\n\n5\n\n"
                       "Required JSON schema:\n\n{\n  \"type\": \"string\"\n}");
  auto input = boost::json::parse(R"({"customer":{"name":""},"items":[]})");
  msg = schema_error_message({"customer: must have required property 'address'"}, input,
                             order_schema);
  CAF_CHECK(msg.find("Provided data:\n\n{\n  \"customer\": {\n    \"name\": \"\"\n  },\n"
                     "  \"items\": []\n}\n\nRequired JSON schema:\n\n{\n  \"type\": \"object\",")
            != std::string::npos);
  CAF_CHECK(msg.find("\"pattern\": \"^[0-9]{5}$\",") != std::string::npos);
  CAF_CHECK(msg.find("\"exclusiveMinimum\": 0\n") != std::string::npos);
  CAF_CHECK(msg.ends_with(
    "  \"additionalProperties\": true,\n  \"$schema\": \"http://json-schema.org/draft-07/schema#\"\n}"));
}

CAF_TEST(json_stringify writes numbers like javascript) {
  auto str = [](std::string_view text) { return json_stringify(boost::json::parse(text)); };
  CAF_CHECK_EQUAL(str("17.0"), "17");
  CAF_CHECK_EQUAL(str("3.5"), "3.5");
  CAF_CHECK_EQUAL(str("-0.0"), "0");
  CAF_CHECK_EQUAL(str("0.1"), "0.1");
  CAF_CHECK_EQUAL(str("1e21"), "1e+21");
  CAF_CHECK_EQUAL(str("1e20"), "100000000000000000000");
  CAF_CHECK_EQUAL(str("1.5e-7"), "1.5e-7");
  CAF_CHECK_EQUAL(str("0.000001"), "0.000001");
  CAF_CHECK_EQUAL(str("123.456"), "123.456");
  CAF_CHECK_EQUAL(str(R"({"a":[1,"x\n\u0001é"],"b":{}})"), R"({"a":[1,"x\n\u0001é"],"b":{}})");
  CAF_CHECK_EQUAL(json_stringify(boost::json::parse(R"({"a":[1,{}],"b":[]})"), 2),
                  "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
}
