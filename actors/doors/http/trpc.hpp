#pragma once

#include "actors/call/call_end.hpp"
#include "wire/expected.hpp"

#include <map>
#include <string>
#include <string_view>

namespace actor_host::trpc {

// The Genkit tools server's API is tRPC over HTTP (@genkit-ai/tools-common
// server/router.ts): a query is GET /api/<procedure>?input=<JSON>, its
// answer {"result":{"data":<value>}}; a failure {"error":{"message", "code"
// (tRPC's JSON-RPC code), "data":{"code" (its name), "httpStatus", "path"}}}
// with that HTTP status. These helpers shape our answers that way.

/// {"result":{"data":<data>}}
std::string result(std::string data);

/// tRPC's error for `procedure`, sent with `http_status`.
std::string error(std::string_view message, int http_status, std::string_view procedure);

/// A call's error as tRPC's error for `procedure` (sent with error.http).
std::string error(const call_error& error, std::string_view procedure);

/// A tRPC error for a bad request of `procedure` (400).
std::string bad_request(std::string_view message, std::string_view procedure);

/// The string members of a query's `input` (URL-decoded JSON object) as
/// query parameters (none for ""); an error when `input` is not an object.
wire::expected<std::map<std::string, std::string>> input_as_query(const std::string& input);

} // namespace actor_host::trpc
