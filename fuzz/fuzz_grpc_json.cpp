// A runtime's JSON to the wire bytes of a gRPC response (grpc_door's
// json_to_wire_fast): the runtime is a peer, so its answers are hostile
// input. The first byte picks the message type (a typed request with nested,
// repeated, enum and Value fields; a typed response; a stream response with
// its oneof; google.protobuf.Value), the rest is the JSON.
//
// Oracle: whatever the fast path takes, protobuf's own JSON converter takes
// too, and the two wire forms parse to equal messages; the catalog's full
// path (fast, else the converter) either succeeds or says why.

#include "fuzz/fuzz_support.hpp"
#include "grpc_door/catalog.hpp"
#include "grpc_door/detail/json_wire.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <memory>

namespace pb = google::protobuf;
using actor_host::fuzz::require;
using actor_host::grpc_door::catalog;
using actor_host::grpc_door::catalog_action;

namespace {

struct fixture {
  std::shared_ptr<const catalog> cat;
  std::unique_ptr<pb::util::TypeResolver> resolver;
  const pb::Descriptor* types[4] = {};

  fixture() {
    const char* order = R"({"type":"object","properties":{
      "customer":{"type":"object","properties":{"name":{"type":"string"},
        "address":{"type":"object","properties":{"zip":{"type":"string"}}}},"required":["name"]},
      "items":{"type":"array","items":{"type":"object","properties":{
        "sku":{"type":"string"},"qty":{"type":"integer"},"unit-price":{"type":"number"}}}},
      "priority":{"type":"string","enum":["low","normal","high"]},
      "tags":{"type":"array","items":{"type":"string"}},
      "flags":{"type":"array","items":{"type":"boolean"}},
      "note":{"type":["string","null"]},
      "extra":{"type":"object","additionalProperties":true},
      "grid":{"type":"array","items":{"type":"array","items":{"type":"number"}}},
      "rush":{"type":"boolean"}},"required":["customer","items"]})";
    const char* result = R"({"type":"object","properties":{"n":{"type":"integer"},
      "xs":{"type":"array","items":{"type":"number"}},"ok":{"type":"boolean"},
      "ps":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["n"]})";
    cat = catalog::build(
      {catalog_action{.key = "/flow/order", .name = "order", .input_schema = order,
                      .output_schema = result, .stream_schema = {}, .bidi = false},
       catalog_action{.key = "/flow/count", .name = "count", .input_schema = {},
                      .output_schema = R"({"type":"number"})",
                      .stream_schema = R"({"type":"object","properties":{"i":{"type":"number"}}})",
                      .bidi = false}},
      nullptr);
    require(cat != nullptr, "the fixture catalog builds");
    resolver.reset(pb::util::NewTypeResolverForDescriptorPool("type.googleapis.com", &cat->pool()));
    types[0] = cat->find_method("/genkit.flow.Flows/order")->request;
    types[1] = cat->find_method("/genkit.flow.Flows/order")->response;
    types[2] = cat->find_method("/genkit.flow.Flows/count")->response;
    types[3] = cat->pool().FindMessageTypeByName("google.protobuf.Value");
    for (auto* t : types)
      require(t != nullptr, "the fixture types exist");
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fixture f;
  if (size == 0)
    return 0;
  const auto* type = f.types[data[0] % 4];
  auto json = actor_host::fuzz::text_of(data + 1, size - 1);
  std::string fast;
  bool took = actor_host::grpc_door::detail::json_to_wire_fast(type, json, fast);
  if (took) {
    pb::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    std::string slow;
    auto status = pb::util::JsonToBinaryString(
      f.resolver.get(), "type.googleapis.com/" + type->full_name(), json, &slow, options);
    require(status.ok(), "what the fast path takes protobuf's converter takes",
            std::string{status.message()} + " | " + json);
    auto a = f.cat->new_message(type);
    auto b = f.cat->new_message(type);
    require(a->ParseFromString(fast), "the fast path's bytes parse", json);
    require(b->ParseFromString(slow), "the converter's bytes parse", json);
    require(pb::util::MessageDifferencer::Equals(*a, *b), "both paths mean the same message", json);
  }
  std::string wire, why;
  if (!f.cat->json_to_wire(type, json, wire, why))
    require(!why.empty(), "a refused answer says why");
  return 0;
}
