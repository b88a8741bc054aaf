#include "apps/cli.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include "apps/cli_commands.hpp"
#include "config/duration.hpp"
#include "config/precedence.hpp"
#include "net/access_policy.hpp"

namespace actor_host::apps {

namespace {

namespace json = boost::json;

constexpr std::string_view default_manager_url = "http://127.0.0.1:4100";

constexpr std::array<std::string_view, 8> commands{"runtimes", "services", "restart", "actions",
                                                   "run",      "cancel",   "cluster",  "drain"};

// -- parsing helpers ----------------------------------------------------------

std::optional<json::value> parse_json(std::string_view text, std::string& error) {
  json::error_code ec;
  auto jv = json::parse(text, ec);
  if (ec) {
    error = ec.message();
    return std::nullopt;
  }
  return jv;
}

/// Parses the `run` input argument; on failure returns nullopt and a message
/// that tells the user how to fix the input.
std::optional<json::value> parse_input(std::string_view text, std::string& error) {
  if (auto jv = parse_json(text, error))
    return jv;
  // The common mistake is `run /flow/echo hello`: the shell already ate any
  // quotes. Text without JSON punctuation cannot be meant as JSON.
  if (!text.empty() && text.find_first_of("{}[]\"") == std::string_view::npos
      && text.find_first_of("0123456789") != 0 && text.front() != '-') {
    error = "input must be JSON, e.g. '\"hi\"'";
    if (text.find('\'') == std::string_view::npos)
      error += "; to send the string " + std::string{text} + ", write '"
               + json::serialize(json::string_view{text.data(), text.size()}) + "'";
    return std::nullopt;
  }
  error = "input is not valid JSON: " + error;
  return std::nullopt;
}

// -- signals ------------------------------------------------------------------

void on_sigint(int) {
  // Only async-signal-safe calls here. Exiting closes the socket, and the
  // manager cancels the runs of a caller whose socket closes.
  constexpr char msg[] = "interrupted\n";
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg, sizeof(msg) - 1);
  ::_exit(exit_interrupted);
}

void install_sigint_handler() {
  struct sigaction sa = {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

} // namespace

bool is_cli_command(std::string_view arg) {
  return std::find(commands.begin(), commands.end(), arg) != commands.end();
}

int run_cli(int argc, char** argv) {
  install_sigint_handler();
  cli_options opts;
  // Given on the command line (else nullopt): the environment and the
  // defaults fill in after parsing, by the precedence every setting follows.
  std::optional<std::string> manager_flag;
  std::optional<std::string> token_file_flag;
  std::optional<std::string> ca_file_flag;
  // -- command line ---------------------------------------------------------
  CLI::App app{"Command-line client for an actor-host manager.", "actor-host"};
  app.require_subcommand(1, 1);
  const std::string footer =
    "Exit codes: 0 ok, 1 failed, 2 usage error, 3 cannot reach the manager,\n"
    "4 no runtime / runtime not found, 5 timed out, 130 interrupted.";
  auto add_common = [&](CLI::App* cmd) {
    cmd->add_option("--manager", manager_flag,
                    "API server URL (default: $ACTOR_HOST_MANAGER, else "
                      + std::string{default_manager_url} + ")");
    cmd->add_flag("--json", opts.json, "Print raw JSON results");
    cmd->add_option("--auth-token-file", token_file_flag,
                    "File with the manager's token, sent as Authorization: Bearer (default: "
                    "$ACTOR_HOST_AUTH_TOKEN_FILE)");
    cmd->add_option("--tls-ca-file", ca_file_flag,
                    "https:// manager: PEM CA(s) its certificate must chain to (default: "
                    "$ACTOR_HOST_TLS_CA_FILE, else the system store)");
    cmd->add_option("--tls-cert-file", opts.tls.cert_file,
                    "client certificate (PEM) for a manager that requires one");
    cmd->add_option("--tls-key-file", opts.tls.key_file, "key of --tls-cert-file");
    cmd->footer(footer);
  };
  auto add_runtime = [&](CLI::App* cmd) {
    cmd->add_option("--runtime", opts.runtime,
                    "Runtime ID (default: the manager picks one)");
  };
  auto* runtimes = app.add_subcommand("runtimes", "List the registered runtimes");
  add_common(runtimes);
  auto* services = app.add_subcommand(
    "services", "List the services (runtimes registered under one name) and their replicas");
  add_common(services);
  auto* restart = app.add_subcommand(
    "restart", "Restart a service the manager runs, one replica at a time (no call fails with "
               "two or more replicas)");
  restart->add_option("SERVICE", opts.service, "Service name (host.yaml name, or demo)")
    ->required();
  add_common(restart);
  auto* actions = app.add_subcommand("actions", "List the actions of a runtime");
  add_runtime(actions);
  add_common(actions);
  auto* run = app.add_subcommand("run", "Run an action and print its result");
  run->add_option("KEY", opts.key, "Action key, e.g. /flow/echo")->required();
  auto* input_opt = run->add_option("JSON", opts.input,
                                    "Input as JSON, e.g. '\"hi\"' or '{\"n\":3}'");
  run->add_flag("--stream", opts.stream, "Print streamed chunks as they arrive");
  add_runtime(run);
  run->add_option("--service", opts.service,
                  "Service name: a replica of it runs the action (default: the newest "
                  "runtime's service)")
    ->excludes("--runtime");
  run->add_option("--context", opts.context, "Action context as JSON");
  run->add_option("--timeout", opts.timeout, "Run timeout: 250ms, 30s, 2m or milliseconds");
  add_common(run);
  auto* cluster = app.add_subcommand("cluster", "List the nodes of the manager's cluster");
  add_common(cluster);
  auto* drain = app.add_subcommand(
    "drain", "Drain the manager and stop it, as SIGTERM does: its runtimes finish their calls, "
             "then move to the other nodes of its cluster");
  add_common(drain);
  auto* cancel = app.add_subcommand("cancel", "Cancel a running action by trace ID");
  cancel->add_option("TRACE_ID", opts.trace_id, "Trace ID printed by 'run'")->required();
  add_runtime(cancel);
  add_common(cancel);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // --help: prints the help of the selected command.
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_usage;
  }
  auto flag = [](const std::optional<std::string>& given, const char* name) {
    return given ? config::layer_value{{*given, name}} : std::nullopt;
  };
  auto env = config::process_environment("ACTOR_HOST_");
  opts.manager = config::effective_value({std::string{default_manager_url}, "default"}, {},
                                         config::env_value(env, "ACTOR_HOST_MANAGER", true),
                                         flag(manager_flag, "flag --manager"))
                   .value;
  auto token_file
    = config::effective_value({"", "default"}, {},
                              config::env_value(env, "ACTOR_HOST_AUTH_TOKEN_FILE", true),
                              flag(token_file_flag, "flag --auth-token-file"))
        .value;
  // An ACTOR_HOST_TLS_CA_FILE set to "" counts (as before): the system store.
  opts.tls.ca_file
    = config::effective_value({"", "default"}, {},
                              config::env_value(env, "ACTOR_HOST_TLS_CA_FILE", false),
                              flag(ca_file_flag, "flag --tls-ca-file"))
        .value;
  if (!token_file.empty()) {
    if (auto err = net::read_token_file(token_file, opts.token); !err.empty()) {
      std::cerr << "error: " << err << '\n';
      return exit_usage;
    }
  }
  // -- validate `run` arguments before connecting ---------------------------
  std::optional<json::value> input;
  std::optional<json::value> context;
  std::optional<std::int64_t> timeout_ms;
  if (run->parsed()) {
    std::string error;
    if (input_opt->count() > 0) {
      input = parse_input(opts.input, error);
      if (!input) {
        std::cerr << "error: " << error << '\n';
        return exit_usage;
      }
    }
    if (!opts.context.empty()) {
      context = parse_json(opts.context, error);
      if (!context) {
        std::cerr << "error: --context is not valid JSON: " << error << '\n';
        return exit_usage;
      }
    }
    if (!opts.timeout.empty()) {
      timeout_ms = config::parse_duration_ms(opts.timeout);
      if (!timeout_ms) {
        std::cerr << "error: invalid --timeout '" << opts.timeout
                  << "' (expected e.g. 250ms, 30s, 2m or a number of milliseconds)\n";
        return exit_usage;
      }
    }
  }
  // -- execute --------------------------------------------------------------
  int rc = exit_ok;
  auto session = open_session(opts, rc);
  if (!session)
    return rc;
  if (runtimes->parsed())
    return cmd_runtimes(*session, opts);
  if (services->parsed())
    return cmd_services(*session, opts);
  if (restart->parsed())
    return cmd_restart(*session, opts);
  if (actions->parsed())
    return cmd_actions(*session, opts);
  if (run->parsed())
    return cmd_run(*session, opts, input, context, timeout_ms);
  if (cluster->parsed())
    return cmd_cluster(*session, opts);
  if (drain->parsed())
    return cmd_drain(*session, opts);
  return cmd_cancel(*session, opts);
}

} // namespace actor_host::apps
