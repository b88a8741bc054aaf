#pragma once

// How the gRPC door names things (docs/GRPC.md), without protobuf: the
// front door's describe maps gRPC symbols back to actions with it.

#include <set>
#include <string>
#include <string_view>

namespace actor_host::grpc_door {

/// `s` as a proto identifier: [A-Za-z0-9_] kept, anything else '_', a
/// leading digit prefixed with '_', "" -> "_".
std::string proto_identifier(std::string_view s);

/// "order_item-x" -> "OrderItemX": a message or enum name for a field.
std::string camel_name(std::string_view s);

/// `base`, or `base_2`, `base_3`, ... whichever is not in `taken`; the
/// result is added to it.
std::string unique_name(const std::string& base, std::set<std::string>& taken);

} // namespace actor_host::grpc_door
