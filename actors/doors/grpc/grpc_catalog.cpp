#include "actors/doors/grpc/grpc_catalog.hpp"

#include "grpc_door/catalog.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

#include <vector>

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

using self_ptr = grpc_catalog_actor::stateful_pointer<grpc_catalog_state>;

/// The entries of one listActions result ({"actions": {key: entry}}), in
/// the result's order.
void add_actions(const std::string& result, std::vector<grpc_door::catalog_action>& out) {
  auto o = rpc::split_object(result);
  auto* inner = o ? o->find("actions") : nullptr;
  if (!inner)
    return;
  auto actions = rpc::split_object(*inner);
  if (!actions)
    return;
  for (auto& [key, raw] : actions->members) {
    auto entry = rpc::split_object(raw);
    if (!entry)
      continue;
    auto& e = *entry;
    grpc_door::catalog_action a;
    a.key = key;
    if (auto* n = e.find("name"))
      rpc::string_value(*n, a.name);
    if (auto* s = e.find("inputSchema"))
      a.input_schema = *s;
    if (auto* s = e.find("outputSchema"))
      a.output_schema = *s;
    if (auto* s = e.find("streamSchema"))
      a.stream_schema = *s;
    if (auto* m = e.find("metadata"))
      if (auto meta = rpc::split_object(*m))
        if (auto* b = meta->find("bidi"))
          a.bidi = *b == "true";
    out.push_back(std::move(a));
  }
}

void finish_round(self_ptr self) {
  auto& st = self->state;
  std::vector<grpc_door::catalog_action> actions;
  for (auto& [tag, result] : st.answers)
    add_actions(result, actions);
  std::vector<std::string> warnings;
  auto cat = grpc_door::catalog::build(actions, &warnings);
  for (auto& w : warnings)
    spdlog::warn("grpc: {}", w);
  spdlog::debug("grpc: catalog rebuilt, {} methods", cat->methods().size());
  st.publish(std::move(cat));
  st.round = 0;
  st.answers.clear();
  st.asked.clear();
  if (st.again) {
    st.again = false;
    self->send(self, changed_atom_v, std::string{"again"});
  }
}

void ask(self_ptr self, std::string runtime_id) {
  auto& st = self->state;
  auto req = list_actions_call(runtime_id, st.door.policy);
  req.tag = st.next_tag++;
  st.asked.emplace(req.tag, std::move(runtime_id));
  auto tag = req.tag;
  start_call(
    self, st.door, std::move(req), self, [](call_handle) {},
    [self, tag](call_end end) { self->send(self, done_atom_v, tag, std::move(end)); });
}

void start_round(self_ptr self) {
  auto& st = self->state;
  if (st.round != 0) {
    st.again = true;
    return;
  }
  st.round = st.next_tag;
  auto routes = st.door.routes->current();
  // Newest first: the catalog keeps the first schema it sees for a key,
  // and default routing picks the newest runtime.
  for (auto it = routes->entries.rbegin(); it != routes->entries.rend(); ++it)
    ask(self, it->runtime_id);
  for (auto it = routes->remote.rbegin(); it != routes->remote.rend(); ++it)
    ask(self, it->node + "/" + it->runtime_id);
  if (st.door.functions)
    ask(self, std::string{wire::iii::iii_runtime_id});
  if (st.asked.empty())
    finish_round(self);
}

} // namespace

grpc_catalog_actor::behavior_type grpc_catalog(self_ptr self, front_door door,
                                               std::function<void(std::shared_ptr<const grpc_door::catalog>)> publish) {
  auto& st = self->state;
  st.door = std::move(door);
  st.publish = std::move(publish);
  auto me = caf::actor_cast<caf::actor>(self);
  caf::anon_send(st.door.directory, subscribe_atom_v, me);
  if (st.door.functions)
    caf::anon_send(st.door.functions, subscribe_atom_v, me);
  start_round(self);
  return {
    [self](changed_atom, const std::string&) { start_round(self); },
    [](trace_atom, std::uint64_t, const std::string&) {},
    [](chunk_atom, std::uint64_t, const std::string&) {},
    [self](done_atom, std::uint64_t tag, call_end& end) {
      auto& st = self->state;
      auto it = st.asked.find(tag);
      if (it == st.asked.end())
        return; // an earlier round's
      if (!end.ok)
        spdlog::warn("grpc: listing the actions of runtime {} failed; its actions are left out",
                     it->second);
      st.answers.emplace(tag, end.ok ? std::move(end.result) : std::string{});
      st.asked.erase(it);
      if (st.asked.empty())
        finish_round(self);
    },
  };
}

} // namespace actor_host
