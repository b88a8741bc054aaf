#include "actors/runtime/runtime.hpp"

#include "actors/common/frame_bridge.hpp"
#include "actors/runtime/manager_link.hpp"
#include "net/io_runtime.hpp"
#include "net/ws_connect.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

namespace actor_host {

struct runtime::impl {
  caf::actor_system& sys;
  net::io_runtime& io;
  runtime_options opts;
  registry::catalog_ptr catalog;
  caf::actor link;
};

runtime::runtime(caf::actor_system& sys, net::io_runtime& io, runtime_options opts,
                 registry::catalog_ptr catalog)
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
  lo.manager_url = d.opts.manager_url;
  auto connect = [&io = d.io, url = d.opts.manager_url](const caf::actor& link) {
    net::ws_connect(
      io, url, {},
      [link](net::transport_ptr t) -> net::frame_handler_ptr {
        caf::anon_send(link, connected_atom_v, std::move(t));
        return std::make_shared<frame_bridge>(link);
      },
      [link](std::string why) { caf::anon_send(link, connect_failed_atom_v, std::move(why)); });
  };
  spdlog::info("Runtime {} hosting {} action(s), manager {}", lo.runtime_id,
               d.catalog->actions().size(), d.opts.manager_url);
  d.link = d.sys.spawn(manager_link, std::move(lo), d.catalog, std::move(connect));
  return {};
}

void runtime::stop() {
  auto& d = *impl_;
  if (!d.link)
    return;
  caf::scoped_actor self{d.sys};
  self->request(d.link, std::chrono::seconds(10), shutdown_atom_v)
    .receive([](caf::ok_atom) {},
             [&](caf::error& err) {
               spdlog::warn("runtime stop incomplete: {}", caf::to_string(err));
               caf::anon_send_exit(d.link, caf::exit_reason::kill);
             });
  d.link = nullptr;
}

} // namespace actor_host
