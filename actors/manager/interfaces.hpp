#pragma once

#include "actors/common/messages.hpp"
#include "actors/manager/call_request.hpp"

#include <cstdint>
#include <string>

// The typed protocols of the manager's call path: a message that is not in an
// interface does not compile at the sender.
namespace actor_host {

/// A caller, as the call it started sees it: the run's events, in order,
/// `done` last. (api_session, http_caller; worker_connection for its calls
/// of Genkit actions.)
using caller_actor = caf::typed_actor<
  caf::reacts_to<trace_atom, std::uint64_t, std::string>,
  caf::reacts_to<chunk_atom, std::uint64_t, std::string>,
  caf::reacts_to<done_atom, std::uint64_t, bool, std::string>>;

/// A call in flight, as its caller drives it: bidi input, and giving up.
/// (pending_request; invocation for `/iii/` calls.)
using call_actor = caf::typed_actor<caf::reacts_to<input_atom, std::string>,
                                    caf::reacts_to<end_input_atom>, caf::reacts_to<abort_atom>>;

/// A pending_request: a call_actor that its runtime connection also feeds.
using pending_actor = call_actor::extend<
  caf::reacts_to<run_trace_atom, std::string>, caf::reacts_to<run_chunk_atom, std::string>,
  caf::reacts_to<response_atom, bool, std::string>, caf::reacts_to<conn_lost_atom, std::string>,
  caf::reacts_to<expired_atom>, caf::reacts_to<cancel_atom>>;

/// Where a routed call is handed: a runtime's connection, or an iii
/// worker's for `/iii/` keys. The answer is the call in flight; the caller
/// then gets its events.
using call_target_actor = caf::typed_actor<
  caf::replies_to<call_atom, call_request, caller_actor>::with<call_actor>>;

/// The /api/ws session: a caller fed by its socket.
using api_session_actor = caller_actor::extend<caf::reacts_to<frame_atom, std::string>,
                                               caf::reacts_to<closed_atom, std::string>>;

} // namespace actor_host

// Calls cross actor boundaries only inside one process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::call_request)
