#pragma once

// The other nodes' iii engines as this node's function registry lists them:
// engine::functions::list, engine::workers::list, engine::triggers::list and
// the engine's functions-available / workers-available events answer for the
// whole cluster (docs/CLUSTER.md). Each node sends its whole set (`fnset`,
// iii_node_set) on every change; the registry keeps one catalog per node.

#include "actors/cluster/cluster_types.hpp"
#include "actors/iii/function_registry.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace actor_host::iii_cluster {

using self_ptr = function_registry_actor::stateful_pointer<function_registry_state>;
using visible_fn = std::function<bool(const std::string& id, const std::string* metadata)>;

/// This node's functions (of live workers), workers and trigger types, as
/// the other nodes route to and list them.
iii_node_set local_set(const function_registry_state& st);

/// `node` sent its set (already sanitized by the cluster node): routes and
/// listings follow it; workers that appeared, left or changed their
/// metadata there fire engine::workers-available here, a changed function
/// set engine::functions-available.
void apply_node_set(self_ptr self, const std::string& node, iii_node_set set);

/// `node` is lost or left: its entries go, as when its workers disconnect.
void forget_node(self_ptr self, const std::string& node);

/// `row` (a JSON object) with `"node":<node>` added.
std::string with_node(std::string row, const std::string& node);

/// engine::functions::list rows of the whole cluster by function id, each
/// with its node (outside a cluster: this node's rows as they were). This
/// node's function of an id wins, between nodes the one calls are routed to.
std::map<std::string, std::string> function_rows(self_ptr self, const std::string& params,
                                                 const std::vector<std::string>& engine_ids,
                                                 const visible_fn& visible);

/// `{"functions":[rows]}`.
std::string functions_json(self_ptr self, const std::string& params,
                           const std::vector<std::string>& engine_ids, const visible_fn& visible);

/// `{"workers":[rows]}` of the whole cluster, each with its node.
std::string workers_json(self_ptr self);

/// engine::triggers::list rows (trigger types) of the whole cluster whose id
/// starts with `prefix` and whose id or description contains `search`.
std::map<std::string, std::string> trigger_type_rows(self_ptr self, const std::string& prefix,
                                                     const std::string& search);

/// Another node's function `id` (the one calls go to), with its node's
/// catalog for its worker's name; null when there is none.
const registry::worker_function* remote_function(const function_registry_state& st,
                                                 const std::string& id,
                                                 const registry::function_catalog** catalog,
                                                 std::string* node);

// Bindings and channels across nodes (iii_cluster_triggers.cpp).

/// Joined: this node's gateway brings it other nodes' bindings and channel
/// ends; its channels' ids name this node.
void join(self_ptr self);

/// A binding made here for a type no worker here offers: forwarded to a
/// node that offers it (the one it went to before while that still does),
/// or parked when none does. True when some node offers it.
bool offer(self_ptr self, function_registry_state::binding& b);

/// Whether another node offers trigger type `type`.
bool offered_elsewhere(const function_registry_state& st, const std::string& type);

/// The binding no longer goes to another node's provider (it is unbound,
/// or a worker here offers its type now): that node is told.
void withdraw(self_ptr self, function_registry_state::binding& b);

/// The other nodes' types changed: bindings made here go to a node that
/// offers their type, or are parked.
void reoffer(self_ptr self);

/// The provider here answered another node's binding: that node is told.
void forward_result(self_ptr self, const function_registry_state::binding& b,
                    const std::string& error);

/// `node` is gone: the bindings it forwarded here go (their providers are
/// told `unregistertrigger`).
void drop_bindings_of(self_ptr self, const std::string& node);

/// A binding record from `node` (through this node's gateway).
void on_wire(self_ptr self, const std::string& node, iii_wire& w);

/// A socket at `node` for an end of a channel here: the channel, its
/// buffer size and byte cap.
caf::result<caf::actor, std::uint64_t, std::uint64_t>
on_attach(self_ptr self, std::uint64_t tag, const std::string& id, const std::string& key,
          bool writer, const std::string& node);

} // namespace actor_host::iii_cluster
