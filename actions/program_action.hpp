#pragma once

#include "actions/action.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

/// Actions backed by external programs (any language). The wire contract
/// between the runtime and the program is documented in
/// docs/PROGRAM_ACTIONS.md; in short: the input is one JSON line on stdin
/// (bidi: one line per input chunk), and every stdout line is one of
/// `{"chunk": v}`, `{"result": v}` or `{"error": {"status", "message"}}`.
namespace actor_host::actions {

/// One program action as the runtime config declares it.
struct program_spec {
  std::string name;
  std::string type = "flow";
  std::string description;
  /// argv[0] followed by the arguments. No shell is involved. An argv[0]
  /// without '/' is looked up in PATH (the child's PATH, after `env`).
  std::vector<std::string> command;
  /// Added to (and overriding) the runtime's own environment.
  std::map<std::string, std::string> env;
  /// Working directory of the child; empty = the runtime's.
  std::string cwd;
  // JSON text; empty = none.
  std::string input_schema;
  std::string output_schema;
  std::string stream_schema;
  std::string init_schema;
  std::string metadata;
  /// Input chunks are streamed to stdin as NDJSON instead of one input line.
  bool bidi = false;
  /// Whole-run limit including the wait for a concurrency slot; 0 = none.
  std::chrono::milliseconds timeout{0};
  /// Runs of this action at the same time; 0 = unlimited.
  std::size_t max_concurrency = 0;
  /// Time between SIGTERM and SIGKILL when a run is stopped.
  std::chrono::milliseconds kill_grace{2000};
};

/// A failed program run. Carries the last bytes the program wrote to stderr
/// (at most 8 KiB, possibly empty) so they can go into error.data.details.
class program_error : public action_error {
public:
  program_error(wire::status_code code, std::string message, std::string stderr_tail)
    : action_error(code, std::move(message)), stderr_tail_(std::move(stderr_tail)) {
  }

  const std::string& stderr_tail() const noexcept {
    return stderr_tail_;
  }

private:
  std::string stderr_tail_;
};

/// Builds the descriptor of a program action. The handler forks one child
/// per run, owns it for the whole run (it is killed and reaped before the
/// handler returns or throws) and maps its output to chunks, a result or a
/// Status error.
action_descriptor make_program_action(program_spec spec);

/// The pid of the most recently started program child, 0 before the first.
/// For tests that check a child is gone after its run.
pid_t last_program_pid();

} // namespace actor_host::actions
