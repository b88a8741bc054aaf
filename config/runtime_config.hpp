#pragma once

#include "actions/program_action.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace actor_host::config {

/// What a runtime config file declares (format: docs/PROGRAM_ACTIONS.md).
struct runtime_config {
  std::optional<std::string> manager_url;
  std::optional<std::string> id;
  std::optional<std::string> name;
  /// Program actions in file order. Relative paths (cwd, a command
  /// containing '/') are already resolved against the file's directory, and
  /// cwd defaults to that directory.
  std::vector<actions::program_spec> actions;
};

/// Loads a YAML runtime config. On failure returns false and sets `error`
/// to `file:line:column: reason` (or `file: reason` when there is no
/// position). Strict: unknown keys, duplicate keys and duplicate actions are
/// errors, so a typo cannot pass silently.
bool load_runtime_config(const std::string& path, runtime_config& out, std::string& error);

/// Same as load_runtime_config for YAML text already in memory. `file_name`
/// only prefixes error messages; relative paths resolve against `base_dir`.
bool parse_runtime_config(const std::string& text, const std::string& file_name,
                          const std::string& base_dir, runtime_config& out, std::string& error);

/// How the runtime role reaches its manager, as its flags give it (each
/// empty where not given) and, resolved, as it applies.
struct runtime_link {
  std::string manager_url;
  std::string id;
  std::string name;
  std::string tls_ca_file; // wss:// trust
};

/// The runtime role's link after the precedence rule (effective_value():
/// flags > environment > runtime config file). The environment gives
/// GENKIT_REFLECTION_V2_SERVER (manager_url), GENKIT_RUNTIME_ID (id) and
/// ACTOR_HOST_TLS_CA_FILE (tls_ca_file); the file gives manager_url, id and
/// name. An empty flag or variable counts as not given; what nothing gives
/// stays empty.
runtime_link resolve_runtime_link(const runtime_link& flags,
                                  const std::map<std::string, std::string>& env,
                                  const runtime_config& file);

} // namespace actor_host::config
