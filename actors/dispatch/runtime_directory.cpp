#include "actors/dispatch/runtime_directory.hpp"

#include "actors/call/errors.hpp"
#include "actors/dispatch/runtime_directory_listing.hpp"
#include "actors/dispatch/runtime_directory_routes.hpp"
#include "obs/metrics.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace actor_host {

directory_state::entry* directory_state::find(const std::string& id) {
  auto i = by_id.find(id);
  return i == by_id.end() ? nullptr : &*i->second;
}

directory_state::entry& directory_state::add(entry e) {
  ids_of_conn[e.conn.address()].push_back(e.id);
  entries.push_back(std::move(e));
  by_id[entries.back().id] = std::prev(entries.end());
  return entries.back();
}

namespace {

void forget_conn_of(std::unordered_map<caf::actor_addr, std::vector<std::string>>& ids_of_conn,
                    const directory_state::entry& e) {
  auto c = ids_of_conn.find(e.conn.address());
  if (c == ids_of_conn.end())
    return;
  std::erase(c->second, e.id);
  if (c->second.empty())
    ids_of_conn.erase(c);
}

} // namespace

void directory_state::erase(std::list<entry>::iterator i) {
  forget_conn_of(ids_of_conn, *i);
  by_id.erase(i->id);
  entries.erase(i);
}

void directory_state::set_conn(entry& e, const connection_actor& conn) {
  if (e.conn == conn)
    return;
  forget_conn_of(ids_of_conn, e);
  e.conn = conn;
  ids_of_conn[conn.address()].push_back(e.id);
}

namespace {

using self_ptr = directory_self;
using notice = directory_state::notice;

void publish_count(self_ptr self) {
  registered_runtimes.store(static_cast<std::int64_t>(self->state.entries.size()));
}

// Another node's runtime is a replica of the service its RuntimeInfo names
// (checked JSON: the peer node's record was validated on arrival).
std::string service_of(std::string& info, const std::string& id) {
  std::string_view name[1];
  std::string out;
  if (wire::jsonrpc::find_members(info, {"name"}, name) && !name[0].empty()
      && wire::jsonrpc::string_value(name[0], out) && !out.empty())
    return out;
  return id;
}

template <class Pred>
bool erase_remote(self_ptr self, Pred pred) {
  auto n = std::erase_if(self->state.remote, pred);
  if (n > 0)
    routes_changed(self);
  return n > 0;
}

/// WebSocket close code for a runtime whose id another node took while this
/// one was cut off (a private code: 4000-4999; 409 as HTTP's Conflict).
constexpr std::uint16_t close_id_taken = 4409;

/// After a heal (runtime_directory_state::yielding): `id` is listed at
/// another node too, and ours was held while this node was a minority: ours
/// yields, as a holder that does not answer does on one node. Its link closes
/// (our runtime dials its next node, where the id is taken); the close
/// deregisters it as any close does.
void yield_after_heal(self_ptr self, const std::string& id) {
  auto& st = self->state;
  if (st.yielding.empty() || std::chrono::steady_clock::now() >= st.yield_until) {
    st.yielding.clear();
    return;
  }
  if (!st.yielding.erase(id))
    return;
  auto* e = st.find(id);
  // This node's own services (host.yaml, --demo; watched by the supervisor)
  // are not copies of another node's: every node may run its own demo.
  if (!e || st.watchers.count(id))
    return;
  spdlog::warn("Runtime {}: registered here while this node was cut off from the majority, and "
               "listed at another node since; the majority's holder keeps the id, ours yields",
               id);
  obs::global().runtime_takeovers.fetch_add(1, std::memory_order_relaxed);
  self->send(e->conn, stop_atom_v, close_id_taken);
}

// How long the holder of an id has to answer a ping before another
// connection may take the id over.
constexpr auto probe_timeout = std::chrono::seconds(2);

std::string in_use(const std::string& id) {
  return "runtime id '" + id
         + "' is in use by a live connection; a runtime whose link died gets its id back "
           "when it reconnects, another runtime must pick another id";
}

// Adds `reg.id` (or replaces the info and connection of its entry in place).
void add_or_update(self_ptr self, runtime_registration reg, const connection_actor& conn) {
  self->monitor(conn);
  auto& id = reg.id;
  auto& of_id = self->state.limits.service_of_id;
  if (auto i = of_id.find(id); i != of_id.end())
    reg.service = i->second;
  else if (reg.service.empty())
    reg.service = id;
  if (auto* e = self->state.find(id)) {
    spdlog::info("Runtime {} re-registered{}", id,
                 e->conn == conn ? "" : " (the old connection was dead)");
    e->info_json = std::move(reg.info_json);
    self->state.set_conn(*e, conn);
    e->service = std::move(reg.service);
    e->load = std::move(reg.load);
    ensure_service_queue(self, e->service);
    tell_watchers(self, id, notice::kind::ready);
    tell_cluster_up(self, *e);
    routes_changed(self);
    return;
  }
  if (reg.service == id)
    spdlog::info("Runtime {} registered", id);
  else
    spdlog::info("Runtime {} registered, a replica of service {}", id, reg.service);
  auto& added = self->state.add(
    {id, std::move(reg.info_json), conn, std::move(reg.service), std::move(reg.load), {}});
  ensure_service_queue(self, added.service);
  tell_watchers(self, id, notice::kind::ready);
  tell_cluster_up(self, added);
  routes_changed(self);
  publish_count(self);
}

} // namespace

directory_actor::behavior_type runtime_directory(self_ptr self, route_board_ptr board,
                                                 std::chrono::milliseconds failover_hold) {
  self->state.board = std::move(board);
  self->state.failover_hold = failover_hold;
  // Routes to a dead directory's connections would lead nowhere.
  self->attach_functor([b = self->state.board] {
    registered_runtimes.store(0);
    if (b)
      b->publish({});
  });
  // A connection that dies takes its entries with it, unless a newer socket
  // has re-registered the id in the meantime.
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (auto c = st.ids_of_conn.find(dm.source); c != st.ids_of_conn.end()) {
      auto ids = c->second; // erase() takes each from the original
      for (auto& id : ids) {
        auto i = st.by_id.find(id);
        // ids_of_conn follows every change of an entry's conn; the compare
        // costs nothing beside a wrong removal.
        if (i == st.by_id.end() || i->second->conn.compare(dm.source) != 0)
          continue;
        spdlog::info("Runtime {} disconnected ({})", id, caf::to_string(dm.reason));
        st.erase(i->second);
        tell_watchers(self, id, notice::kind::unready);
        tell_cluster_down(self, id);
      }
      st.ids_of_conn.erase(dm.source); // a dead connection holds nothing
      routes_changed(self);
    }
    publish_count(self);
    std::erase_if(self->state.bidi_by_trace, [&](auto& kv) {
      return kv.second.call.actor.address() == dm.source || kv.second.opener == dm.source;
    });
    for (auto& [id, ws] : self->state.watchers)
      std::erase_if(ws, [&](auto& w) { return w.address() == dm.source; });
  });
  // Ids whose holder is being probed: a second claimant meanwhile is refused.
  auto probing = std::make_shared<std::unordered_map<std::string, connection_actor>>();
  return {
    [self, probing](register_atom, runtime_registration& reg, connection_actor& conn)
      -> caf::result<bool, std::string, slot_listener_actor> {
      auto id = reg.id;
      auto* e = self->state.find(id);
      if (!e || e->conn == conn) {
        add_or_update(self, std::move(reg), conn);
        return {true, std::string{}, queue_of(self, self->state.find(id)->service)};
      }
      if (probing->count(id)) {
        obs::global().runtime_register_refused.fetch_add(1, std::memory_order_relaxed);
        return {false, in_use(id), slot_listener_actor{}};
      }
      // Another connection holds the id: it keeps it if its socket answers.
      auto holder = e->conn;
      probing->emplace(id, conn);
      auto rp = self->make_response_promise();
      auto settle = [self, probing, id, reg = std::move(reg), conn, holder,
                     rp](bool holder_alive) mutable {
        probing->erase(id);
        auto* cur = self->state.find(id);
        if (holder_alive || (cur && cur->conn != holder)) {
          obs::global().runtime_register_refused.fetch_add(1, std::memory_order_relaxed);
          rp.deliver(false, in_use(id), slot_listener_actor{});
          return;
        }
        spdlog::warn("Runtime {}: the connection holding the id does not answer a ping; "
                     "handing the id to the new connection",
                     id);
        obs::global().runtime_takeovers.fetch_add(1, std::memory_order_relaxed);
        self->send_exit(holder, caf::exit_reason::user_shutdown);
        add_or_update(self, std::move(reg), conn);
        rp.deliver(true, std::string{}, queue_of(self, self->state.find(id)->service));
      };
      self->request(holder, probe_timeout, probe_atom_v)
        .then([settle](bool alive) mutable { settle(alive); },
              [settle](caf::error&) mutable { settle(false); });
      return rp;
    },
    [self](deregister_atom, const std::string& id, const connection_actor& conn) {
      auto& st = self->state;
      auto i = st.by_id.find(id);
      if (i != st.by_id.end() && i->second->conn == conn) {
        st.erase(i->second);
        tell_watchers(self, id, notice::kind::unready);
        tell_cluster_down(self, id);
        routes_changed(self);
      }
      publish_count(self);
    },
    [self](limits_atom, service_limits& limits) {
      self->state.limits = std::move(limits);
      routes_changed(self);
    },
    [self](services_atom) {
      publish_if_stale(self);
      return services_json(self->state);
    },
    [self](subscribe_atom, caf::actor& listener) {
      self->state.listeners.push_back(std::move(listener));
    },
    [self](list_atom) {
      publish_if_stale(self);
      return runtimes_json(self->state);
    },
    [self](flush_atom) { routes_flush(self); },
    [self](cluster_atom, caf::actor& cluster, caf::actor& gateway, std::string& node_name) {
      auto& st = self->state;
      st.cluster = std::move(cluster);
      st.gateway = std::move(gateway);
      st.node_name = std::move(node_name);
      for (auto& e : st.entries)
        tell_cluster_up(self, e);
      routes_changed(self);
    },
    [self](remote_up_atom, std::string& node, std::string& id, std::string& info,
           connection_actor& conn) {
      auto& rs = self->state.remote;
      std::erase_if(rs, [&](auto& e) { return e.node == node && e.id == id; });
      spdlog::info("Runtime {} on node {} is listed here", id, node);
      auto service = service_of(info, id);
      auto listed = id;
      rs.push_back(
        {std::move(node), std::move(id), std::move(info), std::move(conn), std::move(service)});
      yield_after_heal(self, listed);
      routes_changed(self);
    },
    [self](remote_down_atom, const std::string& node, const std::string& id) {
      if (erase_remote(self, [&](auto& e) { return e.node == node && e.id == id; }))
        spdlog::info("Runtime {} on node {} left", id, node);
    },
    [self](remote_load_atom, const std::string& node, const std::vector<std::string>& ids,
           const std::vector<std::int32_t>& in_flight) {
      // Checked by the cluster node (sizes, the sender); figures apply to
      // the runtimes listed for that node, read by the doors at each call.
      std::unordered_map<std::string_view, std::int32_t> figure;
      figure.reserve(ids.size());
      for (std::size_t i = 0; i < ids.size() && i < in_flight.size(); ++i)
        figure.emplace(ids[i], std::clamp(in_flight[i], 0, 1 << 24));
      for (auto& e : self->state.remote)
        if (e.node == node)
          if (auto i = figure.find(e.id); i != figure.end())
            e.load->reported.store(i->second, std::memory_order_relaxed);
    },
    [self](cluster_atom, std::string& partitioned, caf::timespan yield_window) {
      auto& st = self->state;
      bool healed = !st.partitioned.empty() && partitioned.empty();
      st.partitioned = std::move(partitioned);
      // On a minority side nothing moves here: calls fail at once.
      if (!st.partitioned.empty()) {
        st.moving_ids.clear();
        st.moving_services.clear();
      }
      if (healed) {
        st.yielding.clear();
        for (auto& e : st.entries)
          st.yielding.insert(e.id);
        st.yield_until = std::chrono::steady_clock::now() + yield_window;
        std::vector<std::string> held_elsewhere;
        for (auto& e : st.remote)
          held_elsewhere.push_back(e.id);
        for (auto& id : held_elsewhere)
          yield_after_heal(self, id);
      }
      routes_changed(self);
    },
    [self](node_lost_atom, const std::string& node) {
      auto& st = self->state;
      // Our runtimes given several managers register at another node within
      // moments: calls for them wait that long (failover_hold.hpp).
      if (st.failover_hold.count() > 0 && st.partitioned.empty()) {
        auto until = std::chrono::steady_clock::now() + st.failover_hold;
        for (auto& e : st.remote)
          if (e.node == node) {
            st.moving_ids[e.id] = until;
            st.moving_services[e.service] = until;
          }
      }
      if (erase_remote(self, [&](auto& e) { return e.node == node; }))
        spdlog::info("Runtimes of node {} are no longer listed here", node);
    },
    [self](bidi_open_atom, std::string& trace, call_handle& call) {
      caf::actor_addr opener;
      if (call.own_actor()) {
        // Whether or not the call answers at its end, the entry must go
        // when its actor does.
        self->monitor(call.actor);
      } else if (auto sender = self->current_sender()) {
        // The gateway's call: its caller closes the entry at the call's end,
        // or dies; either way the entry goes.
        opener = sender->address();
        self->monitor(caf::actor_cast<caf::actor>(sender));
      }
      self->state.bidi_by_trace[std::move(trace)] = {std::move(call), std::move(opener)};
    },
    [self](watch_atom, const std::string& id, runtime_watcher_actor& watcher) {
      publish_if_stale(self);
      self->monitor(watcher);
      if (self->state.find(id))
        self->send(watcher, ready_atom_v, id);
      self->state.watchers[id].push_back(std::move(watcher));
    },
    [self](idempotent_atom, const std::string& id, std::vector<std::string>& keys,
           const connection_actor& conn) {
      auto* e = self->state.find(id);
      if (!e || e->conn != conn || e->idempotent == keys)
        return;
      e->idempotent = std::move(keys);
      routes_changed(self);
    },
    [self](drain_atom, const std::string& id) -> caf::result<connection_actor> {
      // A rolling restart takes this replica out of rotation.
      auto* e = self->state.find(id);
      if (!e)
        return caf::make_error(caf::sec::runtime_error, "runtime " + id + " is not registered");
      if (e->load)
        e->load->draining.store(true, std::memory_order_relaxed);
      routes_changed(self);
      return e->conn;
    },
    [self](drain_atom) {
      // Each connection once, in the order of its first registration.
      std::vector<connection_actor> conns;
      std::unordered_set<caf::actor_addr> seen;
      for (auto& e : self->state.entries)
        if (seen.insert(e.conn.address()).second)
          conns.push_back(e.conn);
      return conns;
    },
    [self](bidi_close_atom, const std::string& trace) {
      self->state.bidi_by_trace.erase(trace);
    },
    [self](bidi_find_atom, const std::string& trace) -> caf::result<bool, call_handle> {
      auto& m = self->state.bidi_by_trace;
      if (auto i = m.find(trace); i != m.end())
        return {true, i->second.call};
      return {false, call_handle{}};
    },
  };
}

} // namespace actor_host
