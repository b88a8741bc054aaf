#include "actors/dispatch/runtime_connection_register.hpp"

#include "actors/dispatch/call_path.hpp"
#include "registry/runtime_info.hpp"

#include <spdlog/spdlog.h>

namespace actor_host::connection_detail {

namespace rpc = wire::jsonrpc;

namespace {

/// The register answer: the telemetry server (only with a trace store: an
/// unreachable telemetryServerUrl wedges the Genkit JS runtime, so otherwise
/// the key is left out and the runtime keeps its own), and in a cluster the
/// other nodes' reflection URLs (managerUrls; Genkit runtimes ignore it).
std::string register_answer(const connection_options& opts) {
  std::string out = "{";
  if (!opts.telemetry_url.empty())
    out += R"("telemetryServerUrl":)" + rpc::quote(opts.telemetry_url);
  if (opts.peer_manager_urls) {
    out += out.size() > 1 ? "," : "";
    out += R"("managerUrls":[)";
    bool first = true;
    for (auto& url : opts.peer_manager_urls()) {
      out += (first ? "" : ",") + rpc::quote(url);
      first = false;
    }
    out += ']';
  }
  return out + '}';
}

} // namespace

void reply_error(self_ptr self, const std::string& id, int code, const std::string& message) {
  self->state.transport->send_text(rpc::error_response(id, rpc::error_object(code, message)));
}

void on_register(self_ptr self, const rpc::message& m) {
  auto& st = self->state;
  auto parsed = registry::parse_register_params(m.params);
  if (!parsed) {
    spdlog::warn("rejected register from {}: {}", st.who(), parsed.error());
    if (m.kind == rpc::kind::request)
      reply_error(self, m.id, rpc::code::invalid_params, "Invalid params: " + parsed.error());
    return;
  }
  auto& info = *parsed;
  info.reflection_server_url = st.opts->reflection_url;
  info.protocol = st.opts->protocol;
  info.timestamp = registry::iso_timestamp_now();
  // The directory decides: an id held by another live socket is refused, one
  // whose socket is dead is handed over (it may probe the holder first).
  auto id = info.id;
  // No timer of our own: the directory answers at once or after its probe,
  // which has its own 2 s deadline; a request timeout would stay in CAF
  // 0.17's clock after the answer (call_path.hpp, answered_in_handler).
  runtime_registration reg{info.id, info.name.value_or(info.id), info.to_json(), st.load};
  self->request(st.directory, answered_in_handler, register_atom_v, std::move(reg),
                connection_actor{self})
    .then(
      [self, id, rid = m.id, request = m.kind == rpc::kind::request](
        bool ok, std::string& why, slot_listener_actor& queue) {
        auto& st = self->state;
        if (!ok) {
          spdlog::warn("refused register of runtime id {} from {}: {}", id,
                       st.transport->peer(), why);
          if (request)
            reply_error(self, rid, rpc::code::invalid_params, "Invalid params: " + why);
          return;
        }
        if (!st.runtime_id.empty() && st.runtime_id != id)
          self->send(st.directory, deregister_atom_v, st.runtime_id, connection_actor{self});
        if (st.runtime_id != id)
          st.shared.reset(); // the calls from now on name the new id
        st.runtime_id = id;
        st.service_queue = std::move(queue);
        if (request)
          st.transport->send_text(rpc::result_response(rid, register_answer(*st.opts)));
        // Which actions it declares safe to run twice (call_path.hpp).
        if (st.opts->learn_actions) {
          st.actions_wire_id = '"' + std::to_string(st.next_id++) + '"';
          st.transport->send_text(rpc::request("listActions", "{}", st.actions_wire_id));
        }
      },
      [self, id](caf::error& err) {
        spdlog::warn("register of runtime id {} failed: {}", id, caf::to_string(err));
      });
}

} // namespace actor_host::connection_detail
