#pragma once

#include "actors/call/call_end.hpp"
#include "actors/call/call_policy.hpp"
#include "actors/call/stream_sink.hpp"

#include <caf/meta/type_name.hpp>
#include <caf/timespan.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace actor_host {

/// The calls a front door can make of a runtime (or, for `/iii/` keys, of an
/// iii worker): the Reflection V2 methods a manager sends.
enum class call_method : std::uint8_t { run_action, list_actions, list_values, cancel_action };

/// The Reflection V2 method name ("runAction", ...).
std::string_view method_name(call_method m);

/// One call as every front door (HTTP, /api/ws, the CLI through /api/ws, iii
/// callers of `genkit::` functions) hands it on: parsed once, at the door,
/// then routed by route_call() and sent to the owning connection. Nothing
/// downstream parses the caller's request again to find these fields.
struct call_request {
  std::uint64_t tag = 0;  // the caller's correlation id, echoed in every event
  call_method method = call_method::run_action;
  std::string runtime_id; // "" = a replica of runtime_name's service
  std::string runtime_name; // "" = the most recently registered runtime's service
  std::string key;        // runAction: the action key ("/flow/echo", "/iii/greet")
  std::string params;     // the JSON object sent as the method's params ("" = none)
  caf::timespan timeout{0}; // 0 = none
  bool stream = false;        // runAction: the caller wants chunks
  bool stream_input = false;  // runAction: a bidi run (input follows)
  // Counted in its replica's load by the door that routed it (routing.hpp);
  // the connection counts the others when it takes them.
  bool counted = false;
  // A streaming run's events written by this node's connection straight to
  // the caller's socket (stream_sink.hpp); null: they go to the caller as
  // messages. Not inspected: it stays on the node of its door.
  stream_sink_ptr sink;
};

/// A call crosses nodes of a cluster as it is (actors/cluster/gateway.hpp),
/// but for `counted`: the load it counted is the sending node's.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, call_request& x) {
  return f(caf::meta::type_name("call_request"), x.tag, x.method, x.runtime_id, x.runtime_name,
           x.key, x.params, x.timeout, x.stream, x.stream_input);
}

/// The runAction flags a front door decides itself (HTTP: the route and
/// `?bidi`); unset flags are read from the params, where they must be
/// booleans when present.
struct run_flags {
  std::optional<bool> stream;
  std::optional<bool> stream_input;
};

/// Parses a runAction's params (an HTTP body or a JSON-RPC `params`) into
/// `out`: `key` (required), `runtimeId`, `timeoutMs` (default
/// policy.run_timeout), `runtimeName`, `stream` / `streamInput`. The params go to the
/// runtime as the caller wrote them (runtimes ignore keys they do not know)
/// except for flags in `forced`, which replace the caller's. Returns none,
/// or the caller's error (parse error, invalid params).
std::optional<call_error> parse_run_action(std::string params, const call_policy& policy,
                                           run_flags forced, call_request& out);

/// listActions / listValues / cancelAction, with the policy's request timeout;
/// the arguments are checked by the caller's door (they come from a query
/// string or from JSON).
call_request list_actions_call(std::string runtime_id, const call_policy& policy);
call_request list_values_call(std::string runtime_id, std::string_view type,
                              const call_policy& policy);
call_request cancel_action_call(std::string runtime_id, std::string_view trace_id,
                                const call_policy& policy);

/// Largest `timeoutMs` accepted (~24.8 days, as JavaScript's setTimeout).
inline constexpr double max_timeout_ms = 2147483647.0;

/// Reads an optional `timeoutMs` from raw params; `fallback` when absent.
/// Returns false for a value that is not a number from 0 to max_timeout_ms.
bool read_timeout(const std::string* raw_timeout_ms, caf::timespan fallback, caf::timespan& out);

} // namespace actor_host
