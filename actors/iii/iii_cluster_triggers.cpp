#include "actors/iii/iii_cluster_view.hpp"

#include "actors/iii/channel_link.hpp"
#include "actors/iii/function_registry_ops.hpp"
#include "wire/iii_protocol.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

// Trigger bindings across nodes. A binding stays at the node where it was
// made (its binder's, or engine::register_trigger's): when no worker there
// offers its type and another node's does, it is forwarded to that node
// (`bind`), whose registry keeps a copy (origin = the binder's node) and
// hands it to its provider as one of its own; the provider's answer goes
// back (`bind_result`) to the binding, which tells its binder as on one
// node. Unbinding sends `unbind`. When the provider or its node goes away,
// the copy goes with it, the binder's node sees the type leave that node's
// set and offers the binding to the next node that offers the type (or
// parks it until one does), as one node does with a provider that left.
namespace actor_host::iii_cluster {

namespace iii = wire::iii;
using binding = function_registry_state::binding;

namespace {

void send_wire(self_ptr self, const std::string& node, iii_wire w) {
  if (self->state.gateway)
    self->send(self->state.gateway, bind_atom_v, node, std::move(w));
}

iii_wire wire_of(std::uint8_t kind, const std::string& id) {
  iii_wire w;
  w.kind = kind;
  w.id = id;
  return w;
}

void park(binding& b) {
  b.active = false;
  b.remote_node.clear();
  b.remote_provider.clear();
  caf::anon_send(b.actor, park_atom_v);
}

/// Refuses another node's binding: its binder hears it as a rejection.
void refuse(self_ptr self, const std::string& node, const std::string& id, std::string why) {
  auto w = wire_of(iii_wire::bind_result, id);
  w.text = iii::error_object("trigger_registration_failed", std::move(why));
  send_wire(self, node, std::move(w));
}

/// Another node's binding for a type a worker here offers.
void on_bind(self_ptr self, const std::string& node, iii_wire& w) {
  auto& st = self->state;
  auto* t = st.catalog.find_trigger_type(w.type);
  if (!t || t->owner.empty() || !st.workers.count(t->owner)) {
    // Its provider left meanwhile: our next set tells that node, which
    // parks the binding or offers it elsewhere.
    spdlog::info("trigger {} from node {}: trigger type {} is not offered here; dropped", w.id,
                 node, w.type);
    return;
  }
  if (auto i = st.triggers.find(w.id); i != st.triggers.end() && i->second.origin != node)
    return refuse(self, node, w.id, "trigger id " + w.id + " is in use at node " + st.node_name);
  auto from_node = static_cast<std::size_t>(std::count_if(
    st.triggers.begin(), st.triggers.end(), [&](auto& kv) { return kv.second.origin == node; }));
  if (from_node >= max_iii_remote_bindings_per_node && !st.triggers.count(w.id)) {
    spdlog::warn("trigger {} from node {} refused: {} bindings of that node are here", w.id, node,
                 from_node);
    return refuse(self, node, w.id,
                  "too many triggers forwarded to node " + st.node_name + " (at most "
                    + std::to_string(max_iii_remote_bindings_per_node) + " per node)");
  }
  trigger_binding_args a;
  a.id = w.id;
  a.trigger_type = std::move(w.type);
  a.function_id = std::move(w.function_id);
  a.config = std::move(w.config);
  a.metadata = std::move(w.metadata);
  spdlog::info("trigger {} ({} -> {}) forwarded from node {}", a.id, a.trigger_type,
               a.function_id, node);
  auto& b = registry_ops::add_binding(self, {}, std::move(a));
  b.origin = node;
  registry_ops::deliver(self, b);
}

/// The answer of the provider at `node` to a binding made here.
void on_result(self_ptr self, const std::string& node, iii_wire& w) {
  auto& st = self->state;
  auto i = st.triggers.find(w.id);
  if (i == st.triggers.end() || !i->second.origin.empty() || i->second.remote_node != node)
    return;
  if (!w.text.empty())
    i->second.active = false; // parked until the type's provider changes
  caf::anon_send(i->second.actor, bind_answer_atom_v, std::move(w.text));
}

} // namespace

void join(self_ptr self) {
  auto& st = self->state;
  if (!st.gateway)
    return;
  self->send(st.gateway, subscribe_atom_v, caf::actor_cast<caf::actor>(self));
  set_channel_cluster(st.node_name, caf::actor_cast<caf::actor>(st.gateway));
  // The route holds the gateway: it goes with the registry (before the system).
  self->attach_functor([](const caf::error&) { set_channel_cluster({}, {}); });
}

bool offer(self_ptr self, binding& b) {
  auto& st = self->state;
  if (!b.origin.empty() || !st.gateway)
    return false;
  auto provider_at = [&](const std::string& node) -> const registry::trigger_type_entry* {
    auto c = st.node_catalogs.find(node);
    return c == st.node_catalogs.end() ? nullptr : c->second.find_trigger_type(b.trigger_type);
  };
  std::string node;
  const registry::trigger_type_entry* t = nullptr;
  if (!b.remote_node.empty() && (t = provider_at(b.remote_node)))
    node = b.remote_node; // it stays where it is while that node offers the type
  for (auto c = st.node_catalogs.begin(); !t && c != st.node_catalogs.end(); ++c)
    if ((t = c->second.find_trigger_type(b.trigger_type)))
      node = c->first;
  if (!t) {
    if (!b.remote_node.empty()) {
      spdlog::info("trigger {} ({}): its provider at node {} is gone; parked", b.id,
                   b.trigger_type, b.remote_node);
      park(b);
    }
    return false;
  }
  if (node == b.remote_node && t->owner == b.remote_provider)
    return true; // delivered there (or rejected by that provider)
  withdraw(self, b);
  auto w = wire_of(iii_wire::bind, b.id);
  w.type = b.trigger_type;
  w.function_id = b.function_id;
  w.config = b.config;
  w.metadata = b.metadata;
  send_wire(self, node, std::move(w));
  spdlog::info("trigger {} ({} -> {}) forwarded to node {}", b.id, b.trigger_type, b.function_id,
               node);
  b.remote_node = node;
  b.remote_provider = t->owner;
  b.active = true;
  caf::anon_send(b.actor, provider_atom_v, node); // engine::register_trigger's wait starts
  return true;
}

bool offered_elsewhere(const function_registry_state& st, const std::string& type) {
  return std::any_of(st.node_catalogs.begin(), st.node_catalogs.end(),
                     [&](auto& kv) { return kv.second.find_trigger_type(type) != nullptr; });
}

void withdraw(self_ptr self, binding& b) {
  if (b.remote_node.empty())
    return;
  send_wire(self, b.remote_node, wire_of(iii_wire::unbind, b.id));
  b.remote_node.clear();
  b.remote_provider.clear();
}

void reoffer(self_ptr self) {
  auto& st = self->state;
  for (auto& [id, b] : st.triggers)
    if (b.origin.empty() && !st.catalog.find_trigger_type(b.trigger_type))
      offer(self, b);
}

void forward_result(self_ptr self, const binding& b, const std::string& error) {
  if (b.origin.empty())
    return;
  auto w = wire_of(iii_wire::bind_result, b.id);
  w.text = error;
  send_wire(self, b.origin, std::move(w));
}

void drop_bindings_of(self_ptr self, const std::string& node) {
  std::vector<std::string> ids;
  for (auto& [id, b] : self->state.triggers)
    if (b.origin == node)
      ids.push_back(id);
  for (auto& id : ids)
    registry_ops::unbind(self, id);
}

void on_wire(self_ptr self, const std::string& node, iii_wire& w) {
  // A peer's record: checked before anything is kept or sent on.
  if (auto why = wire_problem(w); !why.empty()) {
    spdlog::warn("trigger message from node {} dropped: {}", node, why);
    return;
  }
  switch (w.kind) {
    case iii_wire::bind:
      return on_bind(self, node, w);
    case iii_wire::unbind: {
      auto i = self->state.triggers.find(w.id);
      if (i != self->state.triggers.end() && i->second.origin == node)
        registry_ops::unbind(self, w.id);
      return;
    }
    case iii_wire::bind_result:
      return on_result(self, node, w);
    default:
      return;
  }
}

caf::result<caf::actor, std::uint64_t, std::uint64_t>
on_attach(self_ptr self, std::uint64_t tag, const std::string& id, const std::string& key,
          bool writer, const std::string& node) {
  caf::actor channel;
  std::uint64_t buffer = 0;
  std::uint64_t max_bytes = 0;
  if (!accept_remote_end(caf::actor_cast<caf::actor>(self->state.gateway), tag, id, key, writer,
                         node, channel, buffer, max_bytes))
    return caf::make_error(caf::sec::invalid_argument, "channel not found");
  return {std::move(channel), buffer, max_bytes};
}

} // namespace actor_host::iii_cluster
