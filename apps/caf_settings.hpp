#pragma once

#include "actors/manager/manager.hpp"

#include <caf/actor_system_config.hpp>

#include <string>

namespace actor_host::apps {

/// Sets the CAF scheduler of the server roles: actor-host's defaults (chosen
/// by measurement, bench/ANALYSIS.md), then `scheduler_threads` and
/// `actors_on_io_threads` (io_scheduler.hpp), then the
/// overrides in the environment variable ACTOR_HOST_CAF, a comma-separated
/// list of CAF 0.17 keys and values, e.g.
///   ACTOR_HOST_CAF='scheduler.policy=stealing,work-stealing.moderate-sleep-duration=200us'
/// Returns "" or why an override was refused.
std::string apply_caf_settings(caf::actor_system_config& cfg, unsigned scheduler_threads,
                               bool actors_on_io_threads);

/// A cluster node: loads CAF's middleman (BASP) and, with the TLS files,
/// caf-openssl (peers verified against the CA both ways); sets the BASP
/// heartbeat and the silence after which a link is closed; registers the
/// message types that cross nodes.
void apply_cluster_settings(caf::actor_system_config& cfg, const manager_cluster_options& c);

} // namespace actor_host::apps
