#pragma once

#include <string>
#include <string_view>

namespace google::protobuf {
class Descriptor;
}

namespace actor_host::grpc_door::detail {

/// A runtime's JSON straight to the wire bytes of `type`, for the shapes
/// the catalog generates (string, double, int64, bool, enum, nested and
/// repeated messages, google.protobuf.Value/Struct/ListValue). Means the
/// same as protobuf's JSON converter with unknown fields ignored, at a
/// fraction of its cost (it is paid per response and per stream chunk).
/// False when the JSON holds anything else (another type, a numeric string,
/// an unknown enum name, a duplicate field, nesting past 100 levels, not
/// JSON): `out` is then undefined and the caller asks protobuf's converter,
/// which also words the error.
bool json_to_wire_fast(const google::protobuf::Descriptor* type, std::string_view json,
                       std::string& out);

} // namespace actor_host::grpc_door::detail
