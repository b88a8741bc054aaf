#pragma once

// The function registry's operations on its own state, shared by the
// registry's behavior (function_registry.cpp) and the engine's functions
// (engine_functions.cpp). Internal to those two files.

#include "actors/iii/function_registry.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace actor_host::registry_ops {

using self_ptr = function_registry_actor::stateful_pointer<function_registry_state>;
using binding = function_registry_state::binding;

/// Answers `caller`'s call (nothing for a void call).
void reply(self_ptr self, const caller_actor& caller, std::uint64_t tag,
           const invocation_request& req, call_end end);

/// The engine's iii errors: function_not_found, invalid_arguments.
call_error not_found(const std::string& function_id);
call_error invalid(const std::string& message);

/// The calling worker's RBAC view (null: no RBAC, or not a worker).
const registry::worker_access* access_of(self_ptr self, const invocation_request& req);

/// The workers as the dashboard shows them (`{"workers":[...]}`): each with
/// the functions the front door may see and the triggers it bound
/// (function_registry_dashboard.cpp).
std::string dashboard_json(self_ptr self);

/// In a cluster, this node's iii set goes to the other nodes (after a
/// change of its functions, workers or trigger types).
void tell_cluster(self_ptr self);

/// The cluster's function set may have changed: the listeners are told,
/// and functions-available compares it after the window.
void check_functions(self_ptr self);

/// Fires `engine::workers-available` for a worker `event`.
void fire_worker_event(self_ptr self, std::string_view event, const std::string& worker_id);

/// May the worker `binder` (under RBAC) have `function_id` called by a
/// trigger? When not, the reason (and a log line and a count).
wire::expected<void> may_bind(self_ptr self, const std::string& binder,
                                  const std::string& function_id);

/// Stores a new binding (its actor spawned, linked); the newest binding of
/// an id wins.
binding& add_binding(self_ptr self, std::string binder, trigger_binding_args args);

/// Hands a binding to its trigger type's provider, if one is connected.
void deliver(self_ptr self, binding& b);

/// Removes a binding and stops its actor; no-op for an unknown id.
void unbind(self_ptr self, const std::string& trigger_id);

} // namespace actor_host::registry_ops
