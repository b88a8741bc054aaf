#pragma once

// Parts of an iii worker's connection shared by its two files: the frame
// handling and behaviors (worker_connection.cpp) and the RBAC gate, i.e.
// authentication, registration hooks and registrations (worker_gate.cpp).
// Internal to those files.

#include "actors/iii/worker_connection.hpp"
#include "wire/iii_protocol.hpp"

#include <string>
#include <string_view>

namespace actor_host::worker_ops {

using self_ptr = worker_connection_actor::stateful_pointer<worker_connection_state>;
using behavior = worker_connection_actor::behavior_type;
using call_kind = worker_connection_state::call_kind;

/// The connection's messages to the function registry go anonymously:
/// where an answer is due the message names its caller.
template <class... Ts>
void tell_registry(self_ptr self, Ts&&... xs) {
  caf::anon_send(self->state.registry, std::forward<Ts>(xs)...);
}

/// "ip" of an "ip:port" peer (IPv6 without brackets).
std::string ip_of(const std::string& peer);

/// Raw JSON of a member, "" when absent or null.
std::string raw_or_empty(const wire::iii::frame& f, std::string_view name);

// --- the gate (worker_gate.cpp) ---

/// With an auth function configured: calls it with the upgrade's headers,
/// query and ip; the connection authenticates until it answers. Otherwise
/// the worker is welcomed at once. Returns the behavior to start with.
behavior open_gate(self_ptr self);

/// Registrations, through the listener's hooks when it has them (the
/// frames behind one then wait for its answer).
void on_register_function(self_ptr self, const wire::iii::frame& f, bool hooked = false);
void on_register_trigger_type(self_ptr self, const wire::iii::frame& f, bool hooked = false);
void on_register_trigger(self_ptr self, const wire::iii::frame& f, bool hooked = false);

/// The answer to an auth or hook call.
void on_gate_answer(self_ptr self, const worker_connection_state::call& c, bool ok,
                    const std::string& raw);

// --- the behaviors (worker_connection.cpp) ---

/// Frames are held (in order, counted against the read window) while an
/// auth call is out.
behavior authenticating(self_ptr self);
/// The same while a registration hook decides.
behavior awaiting_hook(self_ptr self);
/// Frames are handled as they come.
behavior ready(self_ptr self);
/// Switches to `ready` and handles the frames held meanwhile (until one of
/// them sends the connection back to awaiting_hook).
void become_ready(self_ptr self);

} // namespace actor_host::worker_ops
