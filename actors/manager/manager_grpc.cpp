// The manager's gRPC front door: the listener (grpc_door::server), the
// catalog keeper that feeds it, and the grpc_caller hubs that make its calls.

#include "actors/doors/grpc/grpc_caller.hpp"
#include "actors/doors/grpc/grpc_catalog.hpp"
#include "actors/manager/manager_impl.hpp"

#include "grpc_door/catalog.hpp"

namespace actor_host {

std::string manager::impl::start_grpc() {
  grpc_door::server_options so;
  so.bind = opts.bind;
  so.port = opts.grpc->port;
  so.tls = opts.grpc->tls;
  so.token = opts.auth_token;
  so.insecure = opts.insecure;
  so.max_write_queue_bytes = opts.max_write_queue_bytes;
  so.max_message_bytes = opts.max_body_bytes;
  so.max_calls = opts.max_connections;
  so.max_calls_per_peer = opts.policy.max_calls_per_caller;
  so.first_message_timeout = opts.first_message_timeout;
  so.max_client_resets = opts.max_client_resets;
  // One hub per scheduler thread keeps every worker busy under load; a
  // hub's work per call is a few map operations.
  std::vector<grpc_caller_actor> hubs;
  auto n = std::max<std::size_t>(2, sys.scheduler().num_workers());
  for (std::size_t i = 0; i < n; ++i)
    hubs.push_back(spawn_child(grpc_caller, door));
  // Runs on gRPC's threads: holds its own copies of the handles.
  so.start_call = [starter = std::make_shared<grpc_call_starter>(std::move(hubs))](
                    grpc_door::call_start start, std::shared_ptr<grpc_door::call_sink> sink) {
    return (*starter)(std::move(start), std::move(sink));
  };
  std::string error;
  auto srv = grpc_door::server::start(std::move(so), error);
  if (!srv)
    return error;
  grpc = std::shared_ptr<grpc_door::server>{std::move(srv)};
  spawn_child(grpc_catalog, door,
              [weak = std::weak_ptr<grpc_door::server>{grpc}](
                std::shared_ptr<const grpc_door::catalog> c) {
                if (auto s = weak.lock())
                  s->set_catalog(std::move(c));
              });
  auto& tls = opts.grpc->tls;
  spdlog::info("Starting gRPC front door: {}:{} ({}{})", opts.bind, grpc->port(),
               tls.cert_file.empty() ? "plaintext" : "TLS",
               tls.client_ca_file.empty() ? ""
               : tls.skip_client_verify   ? ", client certificates requested, not verified"
                                          : ", client certificates required");
  return {};
}

} // namespace actor_host
