#include "actors/runtime/runtime_supervisor.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

runtime_supervisor_state::~runtime_supervisor_state() {
  // Only set if the supervisor itself was ended (killed, or a stop that timed
  // out): nothing must outlive the root.
  if (link)
    caf::anon_send_exit(link, caf::exit_reason::user_shutdown);
}

namespace {

using self_ptr = caf::stateful_actor<runtime_supervisor_state>*;

long long seconds(caf::timespan d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

void start_link(self_ptr self) {
  auto& st = self->state;
  // Monitored from the spawn on: a link that fails in its first message is
  // still noticed.
  st.link = self->spawn<caf::monitored>(manager_link, st.opts, st.catalog, st.connect);
}

/// The link ended while nobody asked it to.
void on_link_failed(self_ptr self, const caf::error& reason) {
  auto& st = self->state;
  auto why = reason ? self->system().render(reason) : std::string{"it quit on its own"};
  auto now = self->clock().now();
  while (!st.restarts.empty() && now - st.restarts.front() >= st.limit.window)
    st.restarts.pop_front();
  if (st.restarts.size() >= st.limit.max_restarts) {
    spdlog::critical("manager_link failed again ({}) after {} restart(s) within {} s: giving "
                     "up, runtime {} stops",
                     why, st.restarts.size(), seconds(st.limit.window), st.opts.runtime_id);
    // Never a normal exit: whoever watches the supervisor must see a failure.
    self->quit(reason ? reason : caf::make_error(caf::exit_reason::unknown));
    return;
  }
  st.restarts.push_back(now);
  spdlog::error("manager_link failed ({}); its runs are gone; restarting it ({} of {} "
                "within {} s)",
                why, st.restarts.size(), st.limit.max_restarts, seconds(st.limit.window));
  start_link(self);
}

void finish_stop(self_ptr self) {
  for (auto& rp : self->state.stopped)
    rp.deliver(caf::ok_atom_v);
  self->quit();
}

} // namespace

caf::behavior runtime_supervisor(caf::stateful_actor<runtime_supervisor_state>* self,
                                 link_options opts, actions::catalog_ptr catalog,
                                 link_connector connect, restart_limit limit) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.catalog = std::move(catalog);
  st.connect = std::move(connect);
  st.limit = limit;
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (!st.link || dm.source != st.link.address())
      return; // a link of an earlier generation: already dealt with
    st.link = nullptr;
    on_link_failed(self, dm.reason);
  });
  st.running = caf::behavior{
    [self](shutdown_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      if (!st.link) {
        self->quit();
        return caf::ok_atom_v;
      }
      spdlog::debug("runtime_supervisor: stopping the manager link");
      // From now on the link's end is the goal, not a failure.
      self->set_down_handler([self](caf::down_msg& dm) {
        auto& st = self->state;
        if (!st.link || dm.source != st.link.address())
          return;
        st.link = nullptr;
        finish_stop(self);
      });
      // The link answers ok once its runs are done; its down message is what
      // counts here, so the answer (or a broken promise) is only drained.
      self->request(st.link, caf::infinite, shutdown_atom_v)
        .then([](caf::ok_atom) {}, [](const caf::error&) {});
      st.stopped.push_back(self->make_response_promise());
      self->become(st.stopping);
      return st.stopped.back();
    },
  };
  st.stopping = caf::behavior{
    [self](shutdown_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      st.stopped.push_back(self->make_response_promise());
      return st.stopped.back();
    },
  };
  start_link(self);
  return st.running;
}

} // namespace actor_host
