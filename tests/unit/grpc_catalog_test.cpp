#define CAF_SUITE grpc_catalog

#include <caf/test/unit_test.hpp>

#include "grpc_door/catalog.hpp"
#include "grpc_door/detail/json_wire.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <string>
#include <vector>

using actor_host::grpc_door::catalog;
using actor_host::grpc_door::catalog_action;
using actor_host::grpc_door::method_kind;
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
  "rush":{"type":"boolean"}},
  "required":["customer","items","grid"]})";

catalog_action action(std::string key, std::string in = {}, std::string out = {},
                      std::string stream = {}, bool bidi = false) {
  catalog_action a;
  a.key = std::move(key);
  a.name = a.key.substr(a.key.rfind('/') + 1);
  a.input_schema = std::move(in);
  a.output_schema = std::move(out);
  a.stream_schema = std::move(stream);
  a.bidi = bidi;
  return a;
}

std::shared_ptr<const catalog> build(const std::vector<catalog_action>& actions,
                                     std::vector<std::string>* warnings = nullptr) {
  auto c = catalog::build(actions, warnings);
  CAF_REQUIRE(c != nullptr);
  return c;
}

/// `json` parsed into `type` and printed again.
std::string round_trip(const catalog& c, const pb::Descriptor* type, const std::string& json) {
  auto msg = c.new_message(type);
  if (auto parsed = c.from_json(json, *msg); !parsed)
    CAF_FAIL("does not parse: " << parsed.error());
  return c.to_json(*msg);
}

} // namespace

CAF_TEST(services per action type with methods named after the actions) {
  auto c = build({action("/flow/echo"), action("/tool/add"), action("/iii/math::add"),
                  action("/model/googleai/gemini-2.0")});
  CAF_CHECK_EQUAL(c->service_names(),
                  (std::vector<std::string>{"genkit.flow.Flows", "genkit.model.Models",
                                            "genkit.tool.Tools", "iii.Functions"}));
  auto* echo = c->find_method("/genkit.flow.Flows/echo");
  CAF_REQUIRE(echo != nullptr);
  CAF_CHECK_EQUAL(echo->key, "/flow/echo");
  CAF_CHECK(echo->kind == method_kind::unary);
  CAF_CHECK_EQUAL(echo->request->full_name(), "google.protobuf.Value");
  CAF_CHECK(c->find_method("/iii.Functions/math__add") != nullptr);
  auto* gemini = c->find_method("/genkit.model.Models/googleai_gemini_2_0");
  CAF_REQUIRE(gemini != nullptr);
  CAF_CHECK_EQUAL(gemini->key, "/model/googleai/gemini-2.0");
  CAF_CHECK(c->find_method("/genkit.flow.Flows/nope") == nullptr);
  // Actions without a streamSchema also get a server-streaming twin (not iii functions).
  auto* twin = c->find_method("/genkit.flow.Flows/echo_stream");
  CAF_REQUIRE(twin != nullptr);
  CAF_CHECK(twin->kind == method_kind::server_streaming);
  CAF_CHECK_EQUAL(twin->key, "/flow/echo");
  CAF_CHECK_EQUAL(twin->response->FindFieldByName("chunk")->message_type()->full_name(),
                  "google.protobuf.Value");
  CAF_CHECK(c->find_method("/iii.Functions/math__add_stream") == nullptr);
}

CAF_TEST(a twin never takes an action name) {
  auto c = build({action("/flow/x"), action("/flow/x_stream")});
  CAF_CHECK_EQUAL(c->find_method("/genkit.flow.Flows/x_stream")->key, "/flow/x_stream");
  CAF_CHECK(c->find_method("/genkit.flow.Flows/x_stream")->kind == method_kind::unary);
  CAF_CHECK_EQUAL(c->find_method("/genkit.flow.Flows/x_stream_2")->key, "/flow/x");
  CAF_CHECK_EQUAL(c->find_method("/genkit.flow.Flows/x_stream_stream")->key, "/flow/x_stream");
}

CAF_TEST(name clashes get suffixes in key order whatever the input order) {
  auto a = build({action("/flow/a-b"), action("/flow/a_b"), action("/flow/a.b")});
  auto b = build({action("/flow/a.b"), action("/flow/a_b"), action("/flow/a-b")});
  for (auto& c : {a, b}) {
    // Key order: "/flow/a-b" < "/flow/a.b" < "/flow/a_b".
    CAF_CHECK_EQUAL(c->find_method("/genkit.flow.Flows/a_b")->key, "/flow/a-b");
    CAF_CHECK_EQUAL(c->find_method("/genkit.flow.Flows/a_b_2")->key, "/flow/a.b");
    CAF_CHECK_EQUAL(c->find_method("/genkit.flow.Flows/a_b_3")->key, "/flow/a_b");
  }
}

CAF_TEST(an action offered twice keeps the schemas of the first) {
  auto c = build({action("/flow/x", R"({"type":"object","properties":{"a":{"type":"string"}}})"),
                  action("/flow/x", R"({"type":"object","properties":{"b":{"type":"string"}}})")});
  CAF_CHECK_EQUAL(c->methods().size(), 2u); // the action and its streaming twin
  auto* req = c->find_method("/genkit.flow.Flows/x")->request;
  CAF_CHECK(req->FindFieldByName("a") != nullptr);
  CAF_CHECK(req->FindFieldByName("b") == nullptr);
}

CAF_TEST(object schemas become messages) {
  auto c = build({action("/flow/createOrder", order_schema)});
  auto* req = c->find_method("/genkit.flow.Flows/createOrder")->request;
  CAF_CHECK_EQUAL(req->full_name(), "genkit.flow.CreateOrderRequest");
  auto* customer = req->FindFieldByName("customer");
  CAF_REQUIRE(customer != nullptr);
  CAF_CHECK_EQUAL(customer->message_type()->name(), "Customer");
  CAF_CHECK(!customer->is_repeated());
  auto* zip = customer->message_type()->FindFieldByName("address")->message_type()->FindFieldByName("zip");
  CAF_CHECK_EQUAL(zip->type(), pb::FieldDescriptor::TYPE_STRING);
  CAF_CHECK(!zip->has_presence()); // required: a plain proto3 field
  auto* items = req->FindFieldByName("items");
  CAF_CHECK(items->is_repeated());
  auto* item = items->message_type();
  CAF_CHECK_EQUAL(item->FindFieldByName("qty")->type(), pb::FieldDescriptor::TYPE_INT64);
  auto* price = item->FindFieldByName("unit_price");
  CAF_REQUIRE(price != nullptr);
  CAF_CHECK_EQUAL(price->json_name(), "unit-price");
  CAF_CHECK(price->has_presence()); // optional: proto3 optional
  auto* priority = req->FindFieldByName("priority");
  CAF_REQUIRE(priority->enum_type() != nullptr);
  CAF_CHECK_EQUAL(priority->enum_type()->value(0)->name(), "low");
  CAF_CHECK_EQUAL(req->FindFieldByName("tags")->type(), pb::FieldDescriptor::TYPE_STRING);
  CAF_CHECK_EQUAL(req->FindFieldByName("note")->message_type()->full_name(), "google.protobuf.Value");
  CAF_CHECK_EQUAL(req->FindFieldByName("extra")->message_type()->full_name(), "google.protobuf.Struct");
  CAF_CHECK_EQUAL(req->FindFieldByName("grid")->message_type()->full_name(),
                  "google.protobuf.ListValue");
  CAF_CHECK_EQUAL(req->FindFieldByName("rush")->type(), pb::FieldDescriptor::TYPE_BOOL);
}

CAF_TEST(the runtime gets the JSON the client meant) {
  auto c = build({action("/flow/createOrder", order_schema)});
  auto* req = c->find_method("/genkit.flow.Flows/createOrder")->request;
  // Integers as numbers, enum names, Value and Struct content as plain JSON,
  // unset optional fields and empty optional arrays left out, a required
  // array kept even when empty.
  std::string in = R"({"customer":{"name":"Ada","address":{"zip":"12345"}},)"
                   R"("items":[{"sku":"a","qty":3,"unit-price":1.25}],"priority":"high",)"
                   R"("note":null,"extra":{"k":[1,"x",{"z":true}]},"grid":[]})";
  CAF_CHECK_EQUAL(round_trip(*c, req, in), in);
  std::string small = R"({"customer":{"name":"B","address":{"zip":""}},"items":[],"grid":[[1,2.5]]})";
  CAF_CHECK_EQUAL(round_trip(*c, req, small), small);
  auto echo = build({action("/flow/echo")});
  auto* echo_type = echo->find_method("/genkit.flow.Flows/echo")->request;
  CAF_CHECK_EQUAL(round_trip(*echo, echo_type, R"("hi")"), R"("hi")");
  CAF_CHECK_EQUAL(round_trip(*echo, echo_type, R"([1,{"a":null}])"), R"([1,{"a":null}])");
}

CAF_TEST(the fast JSON path writes what protobufs converter writes) {
  auto c = build({action("/flow/createOrder", order_schema,
                         R"({"type":"object","properties":{"n":{"type":"integer"},
                            "xs":{"type":"array","items":{"type":"number"}},
                            "on":{"type":"array","items":{"type":"boolean"}},
                            "ps":{"type":"array","items":{"type":"string","enum":["a","b"]}}}})"),
                  action("/flow/count", {}, R"({"type":"number"})",
                         R"({"type":"object","properties":{"i":{"type":"number"}},"required":["i"]})")});
  std::unique_ptr<pb::util::TypeResolver> resolver{
    pb::util::NewTypeResolverForDescriptorPool("type.googleapis.com", &c->pool())};
  auto* order = c->find_method("/genkit.flow.Flows/createOrder");
  auto* count = c->find_method("/genkit.flow.Flows/count");
  auto* value = c->pool().FindMessageTypeByName("google.protobuf.Value");
  CAF_REQUIRE(value != nullptr);
  struct sample {
    const pb::Descriptor* type;
    std::string json;
    bool fast; // the fast path takes it (else protobuf's converter does)
  };
  std::vector<sample> samples{
    {order->request,
     R"({"customer":{"name":"Ada","address":{"zip":"1"}},"items":[{"sku":"a","qty":-3,"unit-price":1e300},)"
     R"({"sku":"\u00e9\n","qty":9007199254740993}],"priority":"high","tags":["x",""],"note":null,)"
     R"("extra":{"k":[1,"x",{"z":true,"n":null}],"big":18446744073709551615},"grid":[[1,2.5],[]],"rush":false,"unknown":{"a":[1]}})",
     true},
    {order->request, R"({"customer":{"name":"x"},"items":[],"grid":[],"priority":null})", true},
    {order->request, R"({"unit_price":1,"customer":{"name":"x","name":"y"}})", false}, // duplicate field
    {order->request, R"({"items":[{"qty":"7"}]})", false}, // a numeric string
    {order->request, R"({"items":[{"qty":1.0}]})", false},
    {order->request, R"({"priority":"urgent"})", false}, // unknown enum name
    {order->response, R"({"n":5,"xs":[1,-2.5,3e10],"on":[true,false],"ps":["b","a"]})", true},
    {order->response, R"({"xs":[],"n":-9223372036854775808})", true},
    {count->response, R"({"chunk":{"i":2}})", true},
    {count->response, R"({"output":7.25})", true},
    {count->response, R"({"chunk":{"i":1},"output":2})", false}, // both of a oneof
    {value, R"("hi")", true},
    {value, R"(null)", true},
    {value, R"([1,{"a":null,"b":[[]]},"s",true])", true},
    {value, R"({"k":{}})", true},
    {count->response, R"({"":{"i":2}})", false},     // a field without a name (fuzz finding)
    {value, R"({"note":1,"note":2})", false},         // a map key twice (fuzz finding)
  };
  for (auto& s : samples) {
    CAF_MESSAGE("sample " << s.json);
    std::string fast;
    bool took = actor_host::grpc_door::detail::json_to_wire_fast(s.type, s.json, fast);
    CAF_CHECK_EQUAL(took, s.fast);
    if (!took)
      continue;
    pb::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    std::string slow;
    auto status = pb::util::JsonToBinaryString(
      resolver.get(), "type.googleapis.com/" + s.type->full_name(), s.json, &slow, options);
    CAF_REQUIRE(status.ok());
    auto a = c->new_message(s.type);
    auto b = c->new_message(s.type);
    CAF_REQUIRE(a->ParseFromString(fast));
    CAF_REQUIRE(b->ParseFromString(slow));
    CAF_CHECK(pb::util::MessageDifferencer::Equals(*a, *b));
  }
  // What the fast path leaves still converts, through protobuf's converter.
  auto msg = c->new_message(order->request);
  CAF_CHECK(c->from_json(R"({"items":[{"qty":"7"}]})", *msg));
  CAF_CHECK_EQUAL(c->to_json(*msg), R"({"items":[{"sku":"","qty":7}]})");
  CAF_CHECK(!c->from_json(R"({"items":[{"qty":"seven"}]})", *msg));
}

CAF_TEST(a type mismatch from the runtime is an error) {
  auto c = build({action("/flow/x", {}, R"({"type":"object","properties":{"n":{"type":"integer"}}})")});
  auto msg = c->new_message(c->find_method("/genkit.flow.Flows/x")->response);
  auto refused = c->from_json(R"({"n":"many"})", *msg);
  CAF_CHECK(!refused);
  CAF_CHECK(!refused.error().empty());
  CAF_CHECK(c->from_json(R"({"n":4,"more":"ignored"})", *msg));
  CAF_CHECK_EQUAL(c->to_json(*msg), R"({"n":4})");
}

CAF_TEST(streaming and bidi actions and their chunk or output replies) {
  auto c = build({action("/flow/count", R"({"type":"object","properties":{"n":{"type":"integer"}}})",
                         R"({"type":"number"})",
                         R"({"type":"object","properties":{"i":{"type":"number"}},"required":["i"]})"),
                  action("/flow/sum", R"({"type":"number"})", {}, {}, true)});
  auto* count = c->find_method("/genkit.flow.Flows/count");
  CAF_CHECK(count->kind == method_kind::server_streaming);
  auto* chunk = count->response->FindFieldByName("chunk");
  CAF_REQUIRE(chunk != nullptr && chunk->containing_oneof() != nullptr);
  CAF_CHECK_EQUAL(chunk->message_type()->FindFieldByName("i")->type(),
                  pb::FieldDescriptor::TYPE_DOUBLE);
  CAF_CHECK_EQUAL(count->response->FindFieldByName("output")->type(),
                  pb::FieldDescriptor::TYPE_DOUBLE);
  CAF_CHECK_EQUAL(round_trip(*c, count->response, R"({"chunk":{"i":2}})"), R"({"chunk":{"i":2}})");
  CAF_CHECK_EQUAL(round_trip(*c, count->response, R"({"output":7})"), R"({"output":7})");
  auto* sum = c->find_method("/genkit.flow.Flows/sum");
  CAF_CHECK(sum->kind == method_kind::bidi_streaming);
  CAF_CHECK_EQUAL(sum->request->full_name(), "google.protobuf.Value");
}

CAF_TEST(refs resolve and recursive schemas give recursive messages) {
  auto tree = R"({"type":"object","properties":{"root":{"$ref":"#/definitions/Node"}},
    "definitions":{"Node":{"type":"object","properties":{"name":{"type":"string"},
      "kids":{"type":"array","items":{"$ref":"#/definitions/Node"}}}}}})";
  auto c = build({action("/flow/tree", tree)});
  auto* req = c->find_method("/genkit.flow.Flows/tree")->request;
  auto* node = req->FindFieldByName("root")->message_type();
  CAF_CHECK_EQUAL(node->name(), "Tree_Node");
  CAF_CHECK_EQUAL(node->FindFieldByName("kids")->message_type(), node);
  std::string in = R"({"root":{"name":"a","kids":[{"name":"b"}]}})";
  CAF_CHECK_EQUAL(round_trip(*c, req, in), in);
  // A ref that resolves nowhere, or to itself only, is a Value.
  auto c2 = build({action("/flow/bad", R"({"type":"object","properties":{
    "x":{"$ref":"#/definitions/Missing"},"y":{"$ref":"#/properties/y"},"z":{"$ref":"http://a/b"}}})")});
  auto* bad = c2->find_method("/genkit.flow.Flows/bad")->request;
  for (auto* f : {"x", "y", "z"})
    CAF_CHECK_EQUAL(bad->FindFieldByName(f)->message_type()->full_name(), "google.protobuf.Value");
}

CAF_TEST(hostile schemas are left out with a warning and break nothing else) {
  std::string deep;
  for (int i = 0; i < 100000; ++i)
    deep += R"({"type":"object","properties":{"a":)";
  std::string many = R"({"type":"object","properties":{)";
  for (int i = 0; i < 1500; ++i)
    many += (i ? "," : "") + std::string{"\"p"} + std::to_string(i) + R"(":{"type":"string"})";
  many += "}}";
  std::vector<std::string> warnings;
  auto c = build({action("/flow/deep", deep), action("/flow/many", many),
                  action("/flow/garbage", R"({"type":7,"properties":[1],"required":"x"})"),
                  action("/flow/notjson", "{{{"), action("/flow/ok"), action("/noslash")},
                 &warnings);
  CAF_CHECK(c->find_method("/genkit.flow.Flows/deep") == nullptr);
  CAF_CHECK(c->find_method("/genkit.flow.Flows/many") == nullptr);
  CAF_CHECK(c->find_method("/genkit.flow.Flows/notjson") == nullptr);
  CAF_CHECK(c->find_method("/genkit.flow.Flows/garbage") != nullptr); // garbage keywords: a Value
  CAF_CHECK(c->find_method("/genkit.flow.Flows/ok") != nullptr);
  CAF_CHECK_EQUAL(warnings.size(), 4u);
}

CAF_TEST(enums that cannot be proto enums are strings) {
  auto c = build({action("/flow/e", R"({"type":"object","properties":{
    "a":{"enum":["in-progress","done"]},"b":{"enum":["low","LOW"]},"c":{"enum":["x","y"]},
    "d":{"enum":["x","z"]},"e":{"enum":[1,2]}}})")});
  auto* req = c->find_method("/genkit.flow.Flows/e")->request;
  CAF_CHECK_EQUAL(req->FindFieldByName("a")->type(), pb::FieldDescriptor::TYPE_STRING);
  CAF_CHECK_EQUAL(req->FindFieldByName("b")->type(), pb::FieldDescriptor::TYPE_STRING);
  CAF_CHECK_EQUAL(req->FindFieldByName("c")->type(), pb::FieldDescriptor::TYPE_ENUM);
  // "x" is taken in the message's scope by c's enum.
  CAF_CHECK_EQUAL(req->FindFieldByName("d")->type(), pb::FieldDescriptor::TYPE_STRING);
  CAF_CHECK_EQUAL(req->FindFieldByName("e")->message_type()->full_name(), "google.protobuf.Value");
}
