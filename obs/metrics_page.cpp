#include "obs/metrics_page.hpp"

#include "net/socket_counters.hpp"
#include "obs/metrics.hpp"
#include "wire/status.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cctype>

namespace actor_host::obs {

std::int64_t actor_snapshot::live(std::string_view kind) const {
  for (auto& [name, n] : live_by_kind)
    if (name == kind)
      return n;
  return 0;
}

namespace {

class page {
public:
  void family(std::string_view name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  template <class T>
  void sample(std::string_view name, std::string_view labels, T value) {
    if (labels.empty())
      out_ += fmt::format("{} {}\n", name, value);
    else
      out_ += fmt::format("{}{{{}}} {}\n", name, labels, value);
  }
  template <class T>
  void single(std::string_view name, const char* type, const char* help, T value) {
    family(name, type, help);
    sample(name, {}, value);
  }
  std::string& text() {
    return out_;
  }

private:
  std::string out_;
};

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <class T>
auto load(const std::atomic<T>& a) {
  return a.load(std::memory_order_relaxed);
}

// --- the tables -------------------------------------------------------------

/// A gauge of live actors of one kind (names as in live_counts).
struct actor_gauge {
  const char* name;
  const char* kind;
  const char* help;
};

constexpr actor_gauge actor_gauges[] = {
  {"actor_host_callers_connected", "caller_session",
   "Caller sessions (API WebSockets and HTTP calls in progress)."},
  {"actor_host_pending_requests", "pending_request",
   "Requests sent to runtimes, not yet answered."},
  {"actor_host_bidi_sessions", "bidi_session",
   "Open bidi input streams (bidi_session actors of the runtime role)."},
  {"actor_host_active_actions", "active_action",
   "Actions running in this process (runtime role)."},
  {"actor_host_workers_connected", "worker_connection",
   "iii workers connected (worker_connection actors)."},
  {"actor_host_invocations_in_flight", "invocation",
   "iii invocations sent to workers, not yet answered."},
  {"actor_host_triggers_registered", "trigger_binding", "iii trigger bindings (live or parked)."},
  {"actor_host_iii_channels_open", "channel", "iii streaming channels open (channel actors)."},
};

/// A socket counter, one sample per listener.
template <class T>
struct socket_metric {
  const char* name;
  const char* type;
  const char* help;
  std::atomic<T> net::socket_counters::*member;
};

using sc = net::socket_counters;

constexpr socket_metric<std::int64_t> socket_gauges[] = {
  {"actor_host_websockets", "gauge", "Open WebSocket connections.", &sc::websockets},
  {"actor_host_http_connections", "gauge", "Open HTTP connections.", &sc::http_connections},
  {"actor_host_write_queue_bytes", "gauge",
   "Bytes queued for writing to sockets and not yet written.", &sc::queued_bytes},
  {"actor_host_response_bytes", "gauge",
   "Bytes HTTP responses hold (the piece being written included), against "
   "max_response_bytes_total.",
   &sc::response_bytes},
  {"actor_host_connections", "gauge",
   "Open connections (HTTP or WebSocket), against max_connections.", &sc::connections},
};

constexpr socket_metric<std::uint64_t> socket_counters[] = {
  {"actor_host_frames_in_total", "counter", "WebSocket messages read.", &sc::frames_in},
  {"actor_host_frames_out_total", "counter", "WebSocket messages written.", &sc::frames_out},
  {"actor_host_bytes_in_total", "counter", "WebSocket payload bytes read.", &sc::bytes_in},
  {"actor_host_bytes_out_total", "counter", "WebSocket payload bytes written.", &sc::bytes_out},
  {"actor_host_write_queue_overflows_total", "counter",
   "Peers dropped (WebSocket) or HTTP calls aborted because they did not drain their socket "
   "(max_write_queue_bytes).",
   &sc::write_queue_overflows},
  {"actor_host_response_budget_overflows_total", "counter",
   "HTTP calls aborted because their response would pass the bytes all responses of the "
   "listener may hold (max_response_bytes_total).",
   &sc::response_budget_overflows},
  {"actor_host_http_unanswered_total", "counter",
   "HTTP exchanges whose handler dropped them unfinished (a manager stopping): answered 503, "
   "or cut off when their response had begun.",
   &sc::unanswered_exchanges},
  {"actor_host_access_refused_total", "counter",
   "Requests and upgrades refused by the access policy (Origin, Host, token).",
   &sc::access_refused},
  {"actor_host_unsafe_headers_dropped_total", "counter",
   "Response headers dropped because their value had CR, LF or NUL.",
   &sc::unsafe_headers_dropped},
  {"actor_host_connections_refused_total", "counter",
   "Connections refused because max_connections were open.", &sc::connections_refused},
  {"actor_host_accept_errors_total", "counter",
   "Failed accepts (EMFILE: out of file descriptors).", &sc::accept_errors},
  {"actor_host_tls_handshake_failures_total", "counter",
   "TLS handshakes that failed or timed out (bad or missing client certificate).",
   &sc::tls_handshake_failures},
  {"actor_host_tls_plaintext_refused_total", "counter",
   "Plain HTTP connections refused on a TLS listener.", &sc::plaintext_refused},
};

/// A process-wide metric of obs::global().
template <class T>
struct global_metric {
  const char* name;
  const char* type;
  const char* help;
  std::atomic<T> metrics::*member;
};

constexpr global_metric<std::uint64_t> global_counters[] = {
  {"actor_host_stream_chunks_total", "counter", "Stream chunks relayed to callers.",
   &metrics::stream_chunks},
  {"actor_host_input_chunks_total", "counter", "Bidi input chunks relayed to runtimes.",
   &metrics::input_chunks},
  {"actor_host_tls_reloads_total", "counter", "TLS certificate reloads (SIGHUP).",
   &metrics::tls_reloads},
  {"actor_host_tls_reload_failures_total", "counter",
   "TLS reloads that failed (the certificates loaded before stay in use).",
   &metrics::tls_reload_failures},
  {"actor_host_runtime_register_refused_total", "counter",
   "Registrations refused: the id is held by a connection that answers pings.",
   &metrics::runtime_register_refused},
  {"actor_host_runtime_takeovers_total", "counter",
   "Ids handed to a new connection because the holder did not answer a ping.",
   &metrics::runtime_takeovers},
  {"actor_host_route_publishes_total", "counter",
   "Route tables the runtime directory published (one per burst of registrations and "
   "disconnects).",
   &metrics::route_publishes},
  {"actor_host_cluster_minority_changes_total", "counter",
   "Times this node went to a minority side of a partition or back.",
   &metrics::cluster_minority_changes},
  {"actor_host_cluster_membership_changes_total", "counter",
   "Cluster membership changes: nodes joined, lost, rejoined or replaced by a restart.",
   &metrics::cluster_membership_changes},
  {"actor_host_cluster_hellos_refused_total", "counter",
   "Nodes refused at join: node name held by a live node, or another protocol version.",
   &metrics::cluster_hellos_refused},
  {"actor_host_cluster_dial_failures_total", "counter",
   "Attempts to reach a seed or member that failed (refused, no CAF peer, TLS).",
   &metrics::cluster_dial_failures},
  {"actor_host_cluster_non_caf_peers_total", "counter",
   "Connections to the cluster port dropped: they did not start with a CAF handshake.",
   &metrics::cluster_non_caf_peers},
  {"actor_host_cluster_oversized_messages_total", "counter",
   "Cluster connections closed: a BASP header announced a payload over the cap (the buffer "
   "is never sized).",
   &metrics::cluster_oversized_messages},
  {"actor_host_remote_calls_total", "counter",
   "Calls (and iii invocations) from this node to other cluster nodes.", &metrics::remote_calls},
  {"actor_host_remote_calls_lost_total", "counter",
   "Calls to other nodes failed with UNAVAILABLE because the node was lost.",
   &metrics::remote_calls_lost},
  {"actor_host_otel_frames_total", "counter",
   "Telemetry frames received from iii workers on /otel (dropped: no sink).",
   &metrics::otel_frames},
  {"actor_host_iii_channel_frames_total", "counter",
   "Frames relayed from channel writers to readers.", &metrics::channel_frames},
  {"actor_host_iii_channels_swept_total", "counter",
   "Channels removed because both ends had not connected in time.", &metrics::channels_swept},
  {"actor_host_iii_channel_overflows_total", "counter",
   "Channels ended because the writer overran the buffer before a reader came.",
   &metrics::channel_overflows},
  {"actor_host_iii_channels_refused_total", "counter",
   "engine::channels::create calls refused: max_channels_per_worker reached.",
   &metrics::channels_refused},
  {"actor_host_iii_registrations_refused_total", "counter",
   "Function or trigger type registrations refused: id of another live worker, or reserved.",
   &metrics::iii_registrations_refused},
  {"actor_host_iii_bindings_refused_total", "counter",
   "Trigger bindings refused: the binder's session may not call the function.",
   &metrics::iii_bindings_refused},
  {"actor_host_iii_invalid_frames_total", "counter",
   "Worker frames refused because they are not valid JSON.", &metrics::iii_invalid_frames},
  {"actor_host_child_starts_total", "counter", "Child runtime processes started.",
   &metrics::child_starts},
  {"actor_host_child_restarts_total", "counter",
   "Child runtimes restarted by their restart policy.", &metrics::child_restarts},
  {"actor_host_child_start_failures_total", "counter",
   "Child runtimes that could not be started (exec failed).", &metrics::child_start_failures},
  {"actor_host_drain_cancelled_calls_total", "counter",
   "Calls cancelled because they outlived the drain timeout.", &metrics::drain_cancelled_calls},
  {"actor_host_abandoned_calls_total", "counter",
   "Calls whose caller went away before the answer; forgotten at once.",
   &metrics::abandoned_calls},
  {"actor_host_route_spans_dropped_total", "counter",
   "Route spans not stored: the trace keeper was too far behind (max_route_spans_queued).",
   &metrics::route_spans_dropped},
  {"actor_host_traces_dropped_total", "counter",
   "Traces the trace store dropped: older than trace_max_age, or the oldest while it held more "
   "than trace_max_bytes.",
   &metrics::traces_dropped},
  {"actor_host_trace_store_resyncs_total", "counter",
   "Times the trace store summed its size again because another connection wrote to its file.",
   &metrics::trace_store_resyncs},
  {"actor_host_abandoned_cancels_total", "counter",
   "cancelAction requests sent for runs nobody waits for any more.",
   &metrics::abandoned_cancels},
  {"actor_host_dashboard_watches_refused_total", "counter",
   "Dashboard watches refused: the feed had its maximum of watchers.",
   &metrics::dashboard_watches_refused},
  {"actor_host_calls_over_cap_total", "counter",
   "Calls refused because their caller had max_calls_per_caller in flight.",
   &metrics::calls_over_cap},
  {"actor_host_bidi_input_overflows_total", "counter",
   "Runs failed because bidi input held before they started exceeded max_bidi_input_bytes.",
   &metrics::bidi_input_overflows},
  {"actor_host_grpc_write_queue_overflows_total", "counter",
   "gRPC calls ended RESOURCE_EXHAUSTED because their client did not read and "
   "max_write_queue_bytes of responses waited; their runs are cancelled.",
   &metrics::grpc_write_queue_overflows},
  {"actor_host_grpc_first_message_timeouts_total", "counter",
   "gRPC calls ended DEADLINE_EXCEEDED because their first request message did not come within "
   "first_message_timeout.",
   &metrics::grpc_first_message_timeouts},
  {"actor_host_grpc_reset_closures_total", "counter",
   "gRPC connections closed because their client cancelled more than max_client_resets calls "
   "beyond those it let finish (HTTP/2 rapid reset).",
   &metrics::grpc_reset_closures},
  {"actor_host_failover_holds_total", "counter",
   "Calls for a runtime of a lost cluster node that waited for it to register at another node.",
   &metrics::failover_holds},
  {"actor_host_failover_hold_expired_total", "counter",
   "Held calls that failed because their runtime did not come back within failover_hold (or "
   "their own deadline passed).",
   &metrics::failover_hold_expired},
  {"actor_host_failover_hold_refused_total", "counter",
   "Calls that failed at once because the failover hold was full.",
   &metrics::failover_hold_refused},
  {"actor_host_read_pauses_total", "counter",
   "Times a socket stopped being read because its actor had max_unread_frames unprocessed.",
   &metrics::read_pauses},
  {"actor_host_read_pauses_long_total", "counter", "Read pauses that lasted longer than 5 s.",
   &metrics::read_pauses_long},
  {"actor_host_service_calls_refused_total", "counter",
   "Calls refused RESOURCE_EXHAUSTED (HTTP 429): every replica of the service was at "
   "max_inflight_per_runtime and its queue held max_queued_per_service.",
   &metrics::service_calls_refused},
  {"actor_host_replica_ejections_total", "counter",
   "Replicas taken out of balanced calls after consecutive UNAVAILABLE, INTERNAL or "
   "DEADLINE_EXCEEDED answers (outlier detection).",
   &metrics::replica_ejections},
  {"actor_host_idempotent_retries_total", "counter",
   "Runs of retry_idempotent actions run again on another replica after UNAVAILABLE.",
   &metrics::idempotent_retries},
  {"actor_host_service_queue_timeouts_total", "counter",
   "Calls that reached their deadline while waiting in a service's queue.",
   &metrics::service_queue_timeouts},
};

constexpr global_metric<std::int64_t> global_gauges[] = {
  {"actor_host_failover_held", "gauge",
   "Calls waiting now for a runtime of a lost cluster node to register at another node.",
   &metrics::failover_held},
  {"actor_host_service_calls_queued", "gauge",
   "Calls waiting in services' queues for a replica with room.", &metrics::service_calls_queued},
  {"actor_host_services_expected", "gauge", "Configured services that must register.",
   &metrics::services_expected},
  {"actor_host_services_ready", "gauge", "Configured services currently registered.",
   &metrics::services_ready},
  {"actor_host_route_spans_queued", "gauge",
   "Route spans on their way to the trace keeper.", &metrics::route_spans_queued},
  {"actor_host_trace_store_unavailable", "gauge",
   "1: the default trace store under the project root could not be opened; no traces are kept.",
   &metrics::trace_store_unavailable},
  {"actor_host_read_paused_sockets", "gauge",
   "Sockets not being read right now (their actor is behind).", &metrics::read_paused_sockets},
  {"actor_host_cluster_minority", "gauge",
   "1: this node reaches half or fewer of the cluster's nodes (keep-majority): not ready, "
   "calls for other nodes' runtimes fail at once.",
   &metrics::cluster_minority},
  {"actor_host_remote_calls_in_flight", "gauge",
   "Calls from this node to runtimes on other cluster nodes, not yet answered.",
   &metrics::remote_calls_in_flight},
  {"actor_host_gateway_calls_outbound", "gauge",
   "Calls made on this node to other cluster nodes, in flight through its gateway.",
   &metrics::remote_calls_outbound},
  {"actor_host_gateway_calls_inbound", "gauge",
   "Calls other cluster nodes made to this node's runtimes and functions, in flight.",
   &metrics::remote_calls_inbound},
  {"actor_host_dashboard_watchers", "gauge",
   "Sessions on /api/ws watching the dashboard feed.", &metrics::dashboard_watchers},
};

constexpr global_metric<std::int64_t> cluster_node_gauges[] = {
  {"up", nullptr, nullptr, &metrics::cluster_nodes_up},
  {"unreachable", nullptr, nullptr, &metrics::cluster_nodes_unreachable},
  {"down", nullptr, nullptr, &metrics::cluster_nodes_down},
};

template <class T, std::size_t N>
void socket_families(page& p, const socket_metric<T> (&table)[N],
                     std::initializer_list<listener_counters> listeners) {
  for (auto& m : table) {
    p.family(m.name, m.type, m.help);
    for (auto& l : listeners)
      p.sample(m.name, fmt::format("listener=\"{}\"", l.name), load(l.counters->*m.member));
  }
}

template <class T, std::size_t N>
void global_singles(page& p, const global_metric<T> (&table)[N]) {
  auto& g = global();
  for (auto& m : table)
    p.single(m.name, m.type, m.help, load(g.*m.member));
}

} // namespace

std::string metrics_page(const actor_snapshot& actors,
                         std::initializer_list<listener_counters> listeners) {
  auto& m = global();
  page p;
  p.single("actor_host_runtimes_connected", "gauge", "Runtimes registered with this manager.",
           actors.runtimes_registered);
  for (auto& g : actor_gauges)
    p.single(g.name, "gauge", g.help, actors.live(g.kind));
  p.family("actor_host_live_actors", "gauge", "Live actors by kind.");
  for (auto& [kind, n] : actors.live_by_kind)
    p.sample("actor_host_live_actors", fmt::format("kind=\"{}\"", kind), n);

  p.family("actor_host_requests_total", "counter",
           "Requests routed to runtimes, by method and outcome (ok or the Status name).");
  for (int mi = 0; mi < static_cast<int>(rpc_method::count_); ++mi) {
    for (int code = 0; code < outcome_count; ++code) {
      auto n = load(m.requests[mi][code]);
      if (n == 0)
        continue;
      auto outcome = code == 0 ? std::string{"ok"} : lower(wire::status_name(code));
      p.sample("actor_host_requests_total",
               fmt::format("method=\"{}\",outcome=\"{}\"",
                           method_label(static_cast<rpc_method>(mi)), outcome),
               n);
    }
  }
  p.family("actor_host_request_duration_seconds", "histogram",
           "Time from sending a request to a runtime to its answer (whole stream for runAction).");
  for (int mi = 0; mi < static_cast<int>(rpc_method::count_); ++mi)
    m.latency[mi].render(p.text(), "actor_host_request_duration_seconds",
                         fmt::format("method=\"{}\"", method_label(static_cast<rpc_method>(mi))));

  p.family("actor_host_invocations_total", "counter",
           "iii invocations routed to workers, by outcome (ok or the iii error code).");
  for (int i = 0; i < static_cast<int>(invocation_outcome::count_); ++i)
    p.sample("actor_host_invocations_total",
             fmt::format("outcome=\"{}\"",
                         invocation_outcome_label(static_cast<invocation_outcome>(i))),
             load(m.invocations[i]));
  p.family("actor_host_invocation_duration_seconds", "histogram",
           "Time from routing an iii invocation to its answer.");
  m.invocation_latency.render(p.text(), "actor_host_invocation_duration_seconds", {});

  p.family("actor_host_service_queue_wait_seconds", "histogram",
           "Time calls waited in a service's queue before a replica took them.");
  m.service_queue_wait.render(p.text(), "actor_host_service_queue_wait_seconds", {});

  p.family("actor_host_remote_call_duration_seconds", "histogram",
           "Round trip of calls to runtimes on other cluster nodes, from hand-off to answer.");
  m.remote_call_latency.render(p.text(), "actor_host_remote_call_duration_seconds", {});
  p.family("actor_host_cluster_nodes", "gauge", "Other cluster nodes known here, by status.");
  for (auto& g : cluster_node_gauges)
    p.sample("actor_host_cluster_nodes", fmt::format("status=\"{}\"", g.name),
             load(m.*g.member));

  socket_families(p, socket_gauges, listeners);
  socket_families(p, socket_counters, listeners);
  global_singles(p, global_counters);
  global_singles(p, global_gauges);
  p.single("actor_host_draining", "gauge", "1 while the manager drains before shutting down.",
           load(m.draining) ? 1 : 0);
  return std::move(p.text());
}

} // namespace actor_host::obs
