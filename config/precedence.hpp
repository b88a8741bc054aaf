#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

/// The one precedence rule of every setting (manager settings, the runtime
/// role's link, the CLI's manager and token): a flag beats the environment,
/// which beats the config file, which beats the built-in default.
namespace actor_host::config {

/// A value and where it came from: "default", "FILE:LINE", "env NAME",
/// "flag --name".
struct setting_value {
  std::string value;
  std::string source;
};

/// What one layer (config file, environment, command line) says of a
/// setting; nullopt where it says nothing.
using layer_value = std::optional<setting_value>;

/// The effective value: `flag`, else `env`, else `file`, else `fallback`.
setting_value effective_value(setting_value fallback, const layer_value& file,
                              const layer_value& env, const layer_value& flag);

/// `value` from `source`, or nullopt if it is empty: for layers where an
/// empty string means "not given" (a flag whose default is "", `NAME=`).
layer_value non_empty(std::string value, std::string source);

/// Variable `name` of `env` as the environment layer ("env NAME"); nullopt
/// if it is not set, or (with `empty_is_unset`) set to "".
layer_value env_value(const std::map<std::string, std::string>& env, const std::string& name,
                      bool empty_is_unset);

/// The process environment: the variables whose names start with `prefix`
/// ("" = all of them).
std::map<std::string, std::string> process_environment(std::string_view prefix = {});

} // namespace actor_host::config
