#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "config/host_config.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace actor_host {

namespace proc {
class process_watch;
}

struct child_runtime_args {
  config::service_spec spec;
  directory_actor directory;
  boost::asio::io_context* io = nullptr;
  /// GENKIT_REFLECTION_V2_SERVER for the child.
  std::string manager_url;
  /// GENKIT_TELEMETRY_SERVER for the child: the manager's trace store; "" = none.
  std::string telemetry_url;
  /// Called once when the service has ended for good (exited and will not be
  /// restarted), with the exit code the manager should use when the service
  /// is the attached `-- <command>`; and once with 1 if it never got ready.
  std::function<void(int exit_code, std::string why)> on_final_exit;
  /// The dashboard feed: told (service_atom, name, state_json) on every
  /// change of state; null: nobody.
  caf::actor feed;
};

struct child_runtime_state {
  live_count live{actor_kind::child_runtime};
  child_runtime_args args;
  std::shared_ptr<proc::process_watch> watch;
  std::uint64_t generation = 0; // one per started process
  std::uint64_t restarts_in_row = 0;
  std::uint64_t restarts = 0; // since the manager started
  std::int64_t since_ms = 0;  // when `phase` began (unix ms)
  const char* phase = "starting";
  std::chrono::steady_clock::time_point started_at;
  bool ready = false;
  bool ever_ready = false;
  bool stopping = false;
  caf::response_promise stopped;
  // A restart asked for (rolling restart): answered once the new process
  // has registered.
  caf::response_promise restarted;
  std::uint64_t restart_gen = 0; // the generation stopped for it
  static inline const char* name = "child_runtime";
};

/// One service the manager runs as a child process (`-- <command>` or a host
/// config entry). Starts it with the Genkit variables injected, logs its
/// output under the service's name, tracks its registration through the
/// directory (readiness), and restarts it per its policy with exponential
/// backoff. The process never outlives the actor.
///
/// - (stop_atom, int signal) -> ok: stops the child (signal, then SIGKILL
///   after stop_grace) and quits once it has exited
/// - (restart_atom) -> ok: stops the process as above and starts a new one
///   at once (no backoff, not counted as a failure); answers when it has
///   registered, an error when it does not within ready_timeout
/// From the process watch: (exited_atom, generation, wait_status)
/// From the directory: (ready_atom, id), (unready_atom, id)
caf::behavior child_runtime(caf::stateful_actor<child_runtime_state>* self,
                            child_runtime_args args);

/// The variables a child runtime gets (GENKIT_ENV, GENKIT_REFLECTION_V2_SERVER,
/// GENKIT_RUNTIME_ID, and GENKIT_TELEMETRY_SERVER with a trace store), in a
/// fixed order; also what --write-env-file writes.
std::vector<std::pair<std::string, std::string>>
child_runtime_env(const std::string& manager_url, const std::string& runtime_id,
                  const std::string& telemetry_url = {});

} // namespace actor_host
