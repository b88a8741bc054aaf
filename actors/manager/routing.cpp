#include "actors/manager/routing.hpp"

#include "actors/manager/errors.hpp"
#include "net/iii_protocol.hpp"

#include <algorithm>

namespace actor_host {

call_route route_call(const route_table& routes, const call_request& req) {
  call_route r;
  if (req.method == call_method::run_action && req.key.starts_with(net::iii::iii_key_prefix)) {
    r.how = call_route::kind::iii_function;
    r.function_id = req.key.substr(net::iii::iii_key_prefix.size());
    return r;
  }
  if (req.method == call_method::list_actions && req.runtime_id == net::iii::iii_runtime_id) {
    r.how = call_route::kind::iii_listing;
    return r;
  }
  auto& es = routes.entries;
  const route_table::entry* e = nullptr;
  if (req.runtime_id.empty()) {
    if (es.empty()) {
      r.error = manager_errors::no_runtimes();
      return r;
    }
    e = &es.back();
  } else {
    auto i = std::find_if(es.begin(), es.end(),
                          [&](auto& x) { return x.runtime_id == req.runtime_id; });
    if (i == es.end()) {
      r.error = manager_errors::runtime_not_found(req.runtime_id);
      return r;
    }
    e = &*i;
  }
  r.how = call_route::kind::runtime;
  r.conn = e->conn;
  r.runtime_id = e->runtime_id;
  return r;
}

} // namespace actor_host
