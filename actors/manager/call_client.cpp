#include "actors/manager/call_client.hpp"

#include "actors/manager/errors.hpp"
#include "net/iii_protocol.hpp"
#include "net/jsonrpc.hpp"

namespace actor_host {

namespace {

/// The iii function a runAction names with a `/iii/<function_id>` key, or "".
std::string iii_function_of(const call_request& req) {
  namespace rpc = net::jsonrpc;
  if (req.method != "runAction")
    return {};
  rpc::object_members p;
  std::string why, key;
  if (!rpc::split_object(req.params, p, why) || !p.find("key")
      || !rpc::string_value(*p.find("key"), key) || !key.starts_with(net::iii::iii_key_prefix))
    return {};
  return key.substr(net::iii::iii_key_prefix.size());
}

} // namespace

void start_call(caf::event_based_actor* self, const caf::actor& directory, call_request req) {
  auto tag = req.tag;
  auto method = req.method;
  if (method == "listActions" && req.runtime_id == net::iii::iii_runtime_id) {
    // The iii functions, listed the way a runtime lists its actions.
    self->request(directory, caf::infinite, list_iii_atom_v)
      .then(
        [self, tag](std::string& list) {
          self->send(self, done_atom_v, tag, true, std::move(list));
        },
        [self, tag](caf::error& err) {
          self->send(self, done_atom_v, tag, false,
                     manager_errors::internal("listing iii functions failed: " + to_string(err)));
        });
    return;
  }
  // One catalog: `/iii/...` keys name functions of iii workers; the worker's
  // connection then takes the call exactly like a runtime's would.
  auto function_id = iii_function_of(req);
  auto route = function_id.empty()
                 ? self->request(directory, caf::infinite, route_atom_v, req.runtime_id)
                 : self->request(directory, caf::infinite, route_iii_atom_v, function_id);
  std::move(route).then(
      [self, req = std::move(req)](bool ok, caf::actor& conn, std::string& id_or_error) mutable {
        if (!ok) {
          self->send(self, done_atom_v, req.tag, false, std::move(id_or_error));
          return;
        }
        auto tag = req.tag;
        auto method = req.method;
        auto runtime_id = id_or_error;
        self
          ->request(conn, caf::infinite, call_atom_v, req.tag, std::move(req.method),
                    std::move(req.params), req.timeout)
          .then(
            [self, tag](caf::actor& pending) {
              self->send(self, accepted_atom_v, tag, std::move(pending));
            },
            [self, tag, method, runtime_id](caf::error&) {
              // The connection died between routing and the call.
              self->send(self, done_atom_v, tag, false,
                         manager_errors::connection_closed(runtime_id, method));
            });
      },
      [self, tag, method](caf::error& err) {
        self->send(self, done_atom_v, tag, false,
                   manager_errors::internal("routing " + method + " failed: " + to_string(err)));
      });
}

bool read_timeout(const std::string* raw, caf::timespan fallback, caf::timespan& out) {
  out = fallback;
  if (!raw || *raw == "null")
    return true;
  double ms = 0;
  // Above the cap (JavaScript's setTimeout limit) the nanosecond count
  // overflows: 1e300 would mean no timeout at all.
  if (!net::jsonrpc::number_value(*raw, ms) || !(ms >= 0) || ms > max_timeout_ms)
    return false;
  out = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double, std::milli>(ms));
  return true;
}

} // namespace actor_host
