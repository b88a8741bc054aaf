#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <string>

namespace actor_host {

struct trigger_binding_args {
  std::string id;            // the binder's trigger id (a UUID from the SDK or the engine)
  std::string trigger_type;
  std::string function_id;
  std::string config = "null"; // raw JSON
  std::string metadata;        // raw JSON, "" when absent
  net::transport_ptr binder;   // the socket of the worker that bound it; null for
                               // bindings made by engine::register_trigger
  /// engine::register_trigger: the caller waiting for the provider's
  /// `triggerregistrationresult`, gets (done_atom, waiter_tag, ok, raw).
  caf::actor waiter;
  std::uint64_t waiter_tag = 0;
  caf::timespan wait_timeout{std::chrono::seconds(10)};
};

struct trigger_binding_state {
  live_count live{actor_kind::trigger_binding};
  trigger_binding_args args;
  net::transport_ptr provider; // null while parked (type unknown or rejected)
  bool timer = false;          // the waiter's deadline is running
  static inline const char* name = "trigger_binding";
};

/// One binding (`registertrigger` from a worker, or engine::register_trigger),
/// spawned (linked) by the function registry. Parked until its trigger type
/// has a provider; then the provider is sent `registertrigger`, and
/// `unregistertrigger` when the binding ends (binder unbinds or disconnects,
/// engine::unregister_trigger). A provider's rejection parks it again and is
/// forwarded to the binder as `triggerregistrationresult`.
///
/// With a waiter (engine::register_trigger), the first delivery waits up to
/// `wait_timeout` for the provider's answer: success answers `{id}`; an
/// error is the waiter's answer and ends the binding; no answer ends it too
/// (the provider is told `unregistertrigger`) with trigger_registration_failed;
/// a provider that disconnects first leaves it parked and answers `{id}`.
///
/// - (provider_atom, transport): deliver to this provider
/// - (provider_atom, node): delivered to another node's provider (through
///   the function registry and the gateways)
/// - (park_atom): the provider is gone
/// - (bind_answer_atom, error_raw): the provider's answer ("" = success)
/// - (retire_atom): tell the provider, then end
caf::behavior trigger_binding(caf::stateful_actor<trigger_binding_state>* self,
                              trigger_binding_args args);

} // namespace actor_host
