#pragma once

#include "obs/metrics_page.hpp"

#include <atomic>
#include <cstdint>

namespace actor_host {

/// Live actors by kind, for /api/__stats and leak checks in tests. Each
/// actor's state holds a `live_count` member, so the count follows the
/// state's lifetime exactly.
enum class actor_kind : int {
  runtime_directory,
  runtime_connection,
  pending_request,
  caller_session,
  manager_link,
  active_action,
  bidi_session,
  child_runtime,
  runtime_supervisor,
  manager_supervisor,
  function_registry,
  worker_connection,
  invocation,
  trigger_binding,
  channel,
  cluster_node,
  cluster_gateway,
  service_queue,
  cancel_broadcast,
  retry_relay,
  count_,
};

std::int64_t live_actors(actor_kind k);

/// Runtimes currently registered with this process's manager.
extern std::atomic<std::int64_t> registered_runtimes;
const char* actor_kind_name(actor_kind k);

/// Every kind's live count and the registered runtimes, for the metrics page.
obs::actor_snapshot live_actor_snapshot();

class live_count {
public:
  explicit live_count(actor_kind k);
  ~live_count();
  live_count(const live_count&) = delete;
  live_count& operator=(const live_count&) = delete;

private:
  actor_kind kind_;
};

} // namespace actor_host
