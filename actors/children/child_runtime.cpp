#include "actors/children/child_runtime.hpp"

#include "actors/children/rolling_restart.hpp" // the (restart_atom, spec) message type

#include "obs/log.hpp"
#include "obs/metrics.hpp"
#include "proc/process_watch.hpp"
#include "proc/spawn.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

namespace actor_host {

namespace {

using self_ptr = caf::stateful_actor<child_runtime_state>*;

std::string self_executable() {
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string{buf, static_cast<std::size_t>(n)} : std::string{"actor-host"};
}

caf::timespan to_span(std::chrono::milliseconds ms) {
  return std::chrono::duration_cast<caf::timespan>(ms);
}

// What the dashboard shows: starting (spawned, not registered yet), ready
// (registered), running (up; services that do not register), backoff
// (waiting to restart), failed (gave up), exited (ended, no restart),
// stopping, stopped.
void report(self_ptr self, const char* phase) {
  auto& st = self->state;
  if (std::string_view{phase} != st.phase)
    st.since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  st.phase = phase;
  if (!st.args.feed)
    return;
  namespace rpc = wire::jsonrpc;
  auto& spec = st.args.spec;
  std::string json = R"({"name":)" + rpc::quote(spec.name) + R"(,"runtimeId":)"
                     + rpc::quote(spec.runtime_id) + R"(,"state":")" + phase + R"(","pid":)"
                     + (st.watch ? std::to_string(st.watch->pid()) : std::string{"null"})
                     + R"(,"restarts":)" + std::to_string(st.restarts) + R"(,"since":)"
                     + std::to_string(st.since_ms) + "}";
  self->send(st.args.feed, service_atom_v, spec.name, std::move(json));
}

void set_ready(self_ptr self, bool ready) {
  auto& st = self->state;
  if (st.ready == ready || !st.args.spec.registers)
    return;
  st.ready = ready;
  obs::global().services_ready.fetch_add(ready ? 1 : -1, std::memory_order_relaxed);
}

void start(self_ptr self) {
  auto& st = self->state;
  auto& spec = st.args.spec;
  obs::scoped_log_fields fields{{.runtime_id = spec.runtime_id, .service = spec.name}};
  proc::spawn_request req;
  req.argv = spec.command;
  if (req.argv.front() == "actor-host")
    req.argv.front() = self_executable();
  // A service sees what it needs to run, not the manager's credentials or
  // whatever else the manager's shell happened to export.
  req.env = proc::filter_environment(proc::inherited_environment(),
                                     {.all = spec.inherit_env_all, .names = spec.inherit_env});
  for (auto& [k, v] : spec.env)
    req.env[k] = v;
  for (auto& [k, v] : child_runtime_env(st.args.manager_url, spec.runtime_id, st.args.telemetry_url))
    req.env[k] = v;
  req.cwd = spec.cwd;
  auto gen = ++st.generation;
  auto me = caf::actor_cast<caf::actor>(self);
  try {
    auto child = proc::spawn(req);
    auto name = spec.name;
    auto id = spec.runtime_id;
    proc::process_watch::callbacks cbs;
    cbs.on_line = [name, id](bool, std::string_view line) {
      obs::scoped_log_fields f{{.runtime_id = id, .service = name}};
      spdlog::info("[{}] {}", name, line);
    };
    cbs.on_exit = [me, gen](int status) { caf::anon_send(me, exited_atom_v, gen, status); };
    st.watch = proc::process_watch::start(*st.args.io, std::move(child), std::move(cbs));
  } catch (const proc::spawn_error& e) {
    obs::global().child_start_failures.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("service {}: {}", spec.name, e.what());
    // Counts like an exit with status 127, the shell's "cannot execute".
    self->send(self, exited_atom_v, gen, 127 << 8);
    return;
  }
  st.started_at = std::chrono::steady_clock::now();
  obs::global().child_starts.fetch_add(1, std::memory_order_relaxed);
  spdlog::info("service {}: started pid {} (runtime id {})", spec.name, st.watch->pid(),
               spec.runtime_id);
  report(self, spec.registers ? "starting" : "running");
  if (spec.registers && spec.ready_timeout.count() > 0)
    self->delayed_send(self, to_span(spec.ready_timeout), ready_timeout_atom_v, gen);
}

// A restart asked for (rolling restart, reload): the running process is
// stopped; on_exited starts the next one, and `restarted` is answered once
// it has registered.
caf::response_promise begin_restart(self_ptr self) {
  auto& st = self->state;
  report(self, "stopping");
  st.restart_gen = st.generation;
  st.watch->signal(SIGTERM);
  self->delayed_send(self, to_span(st.args.spec.stop_grace), kill_atom_v, st.generation);
  st.restarted = self->make_response_promise();
  return st.restarted;
}

// Starts the process a restart asked for; one that does not register is
// restarted once it runs.
void started_for_restart(self_ptr self) {
  auto& st = self->state;
  st.restart_gen = 0;
  start(self);
  if (!st.args.spec.registers && st.watch && st.restarted.pending())
    st.restarted.deliver(caf::ok_atom_v);
}

void finish(self_ptr self, int code, std::string why) {
  auto& st = self->state;
  if (st.args.on_final_exit)
    st.args.on_final_exit(code, std::move(why));
  st.args.on_final_exit = nullptr;
}

void on_exited(self_ptr self, int status) {
  auto& st = self->state;
  auto& spec = st.args.spec;
  obs::scoped_log_fields fields{{.runtime_id = spec.runtime_id, .service = spec.name}};
  st.watch.reset();
  set_ready(self, false);
  auto what = proc::describe_wait_status(status);
  if (st.restarted.pending() && !st.stopping) {
    if (st.restart_gen == st.generation) {
      spdlog::info("service {}: stopped for a restart ({}), starting it again", spec.name, what);
      ++st.restarts;
      started_for_restart(self);
      return;
    }
    // The new process ended before it registered.
    st.restarted.deliver(caf::make_error(caf::sec::runtime_error,
                                         "service " + spec.name + " " + what + " after its restart"));
  }
  if (st.stopping) {
    spdlog::info("service {}: stopped ({})", spec.name, what);
    report(self, "stopped");
    if (st.stopped.pending())
      st.stopped.deliver(caf::ok_atom_v);
    self->quit();
    return;
  }
  bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (!st.ever_ready && spec.registers)
    spdlog::error("service {}: Process exited before runtime was ready ({})", spec.name, what);
  else
    spdlog::log(failed ? spdlog::level::warn : spdlog::level::info, "service {}: {}", spec.name,
                what);
  bool restart = spec.restart == config::restart_mode::always
                 || (spec.restart == config::restart_mode::on_failure && failed);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!restart) {
    report(self, failed ? "failed" : "exited");
    finish(self, code, !st.ever_ready && spec.registers ? "Process exited before runtime was ready"
                                                        : "service " + spec.name + " " + what);
    return;
  }
  // A run that stayed up longer than the longest backoff was healthy.
  if (std::chrono::steady_clock::now() - st.started_at >= spec.max_backoff)
    st.restarts_in_row = 0;
  if (spec.max_restarts > 0 && st.restarts_in_row >= spec.max_restarts) {
    spdlog::error("service {}: giving up after {} restarts in a row", spec.name,
                  st.restarts_in_row);
    report(self, "failed");
    finish(self, code, "service " + spec.name + " keeps failing");
    return;
  }
  auto delay = spec.backoff;
  for (std::uint64_t i = 0; i < st.restarts_in_row && delay < spec.max_backoff; ++i)
    delay *= 2;
  delay = std::min(delay, spec.max_backoff);
  ++st.restarts_in_row;
  spdlog::info("service {}: restarting in {} ms (restart {}{})", spec.name, delay.count(),
               st.restarts_in_row,
               spec.max_restarts > 0 ? " of " + std::to_string(spec.max_restarts) : "");
  report(self, "backoff");
  self->delayed_send(self, to_span(delay), start_atom_v, st.generation);
}

} // namespace

std::vector<std::pair<std::string, std::string>>
child_runtime_env(const std::string& manager_url, const std::string& runtime_id,
                  const std::string& telemetry_url) {
  std::vector<std::pair<std::string, std::string>> env{{"GENKIT_ENV", "dev"},
                                                       {"GENKIT_REFLECTION_V2_SERVER", manager_url},
                                                       {"GENKIT_RUNTIME_ID", runtime_id}};
  if (!telemetry_url.empty())
    env.emplace_back("GENKIT_TELEMETRY_SERVER", telemetry_url);
  return env;
}

caf::behavior child_runtime(self_ptr self, child_runtime_args args) {
  self->state.args = std::move(args);
  auto& spec = self->state.args.spec;
  if (spec.registers) {
    obs::global().services_expected.fetch_add(1, std::memory_order_relaxed);
    // This actor handles ready_atom and unready_atom (its behavior below).
    self->send(self->state.args.directory, watch_atom_v, spec.runtime_id,
               caf::actor_cast<runtime_watcher_actor>(self));
  }
  self->attach_functor([self] {
    auto& st = self->state;
    if (st.args.spec.registers)
      obs::global().services_expected.fetch_sub(1, std::memory_order_relaxed);
    set_ready(self, false);
    // Dropping the watch SIGKILLs and reaps a child that still runs.
    st.watch.reset();
  });
  start(self);
  return {
    [self](exited_atom, std::uint64_t gen, int status) {
      if (gen == self->state.generation)
        on_exited(self, status);
    },
    [self](start_atom, std::uint64_t gen) {
      auto& st = self->state;
      if (gen != st.generation || st.stopping || st.watch)
        return;
      obs::global().child_restarts.fetch_add(1, std::memory_order_relaxed);
      ++st.restarts;
      start(self);
    },
    [self](ready_atom, const std::string& id) {
      auto& st = self->state;
      if (id != st.args.spec.runtime_id || !st.watch)
        return;
      if (!st.ever_ready)
        spdlog::info("service {}: runtime {} is ready", st.args.spec.name, id);
      st.ever_ready = true;
      set_ready(self, true);
      report(self, "ready");
      if (st.restarted.pending())
        st.restarted.deliver(caf::ok_atom_v);
    },
    [self](unready_atom, const std::string& id) {
      if (id != self->state.args.spec.runtime_id)
        return;
      set_ready(self, false);
      if (self->state.watch && !self->state.stopping)
        report(self, "starting");
    },
    [self](ready_timeout_atom, std::uint64_t gen) {
      auto& st = self->state;
      if (gen != st.generation || st.ready || st.stopping || !st.watch)
        return;
      obs::scoped_log_fields fields{{.runtime_id = st.args.spec.runtime_id,
                                     .service = st.args.spec.name}};
      spdlog::error("service {}: Timeout waiting for runtime to be ready ({} ms)",
                    st.args.spec.name, st.args.spec.ready_timeout.count());
      if (st.restarted.pending())
        st.restarted.deliver(caf::make_error(
          caf::sec::runtime_error, "service " + st.args.spec.name + " did not register within "
                                     + std::to_string(st.args.spec.ready_timeout.count())
                                     + " ms of its restart"));
      if (!st.ever_ready)
        finish(self, 1, "Timeout waiting for runtime to be ready");
    },
    [self](stop_atom, int sig) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      st.stopping = true;
      report(self, st.watch ? "stopping" : "stopped");
      if (!st.watch) {
        self->quit();
        return caf::ok_atom_v;
      }
      st.watch->signal(sig);
      self->delayed_send(self, to_span(st.args.spec.stop_grace), kill_atom_v, st.generation);
      st.stopped = self->make_response_promise();
      return st.stopped;
    },
    [self](restart_atom) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      if (st.stopping || !st.watch || st.restarted.pending() || !st.args.spec.registers)
        return caf::make_error(caf::sec::runtime_error,
                               "service " + st.args.spec.name
                                 + " is not running a registered runtime now (or is restarting)");
      spdlog::info("service {}: restarting (rolling restart)", st.args.spec.name);
      return begin_restart(self);
    },
    [self](restart_atom, config::service_spec& spec) -> caf::result<caf::ok_atom> {
      auto& st = self->state;
      // Its id and whether it registers are what the directory and the
      // supervisor know it by: those take a manager restart.
      if (st.stopping || st.restarted.pending() || spec.runtime_id != st.args.spec.runtime_id
          || spec.registers != st.args.spec.registers)
        return caf::make_error(caf::sec::runtime_error,
                               "service " + st.args.spec.name
                                 + " cannot take the new spec now (stopping, restarting, or a "
                                   "new runtime id)");
      spdlog::info("service {}: restarting with its new spec (reload)", st.args.spec.name);
      st.args.spec = std::move(spec);
      st.restarts_in_row = 0;
      if (st.watch)
        return begin_restart(self);
      // Not running (backoff, or given up): start it now.
      ++st.generation; // a pending backoff start is stale
      st.restarted = self->make_response_promise();
      auto rp = st.restarted;
      started_for_restart(self);
      return rp;
    },
    [self](kill_atom, std::uint64_t gen) {
      auto& st = self->state;
      if (gen != st.generation || !st.watch)
        return;
      spdlog::warn("service {}: still running {} ms after the stop signal, sending SIGKILL",
                   st.args.spec.name, st.args.spec.stop_grace.count());
      st.watch->signal(SIGKILL);
    },
  };
}

} // namespace actor_host
