#pragma once

#include "actors/manager/manager.hpp"
#include "net/access_policy.hpp"

namespace actor_host {

/// The manager's listeners.
enum class listener { reflection, api, workers, rbac_workers };

/// One access policy per listener: the same Origin/Host rules everywhere;
/// the token as a header on the API, also as ?token= where runtimes and
/// workers dial in and on the dashboard's /api/ws (none of them can set a
/// header); the paths served without the token.
net::access_policy access_for(const manager_options& o, listener l);

} // namespace actor_host
