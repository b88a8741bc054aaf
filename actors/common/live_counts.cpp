#include "actors/common/live_counts.hpp"

#include <array>

namespace actor_host {

namespace {

std::array<std::atomic<std::int64_t>, static_cast<std::size_t>(actor_kind::count_)> counts{};

} // namespace

std::atomic<std::int64_t> registered_runtimes{0};

std::int64_t live_actors(actor_kind k) {
  return counts[static_cast<std::size_t>(k)].load(std::memory_order_relaxed);
}

const char* actor_kind_name(actor_kind k) {
  switch (k) {
    case actor_kind::runtime_directory: return "runtime_directory";
    case actor_kind::runtime_connection: return "runtime_connection";
    case actor_kind::pending_request: return "pending_request";
    case actor_kind::caller_session: return "caller_session";
    case actor_kind::manager_link: return "manager_link";
    case actor_kind::active_action: return "active_action";
    case actor_kind::bidi_session: return "bidi_session";
    case actor_kind::child_runtime: return "child_runtime";
    case actor_kind::runtime_supervisor: return "runtime_supervisor";
    case actor_kind::manager_supervisor: return "manager_supervisor";
    case actor_kind::function_registry: return "function_registry";
    case actor_kind::worker_connection: return "worker_connection";
    case actor_kind::invocation: return "invocation";
    case actor_kind::trigger_binding: return "trigger_binding";
    case actor_kind::channel: return "channel";
    case actor_kind::cluster_node: return "cluster_node";
    case actor_kind::cluster_gateway: return "cluster_gateway";
    case actor_kind::service_queue: return "service_queue";
    case actor_kind::cancel_broadcast: return "cancel_broadcast";
    case actor_kind::retry_relay: return "retry_relay";
    case actor_kind::count_: break;
  }
  return "?";
}

obs::actor_snapshot live_actor_snapshot() {
  obs::actor_snapshot out;
  for (int k = 0; k < static_cast<int>(actor_kind::count_); ++k) {
    auto kind = static_cast<actor_kind>(k);
    out.live_by_kind.emplace_back(actor_kind_name(kind), live_actors(kind));
  }
  out.runtimes_registered = registered_runtimes.load(std::memory_order_relaxed);
  return out;
}

live_count::live_count(actor_kind k) : kind_(k) {
  counts[static_cast<std::size_t>(k)].fetch_add(1, std::memory_order_relaxed);
}

live_count::~live_count() {
  counts[static_cast<std::size_t>(kind_)].fetch_sub(1, std::memory_order_relaxed);
}

} // namespace actor_host
