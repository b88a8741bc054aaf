#pragma once

#include "actors/iii/function_registry.hpp"

#include <cstdint>

namespace actor_host {

/// Answers a call of one of the engine's own functions (`engine::*`, one
/// handler each in a table; unknown ids are function_not_found). Runs inside
/// the function registry, which has already applied the caller's RBAC
/// rules; the answer goes to `caller`.
void engine_call(function_registry_actor::stateful_pointer<function_registry_state> self,
                 const caller_actor& caller, std::uint64_t tag, const invocation_request& req);

} // namespace actor_host
