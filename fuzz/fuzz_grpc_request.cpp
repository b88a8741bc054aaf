// A gRPC client's request message as the door reads it: the wire bytes of
// one length-delimited message (gRPC's framing hands the door exactly that)
// parsed as the method's request type, then turned into the JSON the
// runtime gets (catalog::to_json). The client is a peer: any bytes. The
// first byte picks the type (the typed request with nested, repeated, enum
// and Value fields; google.protobuf.Value, a bidi method's input), the rest
// is the message.
//
// Oracle: what parses becomes one valid JSON value that the catalog takes
// back as the same type (or refuses with a reason); nothing crashes or
// reads past the bytes. The door's fast path (catalog::wire_to_json) takes
// nothing protobuf refuses, and what it takes means the same message.

#include "fuzz/fuzz_support.hpp"
#include "fuzz/grpc_catalog_fixture.hpp"
#include "wire/jsonrpc.hpp"

#include <google/protobuf/message.h>
#include <google/protobuf/util/message_differencer.h>

#include <vector>

using actor_host::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const actor_host::fuzz::grpc_catalog_fixture f;
  if (size == 0)
    return 0;
  const auto* type = data[0] % 2 == 0 ? f.types[0] : f.types[3];
  // A copy of exactly the message's bytes: a read past them is ASan's.
  std::vector<std::uint8_t> bytes(data + 1, data + size);
  std::string fast;
  bool took = f.cat->wire_to_json(
    type, {reinterpret_cast<const char*>(bytes.data()), bytes.size()}, fast);
  auto msg = f.cat->new_message(type);
  if (!msg->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    require(!took, "the fast path takes nothing protobuf refuses", fast);
    return 0; // the door answers INVALID_ARGUMENT
  }
  auto json = f.cat->to_json(*msg);
  std::string why;
  require(actor_host::wire::jsonrpc::validate(json, &why), "a request becomes valid JSON",
          why + " | " + json);
  auto wire = f.cat->json_to_wire(type, json);
  if (!wire)
    require(!wire.error().empty(), "a refused conversion says why");
  if (!took)
    return 0;
  require(actor_host::wire::jsonrpc::validate(fast, &why), "the fast path writes valid JSON",
          why + " | " + fast);
  // The same message, whatever the order of a Struct's members.
  auto fast_wire = f.cat->json_to_wire(type, fast);
  require(bool(fast_wire) == bool(wire), "the fast path's JSON converts as the message's",
          fast + " | " + json);
  if (wire && fast_wire) {
    auto a = f.cat->new_message(type);
    auto b = f.cat->new_message(type);
    require(a->ParseFromString(*wire) && b->ParseFromString(*fast_wire)
              && google::protobuf::util::MessageDifferencer::Equals(*a, *b),
            "the fast path's JSON means the message's", fast + " | " + json);
  }
  return 0;
}
