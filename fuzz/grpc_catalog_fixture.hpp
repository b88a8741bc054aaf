#pragma once

// The gRPC door's catalog the gRPC fuzz targets share: two actions with
// nested, repeated, enum, optional and Value fields, their request and
// response types, and a type resolver over its pool.

#include "fuzz/fuzz_support.hpp"
#include "grpc_door/catalog.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <memory>

namespace actor_host::fuzz {

namespace pb = google::protobuf;
using grpc_door::catalog;
using grpc_door::catalog_action;

/// types: the order request, the order response, the count stream
/// response, google.protobuf.Value.
struct grpc_catalog_fixture {
  std::shared_ptr<const catalog> cat;
  std::unique_ptr<pb::util::TypeResolver> resolver;
  const pb::Descriptor* types[4] = {};

  grpc_catalog_fixture() {
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

} // namespace actor_host::fuzz
