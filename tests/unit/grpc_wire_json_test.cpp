#define CAF_SUITE grpc_wire_json

#include <caf/test/unit_test.hpp>

#include "grpc_door/catalog.hpp"

#include <boost/json/parse.hpp>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstring>
#include <string>
#include <vector>

using actor_host::grpc_door::catalog;
using actor_host::grpc_door::catalog_action;
namespace pb = google::protobuf;

namespace {

const char* order_schema = R"({"type":"object","properties":{
  "customer":{"type":"object","properties":{"name":{"type":"string"},
    "address":{"type":"object","properties":{"zip":{"type":"string"}},"required":["zip"]}},
    "required":["name"]},
  "items":{"type":"array","items":{"type":"object","properties":{
    "sku":{"type":"string"},"qty":{"type":"integer"},"unit-price":{"type":"number"}},
    "required":["sku","qty"]}},
  "priority":{"type":"string","enum":["low","normal","high"]},
  "tags":{"type":"array","items":{"type":"string"}},
  "note":{"type":["string","null"]},
  "extra":{"type":"object","additionalProperties":true},
  "grid":{"type":"array","items":{"type":"array","items":{"type":"number"}}},
  "rush":{"type":"boolean"},
  "xs":{"type":"array","items":{"type":"number"}},
  "ns":{"type":"array","items":{"type":"integer"}},
  "level":{"type":"string","enum":["a","b"]},
  "count":{"type":"integer"}},
  "required":["customer","items","grid","level","count"]})";

catalog_action action(std::string key, std::string in) {
  catalog_action a;
  a.key = std::move(key);
  a.name = a.key.substr(a.key.rfind('/') + 1);
  a.input_schema = std::move(in);
  return a;
}

struct fixture {
  std::shared_ptr<const catalog> c = catalog::build(
    {action("/flow/createOrder", order_schema), action("/flow/echo", {})});
  const pb::Descriptor* order = c->find_method("/genkit.flow.Flows/createOrder")->request;
  const pb::Descriptor* value = c->find_method("/genkit.flow.Flows/echo")->request;

  /// The wire bytes protobuf writes for `json` as `type`.
  std::string wire(const pb::Descriptor* type, const std::string& json) {
    auto msg = c->new_message(type);
    if (auto parsed = c->from_json(json, *msg); !parsed)
      CAF_FAIL("does not parse: " << parsed.error());
    std::string out;
    CAF_REQUIRE(msg->SerializeToString(&out));
    return out;
  }

  /// What the message path makes of `bytes` (to_json of the parsed message).
  std::string slow(const pb::Descriptor* type, const std::string& bytes) {
    auto msg = c->new_message(type);
    CAF_REQUIRE(msg->ParseFromString(bytes));
    return c->to_json(*msg);
  }
};

std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

std::string field(int number, int wt, std::string_view payload) {
  auto out = varint((static_cast<std::uint64_t>(number) << 3) | static_cast<unsigned>(wt));
  if (wt == 2)
    out += varint(payload.size());
  out += payload;
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(grpc_wire_json_tests, fixture)

CAF_TEST(requests as clients write them convert as the message path converts them) {
  std::vector<std::pair<const pb::Descriptor*, std::string>> samples{
    {order, R"({"customer":{"name":"Ada","address":{"zip":"1"}},"items":[{"sku":"a","qty":-3,"unit-price":1e300},)"
            R"({"sku":"\u00e9\n\u0001\"\\/","qty":9007199254740993}],"priority":"high","tags":["x",""],"note":null,)"
            R"("extra":{"k":[1,"x",{"z":true,"n":null}],"big":1.5},"grid":[[1,2.5],[]],"rush":false,)"
            R"("xs":[0.1,-2,1e-300],"ns":[-9223372036854775808,0,7],"level":"b","count":-1})"},
    {order, R"({"customer":{"name":""},"items":[],"grid":[],"level":"a","count":0})"},
    {order, R"({})"},
    {value, R"("hi")"},
    {value, R"(null)"},
    {value, R"(true)"},
    {value, R"(-0.5)"},
    {value, R"([1,{"a":null,"b":[[]]},"s",true])"},
    {value, R"({"k":{},"i":3})"},
    {value, R"({"i":1e21})"},
  };
  for (auto& [type, json] : samples) {
    CAF_MESSAGE("sample " << json);
    auto bytes = wire(type, json);
    std::string fast;
    CAF_REQUIRE(c->wire_to_json(type, bytes, fast));
    // Object members may come in another order (a Struct is a map in
    // protobuf): the same JSON value is what counts.
    CAF_CHECK_EQUAL(boost::json::parse(fast), boost::json::parse(slow(type, bytes)));
    if (type == order)
      CAF_CHECK_EQUAL(fast, slow(type, bytes)); // no Struct of two members: the same text
  }
}

CAF_TEST(what a client writes otherwise is left to the message path) {
  std::string out;
  auto number = [](double d) {
    std::string b(8, '\0');
    std::memcpy(b.data(), &d, 8);
    return b;
  };
  auto entry = [&](std::string_view key, double v) {
    return field(1, 2, field(1, 2, key) + field(2, 2, field(2, 1, number(v))));
  };
  auto num = [&](const char* f) { return order->FindFieldByName(f)->number(); };
  auto name = [&](std::string_view s) { // customer.name
    return field(num("customer"), 2, field(1, 2, s));
  };
  std::vector<std::pair<const pb::Descriptor*, std::string>> refused{
    {order, name("a") + name("b")},                          // a singular field twice
    {order, field(num("priority"), 0, varint(2)) + name("a")}, // out of field order
    {order, field(99, 0, varint(1))},                        // an unknown field
    {order, field(num("grid"), 0, varint(5))},               // wire type 0 for a message
    {order, field(num("xs"), 1, number(1)) + field(num("xs"), 1, number(2))}, // unpacked
    {order, field(num("xs"), 2, "")},                        // none packed
    {order, field(num("level"), 0, varint(7))},              // an unknown enum number
    {order, name("\xff")},                                   // invalid UTF-8
    {order, field(num("customer"), 2, "\x0a\x05" "ab")},        // truncated
    {value, field(5, 2, entry("k", 1) + entry("k", 2))},     // a Struct key twice
    {value, field(3, 2, "a") + field(4, 0, varint(1))},      // two kinds of a Value
  };
  for (auto& [type, bytes] : refused) {
    CAF_MESSAGE("refused " << bytes.size() << " bytes");
    CAF_CHECK(!c->wire_to_json(type, bytes, out));
  }
  // A Struct key twice: the message path writes both, the last one last
  // (the one a runtime's JSON.parse keeps).
  auto twice = field(5, 2, entry("k", 1) + entry("k", 2));
  CAF_CHECK_EQUAL(slow(value, twice), R"({"k":1,"k":2})");
  // Nesting past the walk's cap goes to protobuf too.
  std::string deep = field(2, 1, number(1));
  for (int i = 0; i < 40; ++i)
    deep = field(6, 2, field(1, 2, deep)); // [[[...1...]]]
  CAF_CHECK(!c->wire_to_json(value, deep, out));
  CAF_CHECK_EQUAL(slow(value, deep).substr(0, 4), "[[[[");
}

CAF_TEST_FIXTURE_SCOPE_END()
