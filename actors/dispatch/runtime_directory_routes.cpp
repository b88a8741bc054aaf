// The directory's routes: when a change is published, what is published,
// and who hears of it after (runtime_directory.hpp).

#include "actors/dispatch/runtime_directory_routes.hpp"

#include "obs/metrics.hpp"

#include <unordered_set>

namespace actor_host {

namespace {

using self_ptr = directory_self;
using notice = directory_state::notice;

template <class Atom>
void notify_watchers(self_ptr self, const std::string& id, Atom atom) {
  if (auto i = self->state.watchers.find(id); i != self->state.watchers.end())
    for (auto& w : i->second)
      self->send(w, atom, id);
}

void sync_service_queues(self_ptr self) {
  auto& st = self->state;
  if (st.limits.max_in_flight_per_runtime > 0 || !st.limits.per_service.empty())
    for (auto& e : st.entries)
      ensure_service_queue(self, e.service);
  if (st.services.empty())
    return;
  std::unordered_set<std::string_view> with_replicas;
  for (auto& e : st.entries)
    with_replicas.insert(e.service);
  for (auto i = st.services.begin(); i != st.services.end();) {
    if (with_replicas.count(i->first)) {
      ++i;
      continue;
    }
    self->send_exit(i->second.queue, caf::exit_reason::user_shutdown);
    i = st.services.erase(i);
  }
}

route_table build_routes(directory_state& st) {
  route_table t;
  t.entries.reserve(st.entries.size());
  for (auto& e : st.entries) {
    auto q = st.services.find(e.service);
    t.entries.push_back({e.id, e.conn, {}, e.service, e.load, st.limits.cap_of(e.service),
                         q == st.services.end() ? call_target_actor{}
                                                : caf::actor_cast<call_target_actor>(q->second.queue)});
  }
  t.remote.reserve(st.remote.size());
  for (auto& e : st.remote)
    t.remote.push_back({e.id, e.conn, e.node, e.service, e.load, 0, {}});
  for (auto& e : st.entries)
    if (!e.idempotent.empty()) {
      auto& keys = t.idempotent_by_service[e.service];
      keys.insert(keys.end(), e.idempotent.begin(), e.idempotent.end());
    }
  t.self_node = st.node_name;
  t.gateway = st.gateway;
  t.partitioned = st.partitioned;
  if (!st.moving_ids.empty()) {
    auto now = std::chrono::steady_clock::now();
    auto expired = [now](auto& kv) { return kv.second <= now; };
    std::erase_if(st.moving_ids, expired);
    std::erase_if(st.moving_services, expired);
    t.moving_ids = st.moving_ids;
    t.moving_services = st.moving_services;
  }
  return t;
}

// (The cluster node is dynamically typed, as what crosses nodes is: hence
// anon_send.)
void tell_notices(self_ptr self) {
  auto& st = self->state;
  auto ns = std::move(st.notices);
  st.notices.clear();
  for (auto& n : ns) {
    switch (n.what) {
      case notice::kind::ready:
        notify_watchers(self, n.id, ready_atom_v);
        break;
      case notice::kind::unready:
        notify_watchers(self, n.id, unready_atom_v);
        break;
      case notice::kind::up:
        if (st.cluster)
          caf::anon_send(st.cluster, local_up_atom_v, n.id, n.info_json,
                         caf::actor_cast<caf::actor>(n.conn), n.load);
        break;
      case notice::kind::down:
        if (st.cluster)
          caf::anon_send(st.cluster, local_down_atom_v, n.id);
        break;
    }
  }
}

// A table is rebuilt at most once per `publish_spacing` times the last
// rebuild's cost: under sustained churn, publishing takes at most a fifth of
// the directory's time, and a change waits a few rebuilds' time at most.
constexpr int publish_spacing = 4;

// Publishes the routes anew (routing.hpp), then tells what changed.
void publish_now(self_ptr self) {
  auto& st = self->state;
  auto start = self->clock().now();
  st.routes_stale = false;
  sync_service_queues(self);
  if (st.board)
    st.board->publish(build_routes(st));
  auto end = self->clock().now();
  st.next_publish = end + publish_spacing * (end - start);
  obs::global().route_publishes.fetch_add(1, std::memory_order_relaxed);
  tell_notices(self);
  for (auto& l : st.listeners)
    caf::anon_send(l, changed_atom_v, std::string{"runtimes"});
}

// Sends the (flush_atom) that publishes later, unless one is on its way.
void publish_later(self_ptr self) {
  auto& st = self->state;
  if (st.flush_sent)
    return;
  st.flush_sent = true;
  auto now = self->clock().now();
  if (now < st.next_publish)
    self->delayed_send(self, st.next_publish - now, flush_atom_v);
  else
    self->send(self, flush_atom_v);
}

} // namespace

// A service of this node with a cap has a queue while it has replicas; a
// registration needs its service's at once (its reply carries it).
void ensure_service_queue(self_ptr self, const std::string& service) {
  auto& st = self->state;
  if (st.limits.cap_of(service) <= 0 || st.services.count(service))
    return;
  service_queue_args a;
  a.service = service;
  a.max_queued = st.limits.max_queued_per_service;
  a.routes = st.board;
  a.queued = std::make_shared<std::atomic<std::int64_t>>(0);
  auto queued = a.queued;
  st.services.emplace(service, directory_state::service_record{
                                 self->spawn(service_queue, std::move(a)), std::move(queued)});
}

slot_listener_actor queue_of(self_ptr self, const std::string& service) {
  auto i = self->state.services.find(service);
  return i == self->state.services.end()
           ? slot_listener_actor{}
           : caf::actor_cast<slot_listener_actor>(i->second.queue);
}

// Every change of `entries` or `remote` lands here: at once when nothing else
// waits in the mailbox and the last rebuild is long enough ago, else once
// behind the burst (runtime_directory.hpp).
void routes_changed(self_ptr self) {
  auto& st = self->state;
  st.routes_stale = true;
  if (!st.flush_sent && self->mailbox().empty() && self->clock().now() >= st.next_publish)
    publish_now(self);
  else
    publish_later(self);
}

// Before answering what a caller can act on (a listing, a watch).
void publish_if_stale(self_ptr self) {
  if (self->state.routes_stale)
    publish_now(self);
}

void routes_flush(self_ptr self) {
  auto& st = self->state;
  st.flush_sent = false;
  if (!st.routes_stale)
    return;
  // Behind a burst already: only the spacing holds it back.
  if (self->clock().now() >= st.next_publish)
    publish_now(self);
  else
    publish_later(self);
}

// Local registrations go to the cluster node, which tells the other nodes.
void tell_cluster_up(self_ptr self, const directory_state::entry& e) {
  if (self->state.cluster)
    self->state.notices.push_back({notice::kind::up, e.id, e.info_json, e.conn, e.load});
}

void tell_cluster_down(self_ptr self, const std::string& id) {
  if (self->state.cluster)
    self->state.notices.push_back({notice::kind::down, id, {}, {}, {}});
}

void tell_watchers(self_ptr self, const std::string& id, notice::kind what) {
  if (self->state.watchers.count(id))
    self->state.notices.push_back({what, id, {}, {}, {}});
}

} // namespace actor_host
