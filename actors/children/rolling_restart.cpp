#include "actors/children/rolling_restart.hpp"

#include "actors/common/messages.hpp"
#include "wire/jsonrpc.hpp"

#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <memory>

namespace actor_host {

namespace {

struct restart_run {
  rolling_restart_plan plan;
  caf::response_promise rp;
  std::size_t next = 0;
};

using run_ptr = std::shared_ptr<restart_run>;

void restart_next(caf::event_based_actor* self, run_ptr run);

void restart_child(caf::event_based_actor* self, run_ptr run) {
  auto& step = run->plan.replicas[run->next];
  auto asked = step.spec ? self->request(step.child, run->plan.step_timeout, restart_atom_v, *step.spec)
                         : self->request(step.child, run->plan.step_timeout, restart_atom_v);
  std::move(asked).then(
      [self, run](caf::ok_atom) {
        spdlog::info("rolling restart of {}: replica {} is back", run->plan.service,
                     run->plan.replicas[run->next].runtime_id);
        ++run->next;
        restart_next(self, run);
      },
      [run, id = step.runtime_id](caf::error& err) {
        spdlog::error("rolling restart of {} stopped at replica {}: {}", run->plan.service, id,
                      caf::to_string(err));
        if (run->rp.pending()) // none for a reload (SIGHUP)
          run->rp.deliver(caf::make_error(caf::sec::runtime_error,
                                        "replica " + id + " did not come back: "
                                          + caf::to_string(err)));
      });
}

void restart_next(caf::event_based_actor* self, run_ptr run) {
  auto& p = run->plan;
  if (run->next == p.replicas.size()) {
    namespace rpc = wire::jsonrpc;
    std::string ids;
    for (auto& r : p.replicas)
      ids += (ids.empty() ? "" : ",") + rpc::quote(r.runtime_id);
    spdlog::info("rolling restart of {}: done ({} replicas)", p.service, p.replicas.size());
    if (run->rp.pending())
      run->rp.deliver(R"({"service":)" + rpc::quote(p.service) + R"(,"restarted":[)" + ids + "]}");
    return;
  }
  auto& step = p.replicas[run->next];
  spdlog::info("rolling restart of {}: draining replica {} ({} of {})", p.service,
               step.runtime_id, run->next + 1, p.replicas.size());
  self->request(p.directory, std::chrono::seconds(10), drain_atom_v, step.runtime_id)
    .then(
      [self, run](connection_actor& conn) {
        // Its calls in flight end; then the process goes.
        self->request(conn, run->plan.drain_timeout, drain_atom_v)
          .then([self, run](caf::ok_atom) { restart_child(self, run); },
                [self, run](caf::error&) {
                  spdlog::warn("rolling restart of {}: replica {} still had calls after the "
                               "drain timeout; restarting it anyway",
                               run->plan.service, run->plan.replicas[run->next].runtime_id);
                  restart_child(self, run);
                });
      },
      // Not registered now (it may be starting): restart it all the same.
      [self, run](caf::error&) { restart_child(self, run); });
}

} // namespace

void run_rolling_restart(caf::event_based_actor* self, rolling_restart_plan plan,
                         caf::response_promise rp) {
  auto run = std::make_shared<restart_run>(restart_run{std::move(plan), std::move(rp), 0});
  restart_next(self, std::move(run));
}

} // namespace actor_host
