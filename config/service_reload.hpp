#pragma once

#include "config/host_config.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace actor_host::config {

/// What reading host.yaml again (SIGHUP) does to the services the manager
/// runs: children whose spec changed are restarted with the new one; what a
/// restart of a child cannot carry (a service added or removed, a new
/// runtime id, registering or not) waits for the manager's restart.
struct service_reload {
  std::vector<std::size_t> changed; // indexes into `running` (and `next` by name)
  std::vector<std::string> not_applied; // one line each, for the log
};

/// Matches children by name (host.yaml replicas are `<name>-k`).
service_reload plan_service_reload(const std::vector<service_spec>& running,
                                   const std::vector<service_spec>& next);

/// The spec named `name` in `specs`; null if none.
const service_spec* find_service(const std::vector<service_spec>& specs, const std::string& name);

} // namespace actor_host::config
