#pragma once

#include <string_view>

namespace actor_host::apps {

/// Returns whether `arg` (the first command-line argument) names a CLI
/// command: `runtimes`, `actions`, `run` or `cancel`.
bool is_cli_command(std::string_view arg);

/// Runs the command-line client against a manager's `/api/ws` endpoint, as
/// documented in the CLI section of docs/API.md. `argv[0]` is the program and
/// `argv[1]` the command. Returns the process exit code (0 ok, 1 failed,
/// 2 usage, 3 manager unreachable, 4 no runtime, 5 timed out). Installs a
/// SIGINT handler that exits with 130.
int run_cli(int argc, char** argv);

} // namespace actor_host::apps
