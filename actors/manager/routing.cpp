#include "actors/manager/routing.hpp"

#include "actors/manager/errors.hpp"
#include "net/iii_protocol.hpp"

#include <algorithm>

namespace actor_host {

call_route route_call(const route_table& routes, const call_request& req) {
  call_route r;
  r.gateway = routes.gateway;
  if (req.method == call_method::run_action && req.key.starts_with(net::iii::iii_key_prefix)) {
    r.how = call_route::kind::iii_function;
    r.function_id = req.key.substr(net::iii::iii_key_prefix.size());
    return r;
  }
  if (req.method == call_method::list_actions && req.runtime_id == net::iii::iii_runtime_id) {
    r.how = call_route::kind::iii_listing;
    return r;
  }
  auto& local = routes.entries;
  auto& remote = routes.remote;
  const route_table::entry* e = nullptr;
  auto by_id = [](const std::vector<route_table::entry>& es, std::string_view id,
                  std::string_view node = {}) -> const route_table::entry* {
    // Newest first: the most recent holder of an id wins.
    auto i = std::find_if(es.rbegin(), es.rend(), [&](auto& x) {
      return x.runtime_id == id && (node.empty() || x.node == node);
    });
    return i == es.rend() ? nullptr : &*i;
  };
  if (req.runtime_id.empty()) {
    if (!local.empty())
      e = &local.back();
    else if (!remote.empty())
      e = &remote.back();
    else {
      r.error = manager_errors::no_runtimes();
      return r;
    }
  } else if (!(e = by_id(local, req.runtime_id)) && !(e = by_id(remote, req.runtime_id))) {
    // "node/id": one node's runtime, also when other nodes hold the same id.
    std::string_view q = req.runtime_id;
    if (auto slash = q.find('/'); slash != std::string_view::npos && slash > 0) {
      auto node = q.substr(0, slash);
      auto id = q.substr(slash + 1);
      e = node == routes.self_node ? by_id(local, id) : by_id(remote, id, node);
    }
    if (!e) {
      r.error = manager_errors::runtime_not_found(req.runtime_id);
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
