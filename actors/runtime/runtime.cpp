#include "actors/runtime/runtime.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/runtime/runtime_supervisor.hpp"
#include "net/access_policy.hpp"
#include "net/io_runtime.hpp"
#include "net/ws_connect.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>

#include <signal.h>
#include <unistd.h>

namespace actor_host {

struct runtime::impl {
  caf::actor_system& sys;
  net::io_runtime& io;
  runtime_options opts;
  actions::catalog_ptr catalog;
  caf::actor supervisor;
  // Set once stop() begins: from then on the supervisor's end is expected.
  std::shared_ptr<std::atomic<bool>> stopping = std::make_shared<std::atomic<bool>>(false);
};

runtime::runtime(caf::actor_system& sys, net::io_runtime& io, runtime_options opts,
                 actions::catalog_ptr catalog)
  : impl_(std::make_unique<impl>(impl{sys, io, std::move(opts), std::move(catalog), {}})) {
}

runtime::~runtime() {
  stop();
}

std::string runtime::start() {
  auto& d = *impl_;
  link_options lo;
  lo.pid = ::getpid();
  lo.runtime_id = d.opts.id.empty() ? std::to_string(lo.pid) : d.opts.id;
  lo.name = d.opts.name.empty() ? lo.runtime_id : d.opts.name;
  lo.manager_url = net::redact_token(d.opts.manager_url); // logs only: keep the token out
  lo.max_bidi_input_bytes = d.opts.max_bidi_input_bytes;
  const bool secure
    = d.opts.manager_url.starts_with("wss://") || d.opts.manager_url.starts_with("https://");
  std::string err;
  if (secure && !net::tls_client_context::load(d.opts.tls, err))
    return err; // a bad file is a startup error, not a reconnect loop
  // The files are read again at each connect: a renewed certificate is
  // picked up by the next reconnect without a restart.
  auto connect = [&io = d.io, url = d.opts.manager_url, tls = d.opts.tls, secure,
                  unread = d.opts.max_unread_frames](const caf::actor& link) {
    net::connect_options co;
    if (secure) {
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
  spdlog::info("Runtime {} hosting {} action(s), manager {}", lo.runtime_id,
               d.catalog->actions().size(), lo.manager_url);
  d.supervisor = d.sys.spawn(runtime_supervisor, std::move(lo), d.catalog, std::move(connect),
                             restart_limit{});
  // A supervisor that gave up leaves a process that serves nothing: end it
  // the way a signal would (main is waiting for one), so that whatever runs
  // us (systemd, Kubernetes, a shell loop) can see it and start it again.
  d.supervisor->attach_functor([stopping = d.stopping](const caf::error& reason) {
    if (!reason || stopping->load())
      return;
    spdlog::critical("runtime supervisor ended; stopping the process");
    ::kill(::getpid(), SIGTERM);
  });
  return {};
}

void runtime::stop() {
  auto& d = *impl_;
  if (!d.supervisor)
    return;
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
}

} // namespace actor_host
