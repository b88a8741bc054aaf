#include "actors/call/routing.hpp"

#include "actors/call/errors.hpp"
#include "wire/iii_protocol.hpp"

#include <algorithm>
#include <optional>
#include <random>

namespace actor_host {

namespace {

using entries_t = std::vector<route_table::entry>;

// Per thread: the doors route on many threads at once, and the draws need
// to be cheap, not good.
std::uint32_t draw() {
  thread_local std::uint32_t x = [] {
    std::random_device rd;
    auto seed = rd();
    return seed == 0 ? 0x9e3779b9u : seed;
  }();
  x ^= x << 13; // xorshift32
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

// Of n replicas, the rank to use: the less loaded of two distinct ones
// drawn at random (the "power of two choices": nearly as good as the least
// loaded of all, without herding every door onto the same replica while
// their figures lag), the first drawn on a tie.
template <class LoadAt>
std::size_t pick_rank(std::size_t n, LoadAt load_at, std::uint32_t (*random)()) {
  if (n <= 1)
    return 0;
  auto a = random() % n;
  auto b = random() % (n - 1);
  if (b >= a)
    ++b;
  return load_at(b) < load_at(a) ? b : a;
}

std::int32_t load_of(const route_table::entry& e) {
  return e.load ? e.load->balance_figure() : 0;
}

bool ejected(const route_table::entry& e, replica_load::clock::time_point now) {
  return e.load && e.load->out_of_rotation(now);
}

// The replicas of `service` in `es`, balanced; null if it has none there.
// Ejected and draining replicas are passed over while the service has others.
const route_table::entry* pick_in(const entries_t& es, std::string_view service,
                                  const caf::actor_addr& avoid = {}) {
  // `avoid` (a replica a retried call failed on) is passed over while the
  // service has another.
  auto of_service = [&](const route_table::entry& e) {
    return e.service == service && (!avoid || e.conn.address() != avoid);
  };
  if (avoid && std::none_of(es.begin(), es.end(), of_service))
    return pick_in(es, service);
  std::size_t n = 0, serving = 0;
  const route_table::entry* only = nullptr;
  const route_table::entry* only_serving = nullptr;
  // Read once per call, and only when a replica was ever ejected.
  std::optional<replica_load::clock::time_point> now;
  for (auto& e : es)
    if (of_service(e)) {
      ++n;
      only = &e;
      if (e.load && e.load->maybe_out() && !now)
        now = replica_load::clock::now();
      if (!now || !ejected(e, *now)) {
        ++serving;
        only_serving = &e;
      }
    }
  bool skip_ejected = now && serving > 0 && serving < n;
  if (skip_ejected)
    n = serving, only = only_serving;
  if (n <= 1)
    return only;
  // The k-th replica of the service (k < n), in table order.
  auto nth = [&](std::size_t k) -> const route_table::entry& {
    for (auto& e : es)
      if (of_service(e) && !(skip_ejected && ejected(e, *now)) && k-- == 0)
        return e;
    return *only; // not reached: k < n
  };
  return &nth(pick_rank(n, [&](std::size_t k) { return load_of(nth(k)); }, draw));
}

// As pick_in, and counts the call on the replica picked: the balanced pick
// if it has room, else any replica of the service with room. Null if none
// has room (`*full` is then the balanced pick) or there is none.
const route_table::entry* reserve_in(const entries_t& es, std::string_view service,
                                     const route_table::entry** full,
                                     const caf::actor_addr& avoid = {}) {
  auto* pick = pick_in(es, service, avoid);
  if (!pick || !pick->load || pick->load->try_reserve(pick->cap))
    return pick;
  for (auto& e : es)
    if (&e != pick && e.service == service && e.load && e.load->try_reserve(e.cap))
      return &e;
  *full = pick;
  return nullptr;
}

// On a minority side (route_table::partitioned) what this node does not
// list may be on the other side: UNAVAILABLE, not NOT_FOUND.
call_error beyond_partition(const route_table& routes, const std::string& what) {
  return manager_errors::make_error(wire::status_code::unavailable,
                                    what + " is not on this side of a partition: "
                                      + routes.partitioned);
}

// Whether `name` was lost with its node within the failover hold (read
// only when a call finds nothing to go to).
bool moving(const std::unordered_map<std::string, std::chrono::steady_clock::time_point>& m,
            std::string_view name) {
  if (m.empty())
    return false;
  auto i = m.find(std::string{name});
  return i != m.end() && i->second > std::chrono::steady_clock::now();
}

} // namespace

const route_table::entry* reserve_replica(const route_table& routes, std::string_view service) {
  const route_table::entry* full = nullptr;
  return reserve_in(routes.entries, service, &full);
}

std::size_t pick_replica(const std::vector<std::int32_t>& loads, std::uint32_t (*random)()) {
  return pick_rank(loads.size(), [&](std::size_t k) { return loads[k]; }, random);
}

std::string_view service_of_call(const route_table& routes, const call_request& req) {
  if (!req.runtime_name.empty())
    return req.runtime_name;
  if (!routes.entries.empty())
    return routes.entries.back().service;
  if (!routes.remote.empty())
    return routes.remote.back().service;
  return {};
}

bool declared_idempotent(const route_table& routes, const call_request& req) {
  if (routes.idempotent_by_service.empty() || !req.runtime_id.empty())
    return false;
  auto i = routes.idempotent_by_service.find(std::string{service_of_call(routes, req)});
  return i != routes.idempotent_by_service.end()
         && std::find(i->second.begin(), i->second.end(), req.key) != i->second.end();
}

call_route route_call(const route_table& routes, const call_request& req,
                      const caf::actor_addr& avoid) {
  call_route r;
  r.gateway = routes.gateway;
  if (req.method == call_method::run_action && req.key.starts_with(wire::iii::iii_key_prefix)) {
    r.how = call_route::kind::iii_function;
    r.function_id = req.key.substr(wire::iii::iii_key_prefix.size());
    return r;
  }
  if (req.method == call_method::list_actions && req.runtime_id == wire::iii::iii_runtime_id) {
    r.how = call_route::kind::iii_listing;
    return r;
  }
  auto& local = routes.entries;
  auto& remote = routes.remote;
  const route_table::entry* e = nullptr;
  auto by_id = [](const entries_t& es, std::string_view id,
                  std::string_view node = {}) -> const route_table::entry* {
    // Newest first: the most recent holder of an id wins.
    auto i = std::find_if(es.rbegin(), es.rend(), [&](auto& x) {
      return x.runtime_id == id && (node.empty() || x.node == node);
    });
    return i == es.rend() ? nullptr : &*i;
  };
  // Between nodes the holder announced first wins: an id registered at
  // another node while one is live (a copy, or a runtime claiming a name
  // that is not its own) never takes that one's unqualified calls; it is
  // reachable as node/id. (On one node a live holder keeps its id.)
  auto first_by_id = [](const entries_t& es, std::string_view id) -> const route_table::entry* {
    auto i = std::find_if(es.begin(), es.end(), [&](auto& x) { return x.runtime_id == id; });
    return i == es.end() ? nullptr : &*i;
  };
  if (req.method == call_method::cancel_action && req.runtime_id.empty()) {
    // Only the runtime that holds a run knows its trace id.
    auto n = req.runtime_name.empty()
               ? local.size()
               : static_cast<std::size_t>(std::count_if(local.begin(), local.end(), [&](auto& x) {
                   return x.service == req.runtime_name;
                 }));
    if (n > 1) {
      r.how = call_route::kind::broadcast;
      r.service = req.runtime_name;
      return r;
    }
  }
  if (req.runtime_id.empty()) {
    auto service = service_of_call(routes, req);
    if (service.empty()) {
      r.error = manager_errors::no_runtimes();
      return r;
    }
    const route_table::entry* full = nullptr;
    if ((e = reserve_in(local, service, &full, avoid))) {
      r.load = e->load;
      r.reroutable = std::any_of(local.begin(), local.end(), [&](auto& x) {
        return &x != e && x.service == service;
      });
    } else if (full) {
      // Every replica here is at its cap: the service's queue takes the call.
      if (!full->queue) {
        r.error = manager_errors::service_busy(service, 0);
        return r;
      }
      r.how = call_route::kind::runtime;
      r.conn = full->queue;
      r.runtime_id = std::string{service};
      return r;
    } else if ((e = reserve_in(remote, service, &full, avoid))) {
      // Another node's replicas, balanced on the calls this node has there.
      r.load = e->load;
    } else {
      if (moving(routes.moving_services, service))
        r.how = call_route::kind::hold;
      r.error = routes.partitioned.empty()
                  ? manager_errors::service_not_found(req.runtime_name)
                  : beyond_partition(routes, "service " + req.runtime_name);
      return r;
    }
  } else if ((e = by_id(local, req.runtime_id))) {
    // A pinned call is counted, never held back by the cap.
    if (e->load && e->load->try_reserve(0))
      r.load = e->load;
  } else if ((e = first_by_id(remote, req.runtime_id))) {
    if (e->load && e->load->try_reserve(0))
      r.load = e->load;
  } else {
    // "node/id": one node's runtime, also when other nodes hold the same id.
    std::string_view q = req.runtime_id;
    if (auto slash = q.find('/'); slash != std::string_view::npos && slash > 0) {
      auto node = q.substr(0, slash);
      auto id = q.substr(slash + 1);
      e = node == routes.self_node ? by_id(local, id) : by_id(remote, id, node);
      if (e && e->load && e->load->try_reserve(0))
        r.load = e->load;
    }
    if (!e) {
      if (moving(routes.moving_ids, req.runtime_id))
        r.how = call_route::kind::hold;
      r.error = routes.partitioned.empty()
                  ? manager_errors::runtime_not_found(req.runtime_id)
                  : beyond_partition(routes, "runtime " + req.runtime_id);
      return r;
    }
  }
  r.how = call_route::kind::runtime;
  r.conn = e->conn;
  r.runtime_id = e->runtime_id;
  r.node = e->node;
  return r;
}

} // namespace actor_host
