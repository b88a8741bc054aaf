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
#include "fuzz/grpc_catalog_fixture.hpp"
#include "grpc_door/detail/json_wire.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <memory>

namespace pb = google::protobuf;
using actor_host::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const actor_host::fuzz::grpc_catalog_fixture f;
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
  if (auto wire = f.cat->json_to_wire(type, json); !wire)
    require(!wire.error().empty(), "a refused answer says why");
  return 0;
}
