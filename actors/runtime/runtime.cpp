#include "actors/runtime/runtime.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/runtime/runtime_supervisor.hpp"
#include "actors/common/span_exporter.hpp"
#include "actors/runtime/v1_reflection.hpp"
#include "actors/runtime/v1_routes.hpp"
#include "net/access_policy.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "net/ws_connect.hpp"
#include "proc/private_file.hpp"
#include "registry/runtime_file.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <filesystem>

#include <signal.h>
#include <unistd.h>

namespace actor_host {

struct runtime::impl {
  caf::actor_system& sys;
  net::io_runtime& io;
  runtime_options opts;
  actions::catalog_ptr catalog;
  caf::actor supervisor; // V2: the runtime_supervisor; V1: the v1_reflection actor
  caf::actor spans;      // span_exporter
  std::unique_ptr<net::server> v1_server;
  std::string runtime_file; // V1: the file we announced ourselves in
  // Set once stop() begins: from then on the supervisor's end is expected.
  std::shared_ptr<std::atomic<bool>> stopping = std::make_shared<std::atomic<bool>>(false);
};

runtime::runtime(caf::actor_system& sys, net::io_runtime& io, runtime_options opts,
                 actions::catalog_ptr catalog)
  : impl_(std::make_unique<impl>(
    impl{sys, io, std::move(opts), std::move(catalog), {}, {}, nullptr, {}})) {
}

runtime::~runtime() {
  stop();
}

namespace {

/// Whatever ends the process's root actor without being asked to leaves a
/// process that serves nothing: end it the way a signal would (main is
/// waiting for one), so that whatever runs us (systemd, Kubernetes, a shell
/// loop, `genkit start`) can see it and start it again.
void end_process_with(const caf::actor& root, std::shared_ptr<std::atomic<bool>> stopping,
                      const char* what) {
  root->attach_functor([stopping, what](const caf::error& reason) {
    if (!reason || stopping->load())
      return;
    spdlog::critical("{} ended; stopping the process", what);
    ::kill(::getpid(), SIGTERM);
  });
}

/// Removes our runtime file, but only while it still names this process
/// (as the JS runtime does: another process may have taken the name).
void remove_runtime_file(const std::string& path) {
  registry::runtime_file f;
  std::string why;
  if (!registry::read_runtime_file(path, f, why) || f.pid != ::getpid())
    return;
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

} // namespace

std::string runtime::start_v1() {
  auto& d = *impl_;
  auto& v1 = d.opts.v1;
  net::server_options so;
  so.bind = v1.host;
  so.port = v1.port;
  if (v1.port == 0) {
    so.range_first = 3100;
    so.range_last = 3199;
  }
  so.max_body_bytes = v1.max_body_bytes;
  so.access = v1.access;
  so.access.bind = v1.host;
  auto pid = static_cast<std::int64_t>(::getpid());
  d.supervisor = d.sys.spawn(v1_reflection, d.catalog, d.spans, d.opts.v1.max_runs);
  end_process_with(d.supervisor, d.stopping, "the Reflection V1 server's actor");
  d.v1_server = std::make_unique<net::server>(d.io, so);
  auto identity = std::make_shared<v1_identity>();
  d.v1_server->on_http(make_v1_routes(d.catalog, d.supervisor, identity));
  if (auto err = d.v1_server->listen(); !err.empty())
    return "Reflection V1 server: " + err;
  auto port = d.v1_server->port();
  identity->runtime_id
    = d.opts.id.empty() ? std::to_string(pid) + "-" + std::to_string(port) : d.opts.id;
  identity->ready.store(true, std::memory_order_release);
  auto id = &identity->runtime_id;
  registry::runtime_file f;
  f.id = *id;
  f.pid = pid;
  f.name = d.opts.name.empty() ? *id : d.opts.name;
  f.reflection_server_url = "http://localhost:" + std::to_string(port);
  auto now = std::chrono::system_clock::now();
  f.timestamp = registry::iso_timestamp(now);
  f.genkit_version = runtime_genkit_version;
  auto dir = registry::runtimes_directory(v1.project_root);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  auto name = *id + "-" + std::to_string(ms) + ".json";
  auto path = dir + "/" + name;
  // Written whole beside the watched directory, then renamed into it: a
  // watcher (the Genkit CLI's chokidar) sees one complete file appear, never
  // a temporary one or a partial write.
  auto staged = v1.project_root + "/.genkit/" + name;
  if (auto err = proc::write_private_file(staged, registry::runtime_file_json(f)); !err.empty())
    return "cannot write the runtime file: " + err;
  std::filesystem::rename(staged, path, ec);
  if (ec) {
    std::filesystem::remove(staged, ec);
    return "cannot write the runtime file " + path + ": " + ec.message();
  }
  d.runtime_file = path;
  spdlog::info("Runtime {} hosting {} action(s), Reflection V1 at http://{}:{} (runtime file {})",
               *id, d.catalog->actions().size(), v1.host, port, path);
  return {};
}

std::string runtime::start() {
  auto& d = *impl_;
  d.spans = d.sys.spawn(span_exporter, d.opts.telemetry_url, http_span_poster(d.io),
                        span_exporter_options{});
  if (d.opts.v1.enabled)
    return start_v1();
  link_options lo;
  lo.pid = ::getpid();
  lo.runtime_id = d.opts.id.empty() ? std::to_string(lo.pid) : d.opts.id;
  lo.name = d.opts.name.empty() ? lo.runtime_id : d.opts.name;
  // Several managers (cluster nodes) are one list, tried in order.
  auto urls = net::split_list(d.opts.manager_url);
  if (urls.empty())
    return "no manager URL";
  auto secure = [](const std::string& url) {
    return url.starts_with("wss://") || url.starts_with("https://");
  };
  std::string err;
  for (const auto& url : urls) {
    lo.manager_urls.push_back(url);
    if (secure(url) && !net::tls_client_context::load(d.opts.tls, err))
      return err; // a bad file is a startup error, not a reconnect loop
  }
  lo.max_bidi_input_bytes = d.opts.max_bidi_input_bytes;
  // A hung manager (stopped, or cut off without a reset) is left within 3-6 s:
  // the runtime moves to the next manager while the other nodes still hold
  // its calls (failover_hold, 5 s from their own 5 s heartbeat timeout).
  lo.liveness_interval = std::chrono::seconds(3);
  lo.spans = d.spans;
  // The files are read again at each connect: a renewed certificate is
  // picked up by the next reconnect without a restart.
  auto connect = [&io = d.io, tls = d.opts.tls, secure,
                  unread = d.opts.max_unread_frames](const caf::actor& link, const std::string& url) {
    net::connect_options co;
    // Beast's own keep-alive as a second line (manager_link's probe below
    // finds a hung manager first, also when a write to it is stuck).
    co.idle_timeout = std::chrono::seconds(6);
    if (secure(url)) {
      std::string why;
      co.tls = net::tls_client_context::load(tls, why);
      if (!co.tls) {
        caf::anon_send(link, connect_failed_atom_v, std::move(why));
        return;
      }
    }
    net::ws_connect(
      io, url, co,
      [link, unread](net::transport_ptr t) -> net::frame_handler_ptr {
        t = with_read_window(std::move(t), unread);
        caf::anon_send(link, connected_atom_v, t);
        // manager_link reads frames and closes in each of its states.
        return std::make_shared<frame_bridge>(caf::actor_cast<socket_owner_actor>(link),
                                              std::move(t));
      },
      [link](std::string why) { caf::anon_send(link, connect_failed_atom_v, std::move(why)); });
  };
  std::vector<std::string> shown; // logs keep the token out
  for (auto& url : lo.manager_urls)
    shown.push_back(net::redact_token(url));
  spdlog::info("Runtime {} hosting {} action(s), manager {}", lo.runtime_id,
               d.catalog->actions().size(), fmt::join(shown, ", "));
  d.supervisor = d.sys.spawn(runtime_supervisor, std::move(lo), d.catalog, std::move(connect),
                             restart_limit{});
  end_process_with(d.supervisor, d.stopping, "runtime supervisor");
  return {};
}

void runtime::stop() {
  auto& d = *impl_;
  if (!d.runtime_file.empty()) {
    // First, so no tool picks a runtime that is going away.
    remove_runtime_file(d.runtime_file);
    d.runtime_file.clear();
  }
  if (d.v1_server)
    d.v1_server->stop_accepting();
  if (!d.supervisor) {
    if (d.spans)
      caf::anon_send_exit(d.spans, caf::exit_reason::user_shutdown);
    d.spans = nullptr;
    return;
  }
  d.stopping->store(true);
  caf::scoped_actor self{d.sys};
  self->request(d.supervisor, std::chrono::seconds(10), shutdown_atom_v)
    .receive([](caf::ok_atom) {},
             [&](caf::error& err) {
               spdlog::warn("runtime stop incomplete: {}", d.sys.render(err));
               // The supervisor takes the link and its runs down with it.
               caf::anon_send_exit(d.supervisor, caf::exit_reason::kill);
             });
  d.supervisor = nullptr;
  // Spans of the last runs may still be on their way: they go with it.
  if (d.spans)
    caf::anon_send_exit(d.spans, caf::exit_reason::user_shutdown);
  d.spans = nullptr;
}

} // namespace actor_host
