#pragma once

#include "actors/call/call_end.hpp"
#include "wire/status_error.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

/// The errors the manager itself produces for callers, as values
/// (call_end.hpp). Their objects carry a Genkit Status in `data`, like action
/// failures do, so clients handle both alike.
namespace actor_host::manager_errors {

/// One of ours: the Status error object (wire::status_error) and its fields.
call_error make_error(wire::status_code code, std::string_view message,
                      std::initializer_list<wire::status_detail> details = {});

/// An error object that arrived (a runtime's answer, an iii worker's, a
/// peer node's): classified here, once. Its Status is `data.code`, else
/// the meaning of its JSON-RPC code (UNKNOWN when neither says).
call_error error_of(std::string error_object);

/// One of ours without a Status (a malformed request): the JSON-RPC error
/// object with `rpc_code`, its Status and HTTP status by that code.
call_error rpc_error(int rpc_code, std::string_view message);

call_error no_runtimes();
/// No runtime registered under `name` (a `runtimeName` call).
call_error service_not_found(std::string_view name);
/// Every replica of `service` is at its cap on calls in flight and its
/// queue holds `queued` calls already (RESOURCE_EXHAUSTED: HTTP 429).
call_error service_busy(std::string_view service, std::size_t queued);

/// A call that waited in `service`'s queue past its deadline.
call_error queue_timed_out(std::string_view service, std::chrono::milliseconds waited);

call_error runtime_not_found(std::string_view id);
call_error timed_out(std::string_view runtime_id, std::string_view method,
                     std::chrono::milliseconds after);
call_error connection_closed(std::string_view runtime_id, std::string_view method);
/// RESOURCE_EXHAUSTED: the runtime's answer (or a chunk of it) was over the
/// manager's max_frame_bytes; that call fails, the link stays.
call_error answer_too_large(std::string_view runtime_id, std::uint64_t size, std::size_t cap);
/// UNAVAILABLE: the cluster node holding the runtime was lost mid-call.
call_error node_lost(std::string_view runtime_id, std::string_view node, std::string_view method,
                     std::string_view why);
call_error shutting_down();
/// An error the iii engine made itself (function_not_found, forbidden,
/// timeout, ...): the iii error object `{code, message}`, no Status, so
/// UNKNOWN (HTTP 500) at a front door, as error_of() reads such an object.
call_error iii_error(std::string_view code, std::string_view message);
/// The same for a caller that wants Genkit's shape (reply_format::genkit):
/// a JSON-RPC error object with the Status the iii code maps to.
call_error iii_error_as_genkit(std::string_view code, std::string_view message);
call_error invalid_params(std::string_view detail);
call_error internal(std::string_view detail);
/// RESOURCE_EXHAUSTED: a caller over max_calls_per_caller (`caller` says
/// what counts as one, e.g. "connection").
call_error too_many_calls(std::size_t cap, std::string_view caller);
/// RESOURCE_EXHAUSTED: bidi input held for a run not started yet over
/// max_bidi_input_bytes.
call_error bidi_input_overflow(std::size_t cap);

/// An error as the Genkit tools server puts it in `{"error": ...}` for
/// runAction and streamAction: the Status (`data`, else one made from the
/// code and message) with `stack` (its details' stack) and
/// `data.genkitErrorMessage` / `data.genkitErrorDetails` beside it, the
/// shape the Dev UI reads.
std::string tools_error(const call_error& error);

} // namespace actor_host::manager_errors
