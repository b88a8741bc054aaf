#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace google::protobuf {
class Descriptor;
class FieldDescriptor;
} // namespace google::protobuf

namespace actor_host::grpc_door::detail {

/// A request's wire bytes straight to the JSON catalog::to_json writes for
/// the message they parse as, without building the message: the reverse of
/// json_to_wire_fast, paid on every call (parsing a DynamicMessage, printing
/// it and destroying it was ~8 % of the manager's instructions per unary
/// call). For the shapes the catalog generates (string, double, int64, bool,
/// enum, nested and repeated messages, google.protobuf.Value/Struct/
/// ListValue) as a client's library writes them: each field once, in field
/// number order, repeated scalars packed. False on anything else (a field
/// twice or out of order, an unknown field or enum number, another wire
/// type, a Struct key twice, invalid UTF-8, nesting past 100 levels,
/// truncated bytes): `out` is then undefined and the caller parses the
/// message, which also refuses what is malformed. Struct members come in
/// their wire order (protobuf's map has none). `repeated_required` says
/// whether an absent repeated field is written as [] (catalog's rule).
bool wire_to_json_fast(const google::protobuf::Descriptor* type, std::string_view wire,
                       const std::function<bool(const google::protobuf::FieldDescriptor*)>&
                         repeated_required,
                       std::string& out);

} // namespace actor_host::grpc_door::detail
