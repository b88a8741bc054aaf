#include "actors/manager/manager_supervisor.hpp"

#include "actors/dispatch/call_path.hpp"
#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

#include <memory>

namespace actor_host {

namespace {

using self_ptr = caf::stateful_actor<supervisor_state>*;

/// Why a serving manager is not ready ("" when it is).
std::string readiness(const supervisor_state& st) {
  if (st.registered_ids.size() < st.service_ids.size())
    return std::to_string(st.registered_ids.size()) + " of "
           + std::to_string(st.service_ids.size()) + " configured services registered";
  if (st.cfg.cluster_readiness)
    return st.cfg.cluster_readiness();
  return {};
}

/// Stops every service at once (each child_runtime escalates to SIGKILL
/// itself) and answers `rp` when all have answered.
void stop_services(self_ptr self, int sig, caf::response_promise rp) {
  auto& st = self->state;
  auto left = std::make_shared<std::size_t>(st.services.size());
  if (*left == 0)
    return rp.deliver(caf::ok_atom_v);
  auto one_done = [left, rp]() mutable {
    if (--*left == 0)
      rp.deliver(caf::ok_atom_v);
  };
  for (auto& s : st.services)
    self->request(s, st.cfg.service_stop_timeout, stop_atom_v, sig)
      .then([one_done](caf::ok_atom) mutable { one_done(); },
            [one_done](caf::error& err) mutable {
              spdlog::warn("a service did not confirm its stop: {}", caf::to_string(err));
              one_done();
            });
  st.services.clear();
}

/// Asks each connection in `conns` to answer once it has no call in flight,
/// within `timeout`; `then(busy)` gets the ones that did not. `then` is kept
/// once, in the shared progress: it holds every connection, and a copy per
/// request was O(N^2) memory (a drain of 2,000 runtimes peaked at 64 MB).
template <class Then>
void wait_idle(self_ptr self, const std::vector<connection_actor>& conns, caf::timespan timeout,
               Then then) {
  struct progress {
    std::size_t left;
    std::vector<connection_actor> busy;
    Then then;
  };
  auto p = std::make_shared<progress>(progress{conns.size(), {}, std::move(then)});
  if (conns.empty())
    return p->then(std::vector<connection_actor>{});
  for (auto& c : conns) {
    auto one_done = [p](const connection_actor* busy) {
      if (busy)
        p->busy.push_back(*busy);
      if (--p->left == 0)
        p->then(std::move(p->busy));
    };
    self->request(c, timeout, drain_atom_v)
      .then([one_done](caf::ok_atom) mutable { one_done(nullptr); },
            [one_done, c](caf::error&) mutable { one_done(&c); });
  }
}

void wait_for_calls(self_ptr self, int sig, caf::response_promise rp);

/// WebSocket close code 1012, service restart (RFC 6455 registry): the
/// runtime registers at another manager of its list at once.
constexpr std::uint16_t close_service_restart = 1012;

/// The calls are done: the runtimes move to other nodes, then the services stop.
void move_runtimes_and_stop(self_ptr self, const std::vector<connection_actor>& conns, int sig,
                            caf::response_promise rp) {
  for (auto& c : conns)
    self->send(c, stop_atom_v, close_service_restart);
  if (!conns.empty())
    spdlog::info("drain: {} runtime link(s) closed with 1012 (service restart); runtimes given "
                 "other managers register there",
                 conns.size());
  stop_services(self, sig, std::move(rp));
}

caf::behavior draining(self_ptr self);

void drain(self_ptr self, int sig, caf::response_promise rp) {
  auto& st = self->state;
  self->become(draining(self));
  obs::global().draining = true;
  if (st.cfg.leave_settle.count() > 0 && st.directory) {
    // (drain_atom, sig) below goes on once the settle time is over.
    st.drained = std::move(rp);
    self->delayed_send(self, st.cfg.leave_settle, drain_atom_v, sig);
    return;
  }
  wait_for_calls(self, sig, std::move(rp));
}

/// The drain's second step: the calls in flight finish (or are cancelled).
void wait_for_calls(self_ptr self, int sig, caf::response_promise rp) {
  auto& st = self->state;
  if (!st.directory)
    return stop_services(self, sig, std::move(rp));
  self->request(st.directory, internal_reply_timeout, drain_atom_v)
    .then(
      [self, sig, rp](std::vector<connection_actor>& conns) mutable {
        auto timeout = self->state.cfg.drain_timeout;
        wait_idle(self, conns, timeout, [self, sig, rp, timeout, conns](std::vector<connection_actor> busy) mutable {
          if (busy.empty()) {
            spdlog::info("drained: no call in flight");
            return move_runtimes_and_stop(self, conns, sig, std::move(rp));
          }
          spdlog::warn("drain timeout ({} ms) passed: cancelling the calls still in flight",
                       std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
          for (auto& c : busy)
            self->send(c, cancel_atom_v);
          // Cancelled calls answer their callers at once; the connections
          // confirm when their tables are empty.
          wait_idle(self, busy, std::chrono::seconds(5),
                    [self, sig, rp, conns](std::vector<connection_actor>) mutable {
                      move_runtimes_and_stop(self, conns, sig, std::move(rp));
                    });
        });
      },
      [self, sig, rp](caf::error& err) mutable {
        spdlog::warn("drain: the directory did not answer ({}); stopping without it",
                     caf::to_string(err));
        stop_services(self, sig, std::move(rp));
      });
}

// The lifecycle as behaviors: starting (the listeners are not up yet),
// serving, draining (a stop began: not ready, no restarts), stopping (the
// tree is being taken down). The handlers every state shares come last.

caf::behavior stopping(self_ptr self);

caf::message_handler any_state(self_ptr self) {
  return {
    [self](adopt_atom, caf::actor& child) {
      self->monitor(child);
      self->state.children.emplace(child.address(), std::move(child));
    },
    [self](ready_atom, const std::string& id) { self->state.registered_ids.insert(id); },
    [self](unready_atom, const std::string& id) { self->state.registered_ids.erase(id); },
    [self](stop_atom, int sig) -> caf::result<caf::ok_atom> {
      auto rp = self->make_response_promise();
      drain(self, sig, rp);
      return rp;
    },
    [self](shutdown_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      self->become(stopping(self));
      spdlog::debug("supervisor: stopping {} actor(s)", st.children.size());
      if (st.children.empty()) {
        self->quit();
        return caf::ok_atom_v;
      }
      for (auto& [addr, c] : st.children)
        self->send_exit(c, caf::exit_reason::user_shutdown);
      st.shutdown_done = self->make_response_promise();
      return st.shutdown_done;
    },
    // The end of leave_settle, once the drain is over.
    [](drain_atom, int) {},
  };
}

/// Starting and serving: restarts, reloads and a drain are taken.
caf::message_handler taking_requests(self_ptr self) {
  return caf::message_handler{
    [self](restart_atom, const std::string& service) -> caf::result<std::string> {
      auto& st = self->state;
      rolling_restart_plan plan{service, {}, st.directory, st.cfg.drain_timeout,
                                std::chrono::minutes(5)};
      for (std::size_t i = 0; i < st.replicas.size(); ++i)
        if (st.replica_services[i] == service)
          plan.replicas.push_back(st.replicas[i]);
      if (plan.replicas.empty())
        return caf::make_error(caf::sec::runtime_error,
                               "no service " + service
                                 + " among the ones this manager runs (host.yaml services "
                                   "and --demo; runtimes started elsewhere are restarted "
                                   "by whoever started them)");
      auto rp = self->make_response_promise();
      run_rolling_restart(self, std::move(plan), rp);
      return rp;
    },
    [self](reload_atom, std::vector<restart_step>& steps) {
      // Each service's changed children one at a time, the services side by
      // side; the outcome is logged (a signal has nobody to answer).
      auto& st = self->state;
      std::vector<rolling_restart_plan> plans;
      for (auto& step : steps) {
        auto service = step.spec && !step.spec->service.empty() ? step.spec->service
                                                                : step.runtime_id;
        auto i = std::find_if(plans.begin(), plans.end(),
                              [&](auto& p) { return p.service == service; });
        if (i == plans.end())
          i = plans.insert(plans.end(), rolling_restart_plan{service, {}, st.directory,
                                                             st.cfg.drain_timeout,
                                                             std::chrono::minutes(5)});
        i->replicas.push_back(std::move(step));
      }
      for (auto& plan : plans)
        run_rolling_restart(self, std::move(plan), caf::response_promise{});
    },
    [self](drain_atom) -> caf::result<std::string> {
      auto& st = self->state;
      if (!st.cfg.request_stop)
        return caf::make_error(caf::sec::runtime_error, "this manager cannot be drained remotely");
      st.cfg.request_stop();
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(st.cfg.drain_timeout).count();
      return st.cfg.who + " is draining: its runtimes finish the calls they hold (up to "
             + std::to_string(ms) + " ms), then move to another node, and it stops";
    },
  }.or_else(any_state(self));
}

/// Draining and stopping: not ready, and nothing new starts.
caf::message_handler refusing(self_ptr self) {
  return caf::message_handler{
    [](readiness_atom) { return std::string{"draining"}; },
    [](restart_atom, const std::string&) -> caf::result<std::string> {
      return caf::make_error(caf::sec::runtime_error, "the manager is draining");
    },
    [](reload_atom, const std::vector<restart_step>&) {
      spdlog::warn("reload ignored: the manager is draining");
    },
    [self](drain_atom) -> caf::result<std::string> {
      auto& st = self->state;
      if (!st.cfg.request_stop)
        return caf::make_error(caf::sec::runtime_error, "this manager cannot be drained remotely");
      return st.cfg.who + " is already draining";
    },
  }.or_else(any_state(self));
}

caf::behavior serving(self_ptr self) {
  return caf::message_handler{
    [self](readiness_atom) { return readiness(self->state); },
  }.or_else(taking_requests(self));
}

caf::behavior starting(self_ptr self) {
  return caf::message_handler{
    [self](serving_atom, directory_actor& directory, std::vector<std::string>& ids,
           std::vector<caf::actor>& services, std::vector<restart_step>& replicas,
           std::vector<std::string>& replica_services) {
      auto& st = self->state;
      st.directory = std::move(directory);
      st.services = std::move(services);
      st.replicas = std::move(replicas);
      st.replica_services = std::move(replica_services);
      st.service_ids = std::move(ids);
      for (auto& id : st.service_ids)
        // This actor handles ready_atom and unready_atom (any_state).
        self->send(st.directory, watch_atom_v, id, caf::actor_cast<runtime_watcher_actor>(self));
      self->become(serving(self));
    },
    [](readiness_atom) { return std::string{"not listening"}; },
  }.or_else(taking_requests(self));
}

caf::behavior draining(self_ptr self) {
  return caf::message_handler{
    [self](drain_atom, int sig) {
      // leave_settle is over (drain above).
      wait_for_calls(self, sig, std::move(self->state.drained));
    },
  }.or_else(refusing(self));
}

caf::behavior stopping(self_ptr self) {
  return caf::message_handler{
    [self](adopt_atom, caf::actor& child) {
      self->monitor(child);
      self->send_exit(child, caf::exit_reason::user_shutdown);
    },
  }.or_else(refusing(self));
}

} // namespace

caf::behavior manager_supervisor(caf::stateful_actor<supervisor_state>* self,
                                 supervisor_config cfg) {
  self->state.cfg = cfg;
  self->attach_functor([] { obs::global().draining = false; });
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    st.children.erase(dm.source);
    // Stopping, with the shutdown waiting for its last child.
    if (st.shutdown_done.pending() && st.children.empty()) {
      st.shutdown_done.deliver(caf::ok_atom_v);
      self->quit();
    }
  });
  return starting(self);
}

} // namespace actor_host
