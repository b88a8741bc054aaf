#pragma once

#include "actors/call/call_end.hpp"
#include "actors/call/call_request.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace actor_host {

/// What `describe` (GET /api/describe, `describe` on /api/ws) looks up: an
/// action key, or a gRPC method as the gRPC door names it
/// ("genkit.flow.Flows.echo", "genkit.flow.Flows/echo", "iii.Functions.greet").
struct describe_target {
  std::string key;         // "/flow/echo"; empty for a gRPC name
  std::string type;        // gRPC name: the action type ("flow", "iii")
  std::string grpc_method; // gRPC name: the method ("echo")
};

/// None, or an invalid params error (-32602; INVALID_ARGUMENT, HTTP 400):
/// empty, over 1 KiB, not printable ASCII, or neither an action key nor a
/// gRPC method name.
std::optional<call_error> parse_describe_symbol(std::string_view symbol, describe_target& out);

/// The listActions call that has the answer (the iii listing for iii names).
call_request describe_call(const describe_target& t, std::string runtime_id,
                           const call_policy& policy);

/// The action's description from the listActions result `listing`: {key,
/// name, runtimeId?, description?, metadata?, inputSchema?, outputSchema?,
/// streamSchema?}, each schema with its `$ref`s resolved
/// (schema/ref_closure.hpp). Returns none and `out`, or the error: NOT_FOUND
/// (no such action), FAILED_PRECONDITION (a schema whose refs do not
/// resolve, or resolve to too much).
std::optional<call_error> describe_from_listing(const std::string& listing,
                                                const describe_target& t,
                                                const std::string& runtime_id, std::string& out);

} // namespace actor_host
