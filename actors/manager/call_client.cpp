#include "actors/manager/call_client.hpp"

#include "actors/manager/errors.hpp"
#include "net/jsonrpc.hpp"

namespace actor_host {

void start_call(caf::event_based_actor* self, const caf::actor& directory, call_request req) {
  auto tag = req.tag;
  auto method = req.method;
  self->request(directory, caf::infinite, route_atom_v, req.runtime_id)
    .then(
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
  if (!net::jsonrpc::number_value(*raw, ms) || ms < 0)
    return false;
  out = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double, std::milli>(ms));
  return true;
}

} // namespace actor_host
