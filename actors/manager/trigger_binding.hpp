#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <string>

namespace actor_host {

struct trigger_binding_args {
  std::string id;            // the binder's trigger id (a UUID from the SDK)
  std::string trigger_type;
  std::string function_id;
  std::string config = "null"; // raw JSON
  std::string metadata;        // raw JSON, "" when absent
  net::transport_ptr binder;   // the socket of the worker that bound it
};

struct trigger_binding_state {
  live_count live{actor_kind::trigger_binding};
  trigger_binding_args args;
  net::transport_ptr provider; // null while parked (type unknown or rejected)
  static inline const char* name = "trigger_binding";
};

/// One `registertrigger` binding, spawned (linked) by the function registry.
/// Parked until its trigger type has a provider; then the provider is sent
/// `registertrigger`, and `unregistertrigger` when the binding ends (binder
/// unbinds or disconnects). A provider's rejection parks it again and is
/// forwarded to the binder as `triggerregistrationresult`.
///
/// - (provider_atom, transport): deliver to this provider
/// - (park_atom): the provider is gone
/// - (bind_result_atom, error_raw): the provider rejected the binding
/// - (unbind_atom): tell the provider, then end
caf::behavior trigger_binding(caf::stateful_actor<trigger_binding_state>* self,
                              trigger_binding_args args);

} // namespace actor_host
