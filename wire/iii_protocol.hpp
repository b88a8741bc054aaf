#pragma once

#include "wire/jsonrpc.hpp"

#include <map>
#include <string>
#include <string_view>

/// The iii worker protocol as iii-sdk 0.22.1 and engine v0.22.1 speak it
/// (spec/WORKER_PROTOCOL.md): one JSON object per text frame, a lowercase
/// `type`, payloads kept as raw JSON text so relayed data is never
/// re-serialised. Wire vocabulary only; who does what is in actors/.
namespace actor_host::wire::iii {

/// One decoded frame: its `type` and its top-level members (raw JSON).
struct frame {
  std::string type;
  jsonrpc::object_members members;

  const std::string* find(std::string_view name) const {
    return members.find(name);
  }
  /// A string member, or "" when absent or not a string.
  std::string text(std::string_view name) const;
};

/// Decodes one frame; the reason when it is not an object with a string
/// `type`.
wire::expected<frame> decode(std::string_view text);

/// Error codes the engine itself puts on `invocationresult` frames.
namespace code {
inline constexpr std::string_view function_not_found = "function_not_found";
inline constexpr std::string_view invocation_stopped = "invocation_stopped";
inline constexpr std::string_view invocation_failed = "invocation_failed";
inline constexpr std::string_view invocation_error = "invocation_error";
inline constexpr std::string_view timeout = "TIMEOUT";
inline constexpr std::string_view forbidden = "FORBIDDEN";
inline constexpr std::string_view not_found = "NOT_FOUND";
inline constexpr std::string_view invalid_arguments = "INVALID_ARGUMENTS";
inline constexpr std::string_view auth_error = "AUTH_ERROR";
inline constexpr std::string_view limit_exceeded = "LIMIT_EXCEEDED";
} // namespace code

/// `{code, message, stacktrace?}`
std::string error_object(std::string_view code, std::string_view message,
                         std::string_view stacktrace = {});

// Engine -> worker frames. Optional raw members are left out when empty.
std::string worker_registered(std::string_view worker_id, std::string_view reattach_token);
std::string invoke_function(std::string_view invocation_id, std::string_view function_id,
                            std::string_view data, std::string_view metadata,
                            std::string_view traceparent, std::string_view baggage);
/// `ok`: `raw` is the result ("" = success without a value); else the error object.
std::string invocation_result(std::string_view invocation_id, std::string_view function_id,
                              bool ok, std::string_view raw, std::string_view traceparent = {},
                              std::string_view baggage = {});
std::string register_trigger(std::string_view id, std::string_view trigger_type,
                             std::string_view function_id, std::string_view config,
                             std::string_view metadata);
std::string unregister_trigger(std::string_view id, std::string_view trigger_type);
std::string trigger_registration_result(std::string_view id, std::string_view trigger_type,
                                        std::string_view function_id, std::string_view error);
/// The frame sent before closing a connection whose authentication failed.
std::string auth_error_frame(std::string_view message);

/// A fresh random (v4) UUID, lower-case.
std::string new_uuid();
bool is_uuid(std::string_view s);

/// Adds `_caller_worker_id` to an object payload (replacing one the caller
/// sent); other payloads are returned unchanged, as the engine does.
std::string with_caller_worker_id(const std::string& data, std::string_view worker_id);

/// The `query_params` of an auth request, `{key: [values...]}`, from the raw
/// upgrade target; values are not URL-decoded (as in the engine).
std::string query_params_json(std::string_view target);

/// `{name: value}` of the upgrade request's headers (names lower-case).
std::string headers_json(const std::map<std::string, std::string>& headers);

/// `*`-glob, anchored at both ends (RBAC filters `match("api::*")`).
bool glob_match(std::string_view pattern, std::string_view text);

// --- Cross-protocol mapping (docs/API.md, "One registry") -----------------

/// Prefix of Genkit actions as iii function ids.
inline constexpr std::string_view genkit_prefix = "genkit::";
/// Prefix of iii functions as Genkit action keys.
inline constexpr std::string_view iii_key_prefix = "/iii/";
/// The runtime id under which the front door lists iii functions
/// (`listActions {runtimeId: "iii"}`, `/api/actions?runtimeId=iii`).
inline constexpr std::string_view iii_runtime_id = "iii";

/// A Genkit action named as an iii function: `runtime_id` empty for the most
/// recently registered runtime.
struct genkit_target {
  std::string runtime_id;
  std::string key;
};

/// `genkit::<runtimeId>::<key>` or `genkit::<key>` (key starting with '/').
/// The reason when `function_id` cannot be parsed, or is not in that
/// namespace (callers check genkit_prefix first).
wire::expected<genkit_target> parse_genkit_function_id(std::string_view function_id);

/// A Genkit runAction result `{result, telemetry}` as an iii result (the
/// `result` member; "" when absent).
std::string genkit_result_to_iii(const std::string& run_result);
/// A JSON-RPC error object (Genkit Status in `data`) as an iii error object.
std::string genkit_error_to_iii(const std::string& error_object);

/// An iii result as a Genkit runAction result with the invocation id as the
/// trace id.
std::string iii_result_to_genkit(const std::string& result, std::string_view trace_id);
/// An iii error object as a JSON-RPC error object carrying a Genkit Status.
std::string iii_error_to_genkit(const std::string& error);
/// The same from the iii error's fields (an error the engine made itself):
/// no JSON is parsed.
std::string iii_error_to_genkit(std::string_view code, std::string_view message,
                                std::string_view stack = {});
/// The Genkit Status code an iii error code maps to (INTERNAL for a
/// function that threw).
int genkit_status_of(std::string_view code);

} // namespace actor_host::wire::iii
