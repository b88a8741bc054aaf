#pragma once

#include "wire/status_error.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

/// Error objects the manager itself produces for callers. They carry a Genkit
/// Status in `data`, like action failures do, so clients handle both alike.
namespace actor_host::manager_errors {

using wire::status_error;

std::string no_runtimes();
/// No runtime registered under `name` (a `runtimeName` call).
std::string service_not_found(std::string_view name);
/// Every replica of `service` is at its cap on calls in flight and its
/// queue holds `queued` calls already (RESOURCE_EXHAUSTED: HTTP 429).
std::string service_busy(std::string_view service, std::size_t queued);

/// A call that waited in `service`'s queue past its deadline.
std::string queue_timed_out(std::string_view service, std::chrono::milliseconds waited);

std::string runtime_not_found(std::string_view id);
std::string timed_out(std::string_view runtime_id, std::string_view method,
                      std::chrono::milliseconds after);
std::string connection_closed(std::string_view runtime_id, std::string_view method);
/// RESOURCE_EXHAUSTED: the runtime's answer (or a chunk of it) was over the
/// manager's max_frame_bytes; that call fails, the link stays.
std::string answer_too_large(std::string_view runtime_id, std::uint64_t size, std::size_t cap);
/// UNAVAILABLE: the cluster node holding the runtime was lost mid-call.
std::string node_lost(std::string_view runtime_id, std::string_view node, std::string_view method,
                      std::string_view why);
std::string shutting_down();
std::string invalid_params(std::string_view detail);
std::string internal(std::string_view detail);
/// RESOURCE_EXHAUSTED: a caller over max_calls_per_caller (`caller` says
/// what counts as one, e.g. "connection").
std::string too_many_calls(std::size_t cap, std::string_view caller);
/// RESOURCE_EXHAUSTED: bidi input held for a run not started yet over
/// max_bidi_input_bytes.
std::string bidi_input_overflow(std::size_t cap);

/// The HTTP status for a JSON-RPC error object (Status code first).
int http_status(std::string_view error_object);

/// The Status code an error object stands for: data.code, else one derived
/// from the JSON-RPC code (UNKNOWN when neither says).
int status_code_of(std::string_view error_object);

/// An error object as the Genkit tools server puts it in `{"error": ...}`
/// for runAction and streamAction: the Status (`data`, else one made from
/// the code and message) with `stack` (its details' stack) and
/// `data.genkitErrorMessage` / `data.genkitErrorDetails` beside it, the
/// shape the Dev UI reads.
std::string tools_error(std::string_view error_object);

} // namespace actor_host::manager_errors
