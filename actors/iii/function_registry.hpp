#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/iii/channel.hpp"
#include "actors/iii/invocation.hpp"
#include "actors/iii/trigger_binding.hpp"
#include "net/transport.hpp"
#include "registry/function_catalog.hpp"
#include "registry/worker_rbac.hpp"

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host {

/// Trigger types the engine provides and fires itself (spec 6, 8.5).
inline constexpr std::string_view workers_available_type = "engine::workers-available";
inline constexpr std::string_view functions_available_type = "engine::functions-available";

/// engine::register_trigger waits this long for the provider's answer.
inline constexpr caf::timespan register_trigger_timeout = std::chrono::seconds(10);
/// Changes of the function set within this window after the first one make
/// one `engine::functions-available` event (the engine v0.22.1 polls every
/// 5 s; its successors coalesce events over 100 ms, as here).
inline constexpr caf::timespan functions_changed_window = std::chrono::milliseconds(100);
/// Deadline of an invocation the engine fires for one of its trigger types.
inline constexpr caf::timespan engine_fire_timeout = std::chrono::minutes(5);

/// Limits and policies the manager hands the registry once, before any
/// worker connects: (iii_options_atom, function_registry_options).
struct function_registry_options {
  /// Calls of `/iii/<function_id>` from the front door (HTTP API, /api/ws,
  /// CLI): with the RBAC listener configured, only what its exposed-function
  /// rules allow an anonymous session (config set, session empty); null =
  /// no RBAC, everything.
  registry::worker_access_ptr front_door;
  channel_limits channels;
};

/// The function registry's protocol (in words at function_registry() below):
/// what the folders below actors/iii/ use of it (iii_catalog_actor), and
/// what its worker connections, the manager and the cluster node send it.
using function_registry_actor = iii_catalog_actor::extend<
  caf::reacts_to<worker_atom, std::string, std::string, worker_connection_actor,
                 net::transport_ptr, std::string, registry::worker_access_ptr>,
  caf::reacts_to<reattach_atom, std::string, std::string, std::string>,
  caf::reacts_to<fn_add_atom, registry::worker_function>,
  caf::reacts_to<fn_remove_atom, std::string, std::string>,
  caf::reacts_to<type_add_atom, registry::trigger_type_entry>,
  caf::reacts_to<bind_atom, std::string, trigger_binding_args>,
  caf::reacts_to<unbind_atom, std::string, std::string>,
  caf::reacts_to<bind_result_atom, std::string, std::string, std::string>,
  caf::reacts_to<invoke_atom, caller_actor, std::uint64_t, invocation_request>,
  caf::reacts_to<done_atom, std::uint64_t, call_end>,
  caf::reacts_to<cluster_atom, caf::actor, caf::actor, std::string>,
  caf::reacts_to<fn_set_atom, std::string, iii_node_set>,
  caf::reacts_to<node_lost_atom, std::string>, caf::reacts_to<flush_atom>,
  caf::reacts_to<iii_options_atom, function_registry_options>,
  // From this node's gateway (iii_cluster_triggers.cpp).
  caf::reacts_to<bind_atom, std::string, iii_wire>,
  caf::replies_to<attach_atom, std::uint64_t, std::string, std::string, bool,
                  std::string>::with<caf::actor, std::uint64_t, std::uint64_t>>;

struct function_registry_state {
  struct worker {
    worker_connection_actor conn;
    net::transport_ptr transport;
    std::string token; // reattach token
    registry::worker_access_ptr access; // null = no RBAC: sees everything
  };
  struct binding {
    caf::actor actor; // trigger_binding
    std::string trigger_type;
    std::string binder; // worker id; "" = engine::register_trigger (belongs to no connection)
    std::string function_id;
    std::string config;   // raw JSON
    std::string metadata; // raw JSON, "" when absent
    bool active = false;  // delivered (provider known and not rejected), or an engine type
    std::string id;       // its trigger id (the key it is kept by)
    // In a cluster (iii_cluster_triggers.cpp): a binding another node
    // forwarded here for a type a worker here offers (that node's name), and
    // for a binding made here, the node (and worker) of the type's provider
    // it was forwarded to; "" = none.
    std::string origin;
    std::string remote_node;
    std::string remote_provider;
  };

  /// Another cluster node's function (actors/cluster/).
  struct remote_function {
    std::string node;
    caf::actor conn; // its worker_connection (a proxy)
    std::string metadata;
  };

  live_count live{actor_kind::function_registry};
  registry::function_catalog catalog;
  /// Other nodes' functions by id; a local function of the same id wins,
  /// between nodes the most recently announced.
  std::unordered_map<std::string, remote_function> remote_functions;
  /// Each other node's functions, workers and trigger types, for the
  /// engine's listings (actors/iii/iii_cluster_view.hpp).
  std::map<std::string, registry::function_catalog> node_catalogs;
  std::string node_name; // this node's, "" outside a cluster
  caf::actor cluster; // cluster_node; null outside a cluster
  gateway_actor gateway; // this node's cluster gateway: invocations of other nodes' functions
  std::unordered_map<std::string, worker> workers;    // by worker id
  std::unordered_map<std::string, binding> triggers;  // by trigger id
  std::string functions_seen = R"({"functions":[]})"; // last functions-available list
  bool flush_due = false; // a functions-available check is scheduled
  std::vector<caf::actor> listeners; // told (changed_atom, "workers"): the dashboard feed
  function_registry_options opts;
  static inline const char* name = "function_registry";

  const std::string* worker_of(const caf::actor_addr& conn) const;
};

/// The iii side of the manager's one catalog: function id -> owning
/// worker_connection, trigger types and their providers, trigger bindings
/// (one trigger_binding actor each), connected workers and their metadata.
/// Routes calls, answers the engine's own functions (`engine::*`), fires
/// the engine's trigger types (`engine::workers-available`,
/// `engine::functions-available`), and cleans up after a connection that
/// goes away (monitored).
///
/// - (worker_atom, worker_id, token, conn, transport, ip, access): a new connection
/// - (reattach_atom, worker_id, previous_id, token): retire a half-open one
/// - (fn_add_atom, worker_function), (fn_remove_atom, worker_id, function_id)
/// - (type_add_atom, trigger_type_entry)
/// - (bind_atom, worker_id, trigger_binding_args), (unbind_atom, worker_id, trigger_id)
/// - (bind_result_atom, worker_id, trigger_id, error_raw): a provider's answer
///   ("" = success)
/// - (invoke_atom, caller, tag, invocation_request): a call; `caller` gets
///   (done_atom, tag, call_end)
///   and gets (done_atom, tag, call_end) (from here, the invocation, or a
///   binding for engine::register_trigger)
/// - In a cluster: (cluster_atom, cluster_node, gateway, node_name) joins it (this
///   node's iii set goes to the cluster node as (local_fns_atom,
///   iii_node_set) on every change); (fn_set_atom, node, iii_node_set) and
///   (node_lost_atom, node) keep the other nodes' functions, which calls
///   reach through this node's gateway (actors/cluster/gateway.hpp), and
///   their workers and trigger types, which the engine's lists show.
///   From this node's gateway (iii_cluster_triggers.cpp): (bind_atom, node,
///   iii_wire) bindings another node forwards here and the answers to the
///   ones forwarded from here; (attach_atom, link tag, channel_id, key,
///   writer, node) -> (channel, buffer, byte cap): a socket at `node` for an
///   end of a channel here (channel_link.hpp).
/// - (route_iii_atom, function_id) -> (conn, id, node), or a call_refusal: front-door
///   routing of `/iii/<function_id>` keys (delegated by the runtime directory)
/// - (list_iii_atom) -> string: the functions as a Genkit listActions
///   result, for the front door (delegated by the runtime directory)
/// - (flush_atom): time to compare the function set (functions-available)
/// - (iii_options_atom, function_registry_options): limits and the front-door policy
/// - (subscribe_atom, listener): the listener gets (changed_atom, "workers")
///   when workers, their functions or triggers change
/// - (snapshot_atom) -> string: `{"workers":[...]}`, each worker with its
///   functions and triggers (those the front door may see), for the dashboard
///
/// A function id or trigger type id owned by another live worker is not
/// taken over: the registration is refused (logged, counted); a reattached
/// connection registers after the one it replaces was cleaned up. Bindings
/// of a worker under RBAC must name a function its session may call.
function_registry_actor::behavior_type
function_registry(function_registry_actor::stateful_pointer<function_registry_state> self);

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::registry::worker_function)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::registry::trigger_type_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::trigger_binding_args)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::registry::worker_access_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::function_registry_options)
