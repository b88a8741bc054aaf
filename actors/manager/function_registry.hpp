#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/manager/invocation.hpp"
#include "actors/manager/trigger_binding.hpp"
#include "net/transport.hpp"
#include "registry/function_catalog.hpp"

#include <string>
#include <unordered_map>

namespace actor_host {

struct function_registry_state {
  struct worker {
    caf::actor conn;
    net::transport_ptr transport;
    std::string token; // reattach token
  };
  struct binding {
    caf::actor actor; // trigger_binding
    std::string trigger_type;
    std::string binder; // worker id
  };

  live_count live{actor_kind::function_registry};
  registry::function_catalog catalog;
  std::unordered_map<std::string, worker> workers;    // by worker id
  std::unordered_map<std::string, binding> triggers;  // by trigger id
  static inline const char* name = "function_registry";

  const std::string* worker_of(const caf::actor_addr& conn) const;
};

/// The iii side of the manager's one catalog: function id -> owning
/// worker_connection, trigger types and their providers, trigger bindings
/// (one trigger_binding actor each), connected workers and their metadata.
/// Routes calls, answers the engine's own functions (`engine::*`), and
/// cleans up after a connection that goes away (monitored).
///
/// - (worker_atom, worker_id, token, conn, transport, ip): a new connection
/// - (reattach_atom, worker_id, previous_id, token): retire a half-open one
/// - (fn_add_atom, worker_function), (fn_remove_atom, worker_id, function_id)
/// - (type_add_atom, trigger_type_entry)
/// - (bind_atom, worker_id, trigger_binding_args), (unbind_atom, worker_id, trigger_id)
/// - (bind_result_atom, worker_id, trigger_id, error_raw): a provider's answer
/// - (invoke_atom, tag, invocation_request): a call; the sender is the caller
///   and gets (done_atom, tag, ok, raw) (from here or from the invocation)
/// - (route_atom, iii_atom, function_id) -> (ok, conn, error): front-door
///   routing of `/iii/<function_id>` keys (delegated by the runtime directory)
caf::behavior function_registry(caf::stateful_actor<function_registry_state>* self);

/// The `engine::*` functions the registry answers itself.
const std::vector<std::string>& engine_function_ids();

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::registry::worker_function)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::registry::trigger_type_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::trigger_binding_args)
