#include "actors/manager/manager.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/manager/api_session.hpp"
#include "actors/manager/http_api.hpp"
#include "actors/manager/manager_supervisor.hpp"
#include "actors/manager/metrics_page.hpp"
#include "actors/manager/runtime_connection.hpp"
#include "actors/manager/runtime_directory.hpp"
#include "net/server.hpp"
#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

#include <atomic>

namespace actor_host {

struct manager::impl {
  impl(caf::actor_system& sys, net::io_runtime& io, manager_options o)
    : sys(sys), opts(std::move(o)),
      reflection(io, net::server_options{opts.bind, opts.port, 3200, 3400, opts.max_frame_bytes,
                                         opts.max_body_bytes}),
      api(io, net::server_options{opts.bind, opts.http_port, 0, 0, opts.max_frame_bytes,
                                  opts.max_body_bytes}) {
  }

  caf::actor_system& sys;
  manager_options opts;
  net::server reflection;
  net::server api;
  caf::actor supervisor;
  caf::actor directory;
  std::atomic<bool> running{false};

  template <class F, class... Ts>
  caf::actor spawn_child(F fun, Ts&&... xs) {
    auto a = sys.spawn(fun, std::forward<Ts>(xs)...);
    caf::anon_send(supervisor, adopt_atom_v, a);
    return a;
  }
};

manager::manager(caf::actor_system& sys, net::io_runtime& io, manager_options opts)
  : impl_(std::make_unique<impl>(sys, io, std::move(opts))) {
}

manager::~manager() {
  stop();
}

std::string manager::start() {
  auto& d = *impl_;
  d.supervisor = d.sys.spawn(manager_supervisor);
  d.directory = d.spawn_child(runtime_directory);
  if (auto err = d.reflection.listen(); !err.empty())
    return "reflection server: " + err;
  connection_options conn_opts{"ws://localhost:" + std::to_string(d.reflection.port()),
                               d.opts.policy.request_timeout};
  d.reflection.on_websocket("", [&d, conn_opts](net::transport_ptr t) -> net::frame_handler_ptr {
    auto a = d.spawn_child(runtime_connection, t, d.directory, conn_opts);
    return std::make_shared<frame_bridge>(std::move(a));
  });
  d.api.on_websocket("/api/ws", [&d](net::transport_ptr t) -> net::frame_handler_ptr {
    auto a = d.spawn_child(api_session, t, d.directory, d.opts.policy);
    return std::make_shared<frame_bridge>(std::move(a));
  });
  http_api_context api_ctx{&d.sys, &d.directory, d.opts.policy, [this] { return stats_json(); }};
  api_ctx.metrics_text = [&d] { return metrics_page(d.reflection.counters(), d.api.counters()); };
  api_ctx.not_ready_reason = [this] { return not_ready_reason(); };
  d.api.on_http(make_http_api(std::move(api_ctx)));
  if (auto err = d.api.listen(); !err.empty())
    return "API server: " + err;
  d.running = true;
  spdlog::info("Starting reflection server: ws://localhost:{}", d.reflection.port());
  spdlog::info("Starting API server: http://localhost:{}", d.api.port());
  return {};
}

void manager::stop() {
  auto& d = *impl_;
  if (!d.supervisor)
    return;
  d.running = false;
  d.reflection.stop_accepting();
  d.api.stop_accepting();
  caf::scoped_actor self{d.sys};
  self->request(d.supervisor, std::chrono::seconds(10), shutdown_atom_v)
    .receive([](caf::ok_atom) {},
             [](caf::error& err) {
               spdlog::warn("manager shutdown incomplete: {}", caf::to_string(err));
             });
  d.supervisor = nullptr;
  d.directory = nullptr;
}

std::string manager::not_ready_reason() const {
  auto& m = obs::global();
  if (!impl_->running)
    return "not listening";
  if (m.draining.load())
    return "draining";
  auto expected = m.services_expected.load();
  auto ready = m.services_ready.load();
  if (ready < expected)
    return std::to_string(ready) + " of " + std::to_string(expected)
           + " configured services registered";
  return {};
}

std::uint16_t manager::port() const {
  return impl_->reflection.port();
}

std::uint16_t manager::http_port() const {
  return impl_->api.port();
}

std::string manager::stats_json() const {
  auto n = [](actor_kind k) { return std::to_string(live_actors(k)); };
  auto& rc = impl_->reflection.counters();
  auto& ac = impl_->api.counters();
  return R"({"actors":{"runtime_directory":)" + n(actor_kind::runtime_directory)
         + R"(,"runtime_connection":)" + n(actor_kind::runtime_connection)
         + R"(,"pending_request":)" + n(actor_kind::pending_request)
         + R"(,"caller_session":)" + n(actor_kind::caller_session) + R"(},"sockets":{"runtime":)"
         + std::to_string(rc.websockets.load()) + R"(,"api":)"
         + std::to_string(ac.websockets.load() + ac.http_connections.load()) + R"(},"runtimes":)"
         + std::to_string(registered_runtimes.load()) + "}";
}

} // namespace actor_host
