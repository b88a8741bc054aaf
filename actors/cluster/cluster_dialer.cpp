#include "actors/cluster/cluster_node_state.hpp"

#include "actors/cluster/cluster_port_guard.hpp"
#include "actors/cluster/seed_resolver.hpp"
#include "obs/metrics.hpp"

#include <caf/all.hpp>
#include <caf/io/middleman_actor.hpp>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace actor_host::cluster_detail {

namespace {

void schedule_retry(self_ptr self, const std::string& address) {
  auto& st = self->state;
  auto& d = st.dials[address];
  d.in_flight = false;
  ++d.failures;
  auto backoff = st.opts.min_backoff * (1u << std::min(d.failures, 5u));
  d.next = clock_type::now() + std::min(backoff, st.opts.max_backoff);
}

} // namespace

void dial(self_ptr self, const std::string& address) {
  auto& st = self->state;
  // A node that leaves says hello to nobody (the others would admit it again).
  if (address == st.self_card.address || st.self_addresses.count(address) || st.leaving)
    return;
  auto& d = st.dials[address];
  if (d.in_flight || !st.links.middleman)
    return;
  std::string host;
  std::uint16_t port = 0;
  if (!split_address(address, host, port)) {
    spdlog::error("cluster: '{}' is not host:port; not dialed", address);
    d.next = clock_type::time_point::max();
    return;
  }
  d.in_flight = true;
  auto mm = caf::actor_cast<caf::io::middleman_actor>(st.links.middleman);
  // Bounded: a connect that never completes (the peer's handshake stalls)
  // kept the dial in flight for good, and nothing dialed that address again.
  self->request(mm, st.opts.handshake_timeout, caf::connect_atom_v, host, port)
    .then(
      [self, address](caf::node_id& nid, caf::strong_actor_ptr& ptr, std::set<std::string>&) {
        if (nid == self->node()) {
          self->state.self_addresses.insert(address);
          self->state.dials[address].in_flight = false;
          return;
        }
        if (!ptr) {
          obs::global().cluster_dial_failures.fetch_add(1, std::memory_order_relaxed);
          spdlog::warn("cluster: {} is a CAF node without a cluster endpoint", address);
          return schedule_retry(self, address);
        }
        say_hello(self, caf::actor_cast<caf::actor>(ptr), address);
      },
      [self, address](caf::error& err) {
        auto& st = self->state;
        obs::global().cluster_dial_failures.fetch_add(1, std::memory_order_relaxed);
        auto& d = st.dials[address];
        // The first failure in a row is worth a line; the retries are not.
        if (d.failures == 0)
          spdlog::warn("cluster: cannot reach {}: {} (retrying with backoff)", address,
                       caf::to_string(err));
        // Nothing listens there: a lost member there is down, not just unreachable.
        for (auto& [name, m] : st.members)
          if (m.card.address == address && m.state == member::status::unreachable)
            mark_lost(self, m, member::status::down, "nothing answers at its address", false);
        schedule_retry(self, address);
      });
}

// A node another node knows: dialed unless it is this one or already up
// (in this incarnation).
void meet(self_ptr self, const member_card& card) {
  auto& st = self->state;
  if (card.name == st.self_card.name || !card_problem(card).empty())
    return;
  auto i = st.members.find(card.name);
  if (i == st.members.end() || i->second.state != member::status::up
      || i->second.card.incarnation != card.incarnation) {
    if (st.introduced.size() < max_introductions || st.introduced.count(card.name))
      st.introduced[card.name] = introduction{card.address, clock_type::now()};
    dial(self, card.address);
  }
}

void say_hello(self_ptr self, const caf::actor& peer, const std::string& address) {
  auto& st = self->state;
  self
    ->request(peer, std::chrono::seconds(10), hello_atom_v, st.self_card, local_records(self))
    .then(
      [self, address](member_card& card, std::vector<member_card>& others,
                      std::vector<runtime_record>& records) {
        auto& st = self->state;
        if (!address.empty())
          st.dials[address].in_flight = false;
        if (auto why = refusal_for(self, card); !why.empty()) {
          obs::global().cluster_hellos_refused.fetch_add(1, std::memory_order_relaxed);
          spdlog::error("cluster: refusing node at {}: {}", address, why);
          if (!address.empty())
            schedule_retry(self, address);
          return;
        }
        auto name = card.name;
        admit(self, std::move(card), std::move(records));
        send_functions(self, st.members[name]);
        // Everyone it knows, we should know directly.
        for (auto& c : others)
          meet(self, c);
      },
      [self, address](caf::error& err) {
        auto& st = self->state;
        auto text = caf::to_string(err);
        obs::global().cluster_dial_failures.fetch_add(1, std::memory_order_relaxed);
        // A refusal (name in use, version) keeps this node unready until
        // some node admits it.
        if (err == caf::sec::runtime_error) {
          st.refusal = text;
          publish_view(self);
        }
        spdlog::error("cluster: node at {} refused this node: {}", address, text);
        if (!address.empty())
          schedule_retry(self, address);
      });
}

void beat(self_ptr self) {
  auto& st = self->state;
  auto now = clock_type::now();
  // Dial every seed and every lost member that is due.
  std::set<std::string> targets(st.seed_addresses.begin(), st.seed_addresses.end());
  for (auto& [name, m] : st.members)
    if (m.state != member::status::up)
      targets.insert(m.card.address);
  // And every node introduced but not admitted yet, for forget_after.
  for (auto i = st.introduced.begin(); i != st.introduced.end();) {
    auto m = st.members.find(i->first);
    bool up = m != st.members.end() && m->second.state == member::status::up;
    if (up || now - i->second.since > st.opts.forget_after) {
      i = st.introduced.erase(i);
      continue;
    }
    targets.insert(i->second.address);
    ++i;
  }
  std::set<std::string> up_addresses;
  for (auto& [name, m] : st.members)
    if (m.state == member::status::up)
      up_addresses.insert(m.card.address);
  for (auto& a : targets) {
    if (a == st.self_card.address || st.self_addresses.count(a) || up_addresses.count(a))
      continue;
    auto& d = st.dials[a];
    if (!d.in_flight && now >= d.next)
      dial(self, a);
  }
  // Forget nodes down for long.
  for (auto i = st.members.begin(); i != st.members.end();) {
    if (i->second.state == member::status::down && now - i->second.since > st.opts.forget_after) {
      spdlog::info("cluster: forgetting node {} (down since {} s)", i->first,
                   std::chrono::duration_cast<std::chrono::seconds>(now - i->second.since).count());
      i = st.members.erase(i);
    } else {
      ++i;
    }
  }
  std::vector<std::string> ids;
  std::vector<std::int32_t> in_flight;
  ids.reserve(st.local_loads.size());
  in_flight.reserve(st.local_loads.size());
  for (auto& [id, load] : st.local_loads) {
    ids.push_back(id);
    in_flight.push_back(load ? load->current() : 0);
  }
  broadcast(self, node_status_atom_v, st.self_card.name,
            st.opts.worker_count ? st.opts.worker_count() : std::uint64_t{0}, ids, in_flight);
  if (!st.joined && !st.opts.seeds.empty() && now - st.started >= st.opts.join_grace
      && !st.grace_logged) {
    st.grace_logged = true;
    spdlog::warn("cluster: no seed answered within {} ms; serving as a cluster of one and "
                 "still dialing the seeds",
                 std::chrono::duration_cast<std::chrono::milliseconds>(st.opts.join_grace).count());
  }
  publish_view(self);
  drop_silent_cluster_peers(self->system(), st.opts.handshake_timeout);
  self->delayed_send(self, st.opts.beat, beat_atom_v);
}

void resolve(self_ptr self) {
  auto& st = self->state;
  self->request(st.resolver, std::chrono::seconds(30), resolve_atom_v, st.opts.seeds)
    .then(
      [self](std::vector<std::string>& addresses) {
        auto& st = self->state;
        if (addresses != st.seed_addresses)
          spdlog::info("cluster: seeds resolve to {}", fmt::join(addresses, ", "));
        st.seed_addresses = std::move(addresses);
      },
      [](caf::error& err) { spdlog::warn("cluster: resolving the seeds failed: {}", caf::to_string(err)); });
  self->delayed_send(self, st.opts.resolve_interval, resolve_atom_v);
}

} // namespace actor_host::cluster_detail
