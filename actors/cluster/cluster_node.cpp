#include "actors/cluster/cluster_node.hpp"

#include "actors/cluster/cluster_node_state.hpp"
#include "actors/cluster/seed_resolver.hpp"
#include "actors/cluster/tls_port_sweep.hpp"

#include "actors/call/interfaces.hpp"
#include "obs/metrics.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace actor_host {

namespace cluster_detail {

namespace rpc = wire::jsonrpc;


/// Keep-majority (as Akka's split-brain resolver): a node that reaches half
/// or fewer of the nodes it knows (itself included; nodes that left do not
/// count, nodes unreachable or down do) is on a minority side: it reports
/// not ready and fails calls for runtimes it cannot reach at once, while the
/// majority serves. An even split keeps the side with the lowest node name.
/// Below three nodes there is no majority to keep: every side serves.
std::string minority_problem(const cluster_state& st) {
  std::size_t known = 1;
  std::size_t reachable = 1;
  const std::string* lowest = &st.self_card.name;
  bool lowest_reachable = true;
  for (auto& [name, m] : st.members) {
    if (m.state == member::status::down && m.left_incarnation == m.card.incarnation)
      continue;
    ++known;
    bool up = m.state == member::status::up;
    reachable += up ? 1 : 0;
    if (name < *lowest) {
      lowest = &name;
      lowest_reachable = up;
    }
  }
  if (known < 3 || reachable * 2 > known || (reachable * 2 == known && lowest_reachable))
    return {};
  return "this node reaches " + std::to_string(reachable) + " of the " + std::to_string(known)
         + " nodes of its cluster (a minority; keep-majority)";
}

/// Tells the directory, the log and the metrics when the side changes.
void follow_majority(self_ptr self) {
  auto& st = self->state;
  auto problem = minority_problem(st);
  if (problem == st.partitioned)
    return;
  auto& g = obs::global();
  g.cluster_minority_changes.fetch_add(1, std::memory_order_relaxed);
  g.cluster_minority.store(problem.empty() ? 0 : 1);
  if (problem.empty())
    spdlog::warn("cluster: a majority of the nodes is reachable again; serving the whole cluster");
  else
    spdlog::warn("cluster: {}: not ready, calls for runtimes on the other side fail at once",
                 problem);
  st.partitioned = problem;
  // Healed: for as long as the other nodes may take to be admitted again
  // (each dial's backoff is at most 5 s), an id also held on the other side
  // stays with it (runtime_directory).
  caf::timespan yield_window = 2 * st.opts.handshake_timeout + std::chrono::seconds(5);
  self->send(st.directory, cluster_atom_v, problem, yield_window);
}

void publish_view(self_ptr self) {
  auto& st = self->state;
  std::int64_t up = 0, unreachable = 0, down = 0;
  std::string nodes;
  auto add = [&](const member_card& c, const char* status, std::size_t runtimes,
                 std::uint64_t workers) {
    if (!nodes.empty())
      nodes += ',';
    nodes += R"({"name":)" + rpc::quote(c.name) + R"(,"address":)" + rpc::quote(c.address)
             + R"(,"status":")" + status + R"(","runtimes":)" + std::to_string(runtimes)
             + R"(,"workers":)" + std::to_string(workers) + R"(,"incarnation":")"
             + std::to_string(c.incarnation) + "\"}";
  };
  add(st.self_card, "up", st.local.size(), st.opts.worker_count ? st.opts.worker_count() : 0);
  follow_majority(self);
  cluster_view v;
  for (auto& [name, m] : st.members) {
    add(m.card, status_name(m.state), m.runtimes.size(), m.workers);
    if (m.state == member::status::up && !m.card.reflection_url.empty())
      v.peer_reflection_urls.push_back(m.card.reflection_url);
    (m.state == member::status::up ? up : m.state == member::status::down ? down : unreachable)++;
  }
  auto& g = obs::global();
  g.cluster_nodes_up.store(up);
  g.cluster_nodes_unreachable.store(unreachable);
  g.cluster_nodes_down.store(down);
  v.json = R"({"self":)" + rpc::quote(st.self_card.name) + R"(,"nodes":[)" + nodes + "]}";
  if (!st.refusal.empty())
    v.not_ready = "cluster: " + st.refusal;
  else if (!st.partitioned.empty())
    v.not_ready = "cluster: " + st.partitioned;
  else if (!st.joined && !st.opts.seeds.empty()
           && clock_type::now() - st.started < st.opts.join_grace)
    v.not_ready = "cluster: joining through the seeds";
  st.board->publish(std::move(v));
}

std::vector<runtime_record> local_records(self_ptr self) {
  std::vector<runtime_record> out;
  out.reserve(self->state.local.size());
  for (auto& [id, r] : self->state.local)
    out.push_back(r);
  return out;
}

void remote_up(self_ptr self, member& m, runtime_record& r) {
  if (auto why = record_problem(r); !why.empty()) {
    spdlog::warn("node {}: runtime record dropped: {}", m.card.name, why);
    return;
  }
  if (m.runtimes.size() >= max_records_per_node && !m.runtimes.count(r.id)) {
    spdlog::warn("node {}: more than {} runtimes; record dropped", m.card.name,
                 max_records_per_node);
    return;
  }
  m.runtimes.insert(r.id);
  self->send(self->state.directory, remote_up_atom_v, m.card.name, r.id, std::move(r.info_json),
             caf::actor_cast<connection_actor>(r.conn));
}

// The link to `m` is gone, or it left: its runtimes go from the directory.
// A node that left drains: the calls routed to it before its runtimes were
// unlisted here still go to it (its gateway stays until its link closes),
// and it waits for them before its runtimes move.
void mark_lost(self_ptr self, member& m, member::status to, const std::string& why, bool left) {
  if (m.state == member::status::up) {
    obs::global().cluster_membership_changes.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("cluster: node {} at {} is {} ({}); its {} runtime(s) are no longer listed",
                 m.card.name, m.card.address, status_name(to), why, m.runtimes.size());
  }
  m.state = to;
  m.since = clock_type::now();
  m.runtimes.clear();
  // Else new calls for it fail at once; the gateway fails those in flight
  // when CAF kills the node's proxies.
  if (self->state.links.gateway && !left)
    self->send(self->state.links.gateway, gateway_atom_v, m.card.name, caf::actor{});
  self->send(self->state.directory, node_lost_atom_v, m.card.name);
  if (self->state.functions)
    self->send(self->state.functions, node_lost_atom_v, m.card.name);
  publish_view(self);
}

// `card` said hello or welcomed us: it is a member now, with `records`.
void admit(self_ptr self, member_card card, std::vector<runtime_record> records) {
  auto& st = self->state;
  auto [i, fresh] = st.members.try_emplace(card.name);
  auto& m = i->second;
  if (!fresh && m.left_incarnation == card.incarnation) {
    spdlog::debug("cluster: node {} left; its draining process is not admitted again", card.name);
    return;
  }
  bool same = !fresh && m.card.incarnation == card.incarnation && m.card.node == card.node
              && m.state == member::status::up;
  if (!same) {
    obs::global().cluster_membership_changes.fetch_add(1, std::memory_order_relaxed);
    if (!fresh && m.card.incarnation != card.incarnation)
      spdlog::info("cluster: node {} restarted; its new incarnation at {} replaces the old one",
                   card.name, card.address);
    else
      spdlog::info("cluster: node {} at {} joined ({} runtime(s))", card.name, card.address,
                   records.size());
    if (!fresh) {
      if (m.card.node && m.card.node != card.node)
        self->demonitor(m.card.node.address());
      self->send(st.directory, node_lost_atom_v, card.name);
      m.runtimes.clear();
    }
    self->monitor(card.node);
    m.fns_sent = false;
  }
  st.introduced.erase(card.name);
  m.card = std::move(card);
  m.state = member::status::up;
  // Before its runtimes are listed: a call routed to them finds the gateway.
  if (st.links.gateway)
    self->send(st.links.gateway, gateway_atom_v, m.card.name, m.card.gateway);
  m.since = clock_type::now();
  st.dials[m.card.address].failures = 0;
  st.joined = true;
  st.refusal.clear();
  // A full snapshot: what it no longer holds goes, the rest is (re)listed.
  std::set<std::string> now;
  for (auto& r : records)
    now.insert(r.id);
  for (auto& id : m.runtimes)
    if (!now.count(id))
      self->send(st.directory, remote_down_atom_v, m.card.name, id);
  m.runtimes.clear();
  for (auto& r : records)
    remote_up(self, m, r);
  publish_view(self);
}

std::string refusal_for(self_ptr self, const member_card& card) {
  auto& st = self->state;
  // First what the rest (and the log line) may quote.
  if (auto why = card_problem(card); !why.empty())
    return why;
  if (card.version != cluster_protocol_version)
    return "node " + card.name + " speaks cluster protocol version " + std::to_string(card.version)
           + ", node " + st.self_card.name + " speaks version "
           + std::to_string(cluster_protocol_version) + ": run the same actor-host release";
  if (card.name == st.self_card.name && card.incarnation != st.self_card.incarnation)
    return "node name '" + card.name + "' is in use by the live node at " + st.self_card.address;
  auto i = st.members.find(card.name);
  if (i != st.members.end() && i->second.state == member::status::up
      && i->second.card.incarnation != card.incarnation
      && i->second.card.address != card.address)
    return "node name '" + card.name + "' is in use by the live node at "
           + i->second.card.address;
  return {};
}

void send_functions(self_ptr self, member& m) {
  m.fns_sent = true;
  self->send(m.card.node, fn_set_atom_v, self->state.self_card.name, self->state.local_fns);
}


caf::behavior cluster_node(self_ptr self, cluster_options opts, cluster_links links,
                           caf::actor directory, cluster_board_ptr board) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.links = std::move(links);
  st.directory = std::move(directory);
  st.functions = st.links.functions;
  st.board = std::move(board);
  std::random_device rd;
  st.self_card = member_card{st.opts.node_name, st.opts.advertise,
                             (std::uint64_t{rd()} << 32) | rd(), cluster_protocol_version,
                             caf::actor_cast<caf::actor>(self),
                             caf::actor_cast<caf::actor>(st.links.gateway)};
  publish_view(self);
  self->set_down_handler([self](caf::down_msg& dm) {
    for (auto& [name, m] : self->state.members)
      if (m.card.node.address() == dm.source && m.state == member::status::up)
        mark_lost(self, m, member::status::unreachable,
                  dm.reason == caf::exit_reason::remote_link_unreachable
                    ? "its connection closed, or it sent no heartbeat within the timeout"
                    : caf::to_string(dm.reason),
                  false);
  });
  // A node leaving tells the others, so they drop it at once.
  self->attach_functor([board = st.board] {
    board->publish({});
    obs::global().cluster_minority.store(0);
  });
  auto from_member = [self](const std::string& node) -> member* {
    auto i = self->state.members.find(node);
    if (i == self->state.members.end() || i->second.state != member::status::up)
      return nullptr;
    // Only the node itself speaks for its runtimes.
    if (self->current_sender() != caf::actor_cast<caf::strong_actor_ptr>(i->second.card.node))
      return nullptr;
    return &i->second;
  };
  return {
    // -- between nodes ------------------------------------------------------
    [self](hello_atom, member_card& card, std::vector<runtime_record>& records)
      -> caf::result<member_card, std::vector<member_card>, std::vector<runtime_record>> {
      auto& st = self->state;
      if (auto why = refusal_for(self, card); !why.empty()) {
        obs::global().cluster_hellos_refused.fetch_add(1, std::memory_order_relaxed);
        spdlog::error("cluster: refused node at {}: {}",
                      card_problem(card).empty() ? card.address : std::string{"(invalid)"}, why);
        return caf::make_error(caf::sec::runtime_error, why);
      }
      std::vector<member_card> others;
      for (auto& [name, m] : st.members)
        if (m.state == member::status::up && name != card.name) {
          others.push_back(m.card);
          // Introduce the newcomer to the others (they dial it).
          self->send(m.card.node, member_atom_v, card);
        }
      admit(self, card, std::move(records));
      return {st.self_card, std::move(others), local_records(self)};
    },
    [self](member_atom, member_card& card) { meet(self, card); },
    [self, from_member](rt_up_atom, const std::string& node, runtime_record& r) {
      if (auto* m = from_member(node))
        remote_up(self, *m, r);
      publish_view(self);
    },
    [self, from_member](rt_down_atom, const std::string& node, const std::string& id) {
      if (auto* m = from_member(node); m && m->runtimes.erase(id)) {
        self->send(self->state.directory, remote_down_atom_v, node, id);
        publish_view(self);
      }
    },
    [self, from_member](fn_set_atom, const std::string& node, iii_node_set& fns) {
      auto* m = from_member(node);
      if (!m)
        return;
      if (!m->fns_sent)
        send_functions(self, *m);
      if (!self->state.functions)
        return;
      if (auto dropped = sanitize(fns))
        spdlog::warn("node {}: {} malformed or surplus iii entries dropped", node, dropped);
      self->send(self->state.functions, fn_set_atom_v, node, std::move(fns));
    },
    [self](local_fns_atom, iii_node_set& fns) {
      auto& st = self->state;
      st.local_fns = std::move(fns);
      for (auto& [name, m] : st.members)
        if (m.state == member::status::up)
          send_functions(self, m);
    },
    [self, from_member](node_status_atom, const std::string& node, std::uint64_t workers,
                        std::vector<std::string>& ids, std::vector<std::int32_t>& in_flight) {
      auto* m = from_member(node);
      if (!m)
        return;
      m->workers = workers;
      // Its runtimes' calls in flight, for balancing services across nodes.
      if (ids.size() != in_flight.size() || ids.size() > max_records_per_node) {
        spdlog::warn("node {}: malformed load report ({} ids, {} figures); ignored", node,
                     ids.size(), in_flight.size());
        return;
      }
      self->send(self->state.directory, remote_load_atom_v, node, std::move(ids),
                 std::move(in_flight));
    },
    [self, from_member](leave_atom, const std::string& node) {
      auto& st = self->state;
      if (node == st.self_card.name && !self->current_sender()) {
        // Ours: this node shuts down.
        st.leaving = true;
        broadcast(self, leave_atom_v, st.self_card.name);
        return;
      }
      if (auto* m = from_member(node)) {
        self->demonitor(m->card.node.address());
        m->left_incarnation = m->card.incarnation;
        mark_lost(self, *m, member::status::down, "it left", true);
      }
    },
    // -- within this node ---------------------------------------------------
    [self](local_up_atom, std::string& id, std::string& info, caf::actor& conn,
           replica_load_ptr& load) {
      auto& st = self->state;
      st.local_loads[id] = std::move(load);
      runtime_record r{id, std::move(info), std::move(conn)};
      st.local[id] = r;
      broadcast(self, rt_up_atom_v, st.self_card.name, r);
      publish_view(self);
    },
    [self](local_down_atom, const std::string& id) {
      auto& st = self->state;
      st.local_loads.erase(id);
      if (st.local.erase(id))
        broadcast(self, rt_down_atom_v, st.self_card.name, id);
      publish_view(self);
    },
    [self](listening_atom, std::string& advertise, std::string& reflection_url) {
      // The endpoint is up: now others can dial back what we advertise.
      auto& st = self->state;
      st.self_card.address = std::move(advertise);
      st.self_card.reflection_url = std::move(reflection_url);
      std::string host;
      std::uint16_t port = 0;
      if (st.opts.tls && split_address(st.self_card.address, host, port))
        spawn_tls_port_sweeper(self, port, st.opts.handshake_timeout);
      st.started = clock_type::now();
      if (!st.opts.seeds.empty() && st.links.middleman) {
        // Again every resolve_interval: the headless Service of a
        // StatefulSet lists the pods that exist now.
        st.resolver = spawn_seed_resolver(self);
        self->send(self, resolve_atom_v);
      }
      self->send(self, beat_atom_v);
      publish_view(self);
    },
    [self](dial_atom, caf::actor& peer) { say_hello(self, peer, {}); },
    [self](beat_atom) { beat(self); },
    [self](resolve_atom) { resolve(self); },
  };
}

} // namespace cluster_detail

caf::actor spawn_cluster_node(caf::actor_system& sys, cluster_options opts, cluster_links links,
                              caf::actor directory, cluster_board_ptr board) {
  return sys.spawn(cluster_detail::cluster_node, std::move(opts), std::move(links), std::move(directory),
                   std::move(board));
}

void introduce(const caf::actor& node, const caf::actor& peer) {
  caf::anon_send(node, dial_atom_v, peer);
}

} // namespace actor_host
