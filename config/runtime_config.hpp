#pragma once

#include "actions/program_action.hpp"

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

} // namespace actor_host::config
