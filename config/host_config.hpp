#pragma once

#include "config/precedence.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

/// The manager's host config (format: docs/HOST_CONFIG.md): manager settings
/// and the services (child runtimes) it starts and supervises. Plain data.
namespace actor_host::config {

enum class restart_mode { never, on_failure, always };

const char* restart_mode_name(restart_mode m);

/// One service: a command the manager runs as a child runtime.
struct service_spec {
  std::string name;
  /// argv; argv[0] "actor-host" means this very binary.
  std::vector<std::string> command;
  /// GENKIT_RUNTIME_ID of the child; defaults to the name.
  std::string runtime_id;
  std::map<std::string, std::string> env;
  /// Resolved against the config file's directory; empty = the manager's.
  std::string cwd;
  restart_mode restart = restart_mode::on_failure;
  std::chrono::milliseconds backoff{500};
  std::chrono::milliseconds max_backoff{30000};
  /// Restarts in a row before giving up; 0 = unlimited. A run that stayed
  /// up for max_backoff counts as healthy and resets the count.
  std::uint64_t max_restarts = 10;
  std::chrono::milliseconds ready_timeout{30000};
  std::chrono::milliseconds stop_grace{5000};
  /// false: a plain program that never registers (not part of /readyz).
  bool registers = true;
  /// The manager's variables the child keeps besides a small default set
  /// (proc::default_inherited_names): `inherit_env: true` = all of them but
  /// the manager's secrets; a list = these names too ("PREFIX_*" a prefix).
  bool inherit_env_all = false;
  std::vector<std::string> inherit_env;
  /// The service this child is a replica of: the name of a host.yaml entry
  /// with `replicas: N`, which is expanded into N children `<name>-1..N`
  /// (runtime ids `<runtime_id>-1..N`), each supervised on its own. Calls
  /// to the service are balanced over them whatever name they register
  /// with. "" = the child's own runtime id.
  std::string service;
  /// The entry's `max_inflight_per_runtime` (the manager setting's override
  /// for this service); unset = the manager's.
  std::optional<std::uint64_t> max_inflight_per_runtime;

  bool operator==(const service_spec&) const = default;
};

struct host_config {
  /// Manager settings the file sets, by key, as written (checked).
  std::map<std::string, setting_value> manager;
  std::vector<service_spec> services;
};

/// Loads a host config. On failure returns false and sets `error` to
/// `file:line:column: reason`. Strict: unknown keys, duplicates, bad values.
bool load_host_config(const std::string& path, host_config& out, std::string& error);

bool parse_host_config(const std::string& text, const std::string& file_name,
                       const std::string& base_dir, host_config& out, std::string& error);

// -- manager settings and their precedence --------------------------------------

enum class setting_type {
  text,
  port,
  optional_port, // "off" or a port
  duration,
  positive_duration,
  count,      // a positive integer
  limit,      // an integer; 0 = no limit
  threads,
  choice,
};

struct setting_def {
  std::string_view key;          // host.yaml key; flag --key-with-dashes
  std::string_view default_value;
  setting_type type;
  std::string_view help;
  std::string_view choices;      // "a|b|c" for setting_type::choice
};

/// Every manager setting, in display order.
std::span<const setting_def> manager_settings();

const setting_def* find_setting(std::string_view key);

/// Settings written under `cluster:` in host.yaml (cluster_port as `port`).
bool is_cluster_setting(std::string_view key);

/// ACTOR_HOST_HTTP_PORT for http_port.
std::string setting_env_name(std::string_view key);

/// --http-port for http_port.
std::string setting_flag_name(std::string_view key);

/// "" if `value` is valid for `def`, else why not.
std::string check_setting(const setting_def& def, const std::string& value);

/// The effective manager settings: built-in defaults < config file <
/// environment (ACTOR_HOST_*) < flags (effective_value()). `flags` holds only
/// flags given on the command line; a variable set to "" counts as given.
/// False with `error` naming the source on a bad value.
bool resolve_settings(const host_config& file, const std::map<std::string, std::string>& env,
                      const std::map<std::string, std::string>& flags,
                      std::map<std::string, setting_value>& out, std::string& error);

} // namespace actor_host::config
