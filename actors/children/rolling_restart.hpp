#pragma once

#include "actors/call/interfaces.hpp"
#include "config/host_config.hpp"

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/timespan.hpp>

#include <optional>
#include <string>
#include <vector>

namespace actor_host {

/// One replica of a service the manager runs as a child (child_runtime.hpp).
struct restart_step {
  caf::actor child;
  std::string runtime_id;
  // The spec it runs from now on (a host.yaml reload); none: the same.
  std::optional<config::service_spec> spec;
};

struct rolling_restart_plan {
  std::string service;
  std::vector<restart_step> replicas;
  directory_actor directory;
  caf::timespan drain_timeout; // how long a replica's calls may take to end
  caf::timespan step_timeout;  // how long a replica may take to stop and register again
};

/// Restarts a service's replicas one at a time, in `self`'s context: each
/// is taken out of rotation at the directory (no new balanced call reaches
/// it), its calls in flight end (up to drain_timeout), its child process is
/// stopped and started again, and the next one waits until it has
/// registered. With two or more replicas no call fails. `rp` gets a JSON
/// summary `{"service":...,"restarted":[ids]}` or the error that stopped it.
void run_rolling_restart(caf::event_based_actor* self, rolling_restart_plan plan,
                         caf::response_promise rp);

} // namespace actor_host

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<actor_host::restart_step>)
// (restart_atom, spec) to a child_runtime: never crosses nodes.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::config::service_spec)
