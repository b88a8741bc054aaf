#pragma once

// Private to grpc_door/*.cpp: includes gRPC's headers.

#include "grpc_door/catalog.hpp"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

namespace actor_host::grpc_door::detail {

/// A catalog call's runAction params as the HTTP front door takes them
/// ({key, input, runtimeId?, runtimeName?, context?, timeoutMs?}), built
/// into `params` from the method, the request's JSON (`input`; none for
/// bidi) and the call's metadata and deadline. Not OK (INVALID_ARGUMENT)
/// when the routing or context metadata is malformed.
grpc::Status run_params(grpc::GenericServerContext& ctx, const catalog_method& method,
                        std::string_view input, std::string& params);

} // namespace actor_host::grpc_door::detail
