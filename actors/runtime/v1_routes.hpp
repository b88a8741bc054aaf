#pragma once

#include "actions/action.hpp"
#include "net/http_exchange.hpp"

#include <caf/fwd.hpp>
#include <caf/actor.hpp>

#include <atomic>
#include <memory>
#include <string>

namespace actor_host {

/// The Reflection V1 HTTP API of the runtime role (../shared/spec/
/// REFLECTION_V1.md, the JS runtime's shapes): the cheap routes (__health,
/// actions, values, envs, notify, __quitquitquit) are answered on the I/O
/// thread from the immutable catalog; runAction and cancelAction go to
/// `hub`, the v1_reflection actor.
///
/// The runtime id is known only once the port is (<pid>-<port> by default):
/// requests before `ready` is set get 503.
struct v1_identity {
  std::string runtime_id; // written once, before `ready`
  std::atomic<bool> ready{false};
};

net::http_handler make_v1_routes(actions::catalog_ptr catalog, caf::actor hub,
                                 std::shared_ptr<const v1_identity> identity);

} // namespace actor_host
