#pragma once

#include "actors/manager/manager.hpp"

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace actor_host::apps {

/// What the command line says (before config file and environment).
struct host_flags {
  std::string role = "manager";
  std::string config;
  bool demo = false;
  /// After `--`: a command the manager runs as its attached runtime.
  std::vector<std::string> command;
  // runtime role
  std::string manager_url;
  std::string runtime_id;
  std::string runtime_name;
  std::string tls_ca_file; // wss:// trust
  /// Manager settings given as flags, by setting key.
  std::map<std::string, std::string> settings;
};

/// The effective settings: defaults < host config < ACTOR_HOST_* < flags.
struct host_settings {
  manager_options manager;
  std::string log_level;
  std::string log_format;
  unsigned scheduler_threads = 1;
  unsigned io_threads = 1;
  bool actors_on_io_threads = true; // io_scheduler.hpp
  /// Every setting with its value and source, for `actor-host config`.
  std::map<std::string, config::setting_value> effective;
};

/// Declares every flag of the server roles on `app`.
void add_host_options(CLI::App& app, host_flags& f);

/// Reads the host config (manager role), applies the precedence and builds
/// the manager's options and services. Returns "" or the error to print.
std::string resolve_host_settings(const host_flags& f, host_settings& out);

/// "" when every word of `command` (the parsed positionals) came after `--`
/// in argv; else an error that names the first stray word and the commands
/// (`actor-host runtimse` is a typo, not a program to run).
std::string stray_words_problem(int argc, char** argv, const std::vector<std::string>& command);

/// Reads `m.auth_token_file` (if set) into `m.auth_token`. Returns "" or why not.
std::string load_auth_token(manager_options& m);

/// `actor-host config [flags] [-- command]`: prints the effective
/// configuration and where each value came from. Exit 0, or 2 with the error
/// (`file:line:column: reason`) on a bad config.
int run_config_command(int argc, char** argv);

} // namespace actor_host::apps
