#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "actors/runtime/manager_link.hpp"

#include <chrono>
#include <deque>
#include <vector>

namespace actor_host {

/// How many times the supervisor restarts a failed manager_link: a failure
/// that would be restart number `max_restarts + 1` within `window` makes it
/// give up instead. A link that crashes right after every start would
/// otherwise spin forever while looking alive.
struct restart_limit {
  unsigned max_restarts = 5;
  caf::timespan window{std::chrono::minutes(1)};
};

struct runtime_supervisor_state {
  live_count live{actor_kind::runtime_supervisor};
  link_options opts;
  actions::catalog_ptr catalog;
  link_connector connect;
  restart_limit limit;
  caf::actor link; // the current manager_link; null once it is gone for good
  std::deque<caf::actor_clock::time_point> restarts; // those within `limit.window`
  std::vector<caf::response_promise> stopped;        // one per shutdown request
  caf::behavior running;
  caf::behavior stopping;
  static inline const char* name = "runtime_supervisor";

  /// The state dies on every way out, a kill included: the link goes with it.
  ~runtime_supervisor_state();
};

/// Root of the runtime role's tree:
///
///     runtime_supervisor -> manager_link -> active_action -> bidi_session
///
/// Spawns and monitors the manager_link. A link that ends without being
/// asked to (a crash, a kill) is logged and restarted with fresh state; its
/// runs go down with it, as their answers belonged to its connection. More
/// than `limit.max_restarts` restarts within `limit.window` and the
/// supervisor gives up: it logs that and exits with the link's exit reason,
/// so whoever watches it (runtime.cpp) can end the process.
///
/// Named behaviors: running -> stopping.
/// - (shutdown_atom) -> ok: stops the link gracefully (its runs are cancelled
///   and awaited) and answers once the link, and so every actor below it, is
///   down; the supervisor then exits normally.
caf::behavior runtime_supervisor(caf::stateful_actor<runtime_supervisor_state>* self,
                                 link_options opts, actions::catalog_ptr catalog,
                                 link_connector connect, restart_limit limit);

} // namespace actor_host
