#pragma once

#include <caf/actor_system_config.hpp>

#include <string>

namespace actor_host::apps {

/// Sets the CAF scheduler of the server roles: actor-host's defaults (chosen
/// by measurement, bench/ANALYSIS.md), then `scheduler_threads`, then the
/// overrides in the environment variable ACTOR_HOST_CAF, a comma-separated
/// list of CAF 0.17 keys and values, e.g.
///   ACTOR_HOST_CAF='scheduler.policy=stealing,work-stealing.moderate-sleep-duration=200us'
/// Returns "" or why an override was refused.
std::string apply_caf_settings(caf::actor_system_config& cfg, unsigned scheduler_threads);

} // namespace actor_host::apps
