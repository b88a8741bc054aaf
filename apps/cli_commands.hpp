#pragma once

#include "apps/cli_session.hpp"
#include "net/tls.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

/// The CLI's commands: what each asks the manager and how it prints the
/// answer (docs/API.md, CLI section). Parsing the command line is cli.cpp's.
namespace actor_host::apps {

/// Process exit codes, as documented in docs/API.md.
enum exit_code : int {
  exit_ok = 0,
  exit_failed = 1,
  exit_usage = 2,
  exit_unreachable = 3,
  exit_no_runtime = 4,
  exit_timed_out = 5,
  exit_interrupted = 130,
};

/// Everything the command line can set; each command reads its part.
struct cli_options {
  std::string manager;
  std::string token; // sent as Authorization: Bearer
  bool json = false;
  std::string runtime;
  std::string service; // run: runtimeName; restart: the service
  std::string key;
  std::string input;
  bool stream = false;
  std::string context;
  std::string timeout;
  std::string trace_id;
  net::tls_client_files tls; // https:// / wss:// managers
};

/// Connects to the manager or prints why not. Returns nullptr on failure and
/// sets `rc`.
std::unique_ptr<manager_session> open_session(const cli_options& opts, int& rc);

/// `runtimes`: the registered runtimes as a table (or JSON).
int cmd_runtimes(manager_session& session, const cli_options& opts);

/// `services`: each service with its replicas as a table (or JSON).
int cmd_services(manager_session& session, const cli_options& opts);

/// `restart SERVICE`: a rolling restart; prints the replicas restarted.
int cmd_restart(manager_session& session, const cli_options& opts);

/// `actions`: a runtime's actions as a table (or JSON).
int cmd_actions(manager_session& session, const cli_options& opts);

/// `run`: runs an action, printing streamed chunks and then the result;
/// `input`, `context` and `timeout_ms` are already checked.
int cmd_run(manager_session& session, const cli_options& opts,
            const std::optional<boost::json::value>& input,
            const std::optional<boost::json::value>& context,
            std::optional<std::int64_t> timeout_ms);

/// `cancel`: cancels a run by trace id.
int cmd_cancel(manager_session& session, const cli_options& opts);

/// `actor-host cluster`: the nodes as the manager sees them.
int cmd_cluster(manager_session& session, const cli_options& opts);

/// `drain`: the manager drains (its runtimes' calls finish, then they move
/// to other nodes) and stops, as on SIGTERM.
int cmd_drain(manager_session& session, const cli_options& opts);

} // namespace actor_host::apps
