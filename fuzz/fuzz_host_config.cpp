// YAML config files from a string: the manager's host config (with the
// settings it resolves) and the runtime config of program actions. Both go
// through registry/yaml_read and yaml-cpp. Relative paths resolve against a
// directory that does not exist, so nothing found on disk steers a run.

#include "fuzz/fuzz_support.hpp"
#include "config/duration.hpp"
#include "config/host_config.hpp"
#include "config/runtime_config.hpp"

namespace config = actor_host::config;
using actor_host::fuzz::require;

namespace {

constexpr const char* base_dir = "/nonexistent-fuzz-dir";

void host(const std::string& text) {
  config::host_config cfg;
  std::string error;
  if (!config::parse_host_config(text, "host.yaml", base_dir, cfg, error)) {
    require(!error.empty(), "a refused host config says why");
    return;
  }
  for (auto& s : cfg.services) {
    require(!s.command.empty(), "a service has a command", s.name);
    require(s.backoff.count() >= 0 && s.max_backoff.count() >= 0, "backoffs are not negative",
            s.name);
  }
  std::map<std::string, config::setting_value> out;
  if (config::resolve_settings(cfg, {}, {}, out, error))
    for (auto& [key, v] : out) {
      auto* def = config::find_setting(key);
      require(def != nullptr, "a resolved setting is known", key);
      require(config::check_setting(*def, v.value).empty(), "a resolved setting is valid",
              key + "=" + v.value);
    }
}

void runtime(const std::string& text) {
  config::runtime_config cfg;
  std::string error;
  if (!config::parse_runtime_config(text, "runtime.yaml", base_dir, cfg, error)) {
    require(!error.empty(), "a refused runtime config says why");
    return;
  }
  for (auto& a : cfg.actions)
    require(!a.name.empty() && !a.command.empty(), "an action has a name and a command", a.name);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = actor_host::fuzz::text_of(data, size);
  host(text);
  runtime(text);
  if (auto ms = config::parse_duration_ms(text))
    require(*ms >= 0 && *ms <= (std::int64_t{1} << 40), "a duration is in range", text);
  return 0;
}
