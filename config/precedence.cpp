#include "config/precedence.hpp"

extern char** environ;

namespace actor_host::config {

setting_value effective_value(setting_value fallback, const layer_value& file,
                              const layer_value& env, const layer_value& flag) {
  if (flag)
    return *flag;
  if (env)
    return *env;
  if (file)
    return *file;
  return fallback;
}

layer_value non_empty(std::string value, std::string source) {
  if (value.empty())
    return std::nullopt;
  return setting_value{std::move(value), std::move(source)};
}

layer_value env_value(const std::map<std::string, std::string>& env, const std::string& name,
                      bool empty_is_unset) {
  auto i = env.find(name);
  if (i == env.end() || (empty_is_unset && i->second.empty()))
    return std::nullopt;
  return setting_value{i->second, "env " + name};
}

std::map<std::string, std::string> process_environment(std::string_view prefix) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry{*e};
    auto eq = entry.find('=');
    if (eq != std::string_view::npos && entry.starts_with(prefix))
      env.emplace(std::string{entry.substr(0, eq)}, std::string{entry.substr(eq + 1)});
  }
  return env;
}

} // namespace actor_host::config
