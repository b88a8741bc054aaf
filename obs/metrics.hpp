#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

/// Process-wide counters and histograms behind /metrics. Plain atomics with
/// relaxed ordering: recording must cost nothing next to a routed call, and a
/// scrape may see counters a few increments apart.
namespace actor_host::obs {

/// Reflection methods the manager sends to runtimes, as metric labels.
enum class rpc_method : int { list_actions, list_values, run_action, cancel_action, other, count_ };

rpc_method method_from_name(std::string_view name);
const char* method_label(rpc_method m);

/// Genkit status codes 0..16; 0 is the "ok" outcome.
inline constexpr int outcome_count = 17;

/// A fixed-bucket latency histogram (Prometheus cumulative buckets).
class latency_histogram {
public:
  static constexpr std::array<double, 14> bounds_seconds{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                         0.005,  0.01,    0.025,  0.05,  0.1,
                                                         0.25,   1,       5,      30};

  void observe(std::chrono::nanoseconds d) noexcept;

  /// Observations per bucket (not cumulative; the last one is +Inf).
  using counts = std::array<std::uint64_t, bounds_seconds.size() + 1>;

  /// Appends the _bucket/_sum/_count lines of `name{labels}`.
  void render(std::string& out, std::string_view name, std::string_view labels) const;

  /// Adds this histogram's bucket counts to `out` (a window is the
  /// difference of two such sums).
  void add_counts(counts& out) const noexcept;

private:
  std::array<std::atomic<std::uint64_t>, bounds_seconds.size() + 1> buckets_{};
  std::atomic<std::uint64_t> sum_ns_{0};
  std::atomic<std::uint64_t> count_{0};
};

/// Outcomes of iii invocations, as metric labels.
enum class invocation_outcome : int {
  ok,
  invocation_failed,
  invocation_stopped,
  function_not_found,
  timeout,
  forbidden,
  abandoned, // the caller went away first
  other,
  count_,
};

invocation_outcome invocation_outcome_from(std::string_view code);
const char* invocation_outcome_label(invocation_outcome o);

struct metrics {
  // Requests the manager sent to runtimes, by method and outcome code.
  std::array<std::array<std::atomic<std::uint64_t>, outcome_count>,
             static_cast<int>(rpc_method::count_)>
    requests{};
  std::array<latency_histogram, static_cast<int>(rpc_method::count_)> latency{};
  std::atomic<std::uint64_t> stream_chunks{0};
  std::atomic<std::uint64_t> input_chunks{0};
  // Child runtimes (services).
  std::atomic<std::uint64_t> child_starts{0};
  std::atomic<std::uint64_t> child_restarts{0};
  std::atomic<std::uint64_t> child_start_failures{0};
  std::atomic<std::int64_t> services_expected{0}; // services that must register
  std::atomic<std::int64_t> services_ready{0};
  // Lifecycle.
  std::atomic<bool> draining{false};
  std::atomic<std::uint64_t> drain_cancelled_calls{0};
  // TLS certificate reloads (SIGHUP), done and failed (the old ones stay).
  std::atomic<std::uint64_t> tls_reloads{0};
  std::atomic<std::uint64_t> tls_reload_failures{0};

  // Bounds (issue 11): calls whose caller left (forgotten at once), the
  // cancelActions sent for such runs, calls refused over
  // max_calls_per_caller, runs failed over max_bidi_input_bytes, and
  // sockets paused over max_unread_frames.
  std::atomic<std::uint64_t> abandoned_calls{0};
  std::atomic<std::uint64_t> abandoned_cancels{0};
  std::atomic<std::uint64_t> calls_over_cap{0};
  std::atomic<std::uint64_t> bidi_input_overflows{0};
  // gRPC calls ended RESOURCE_EXHAUSTED: their client did not read and
  // max_write_queue_bytes of responses waited.
  std::atomic<std::uint64_t> grpc_write_queue_overflows{0};
  // gRPC calls ended DEADLINE_EXCEEDED: no request message within
  // first_message_timeout.
  std::atomic<std::uint64_t> grpc_first_message_timeouts{0};
  // gRPC connections closed because their client reset calls faster than it
  // let them finish (max_client_resets).
  std::atomic<std::uint64_t> grpc_reset_closures{0};
  // Cluster failover hold (failover_hold.hpp): calls waiting now for a
  // runtime that is moving, calls held in all, held calls that ran out of
  // time, calls refused because the hold was full.
  std::atomic<std::int64_t> failover_held{0};
  std::atomic<std::uint64_t> failover_holds{0};
  std::atomic<std::uint64_t> failover_hold_expired{0};
  std::atomic<std::uint64_t> failover_hold_refused{0};
  std::atomic<std::uint64_t> read_pauses{0};
  std::atomic<std::uint64_t> read_pauses_long{0};
  std::atomic<std::int64_t> read_paused_sockets{0};

  // The manager's route spans (one per run with a trace store): on their
  // way to the trace keeper, and dropped because too many were.
  std::atomic<std::int64_t> route_spans_queued{0};
  std::atomic<std::uint64_t> route_spans_dropped{0};
  // Traces the trace store dropped over its retention limits (age or
  // size), and the times its running size was summed again because another
  // connection (another manager) wrote to its file.
  std::atomic<std::uint64_t> traces_dropped{0};
  std::atomic<std::uint64_t> trace_store_resyncs{0};
  // 1 while the default trace store (under the project root) could not be
  // opened and the manager runs without one.
  std::atomic<std::int64_t> trace_store_unavailable{0};

  // iii workers: invocations routed to workers, by outcome; telemetry frames
  // received on /otel (dropped: no sink is configured).
  std::array<std::atomic<std::uint64_t>, static_cast<int>(invocation_outcome::count_)>
    invocations{};
  latency_histogram invocation_latency;
  std::atomic<std::uint64_t> otel_frames{0};
  // iii streaming channels (open ones: the live channel actors).
  std::atomic<std::uint64_t> channel_frames{0};    // relayed writer -> reader
  std::atomic<std::uint64_t> channels_swept{0};    // unused until the sweep
  std::atomic<std::uint64_t> channel_overflows{0}; // ended: buffer full (frames or bytes)
  std::atomic<std::uint64_t> channels_refused{0};  // max_channels_per_worker reached
  // iii hardening: refused registrations (id of a live worker, reserved id),
  // bindings to functions the binder may not call, frames not valid JSON.
  std::atomic<std::uint64_t> iii_registrations_refused{0};
  std::atomic<std::uint64_t> iii_bindings_refused{0};
  std::atomic<std::uint64_t> iii_invalid_frames{0};
  // Runtime registrations: refused (the id's holder answers pings), and ids
  // handed to a new connection because the holder did not answer.
  std::atomic<std::uint64_t> runtime_register_refused{0};
  std::atomic<std::uint64_t> runtime_takeovers{0};
  // Route tables the runtime directory published (one per burst of changes).
  std::atomic<std::uint64_t> route_publishes{0};

  // Cluster (actors/cluster/): nodes by status (self excluded), membership
  // changes (joins, losses, rejoins), calls to other nodes' runtimes and
  // those failed because their node was lost, hellos refused (name in use,
  // version), and the round trip of calls to other nodes.
  std::atomic<std::int64_t> cluster_nodes_up{0};
  std::atomic<std::int64_t> cluster_nodes_unreachable{0};
  std::atomic<std::int64_t> cluster_nodes_down{0};
  std::atomic<std::int64_t> cluster_minority{0}; // 1: this node is on a minority side
  std::atomic<std::uint64_t> cluster_minority_changes{0};
  std::atomic<std::uint64_t> cluster_membership_changes{0};
  std::atomic<std::uint64_t> cluster_hellos_refused{0};
  std::atomic<std::uint64_t> cluster_dial_failures{0};
  std::atomic<std::uint64_t> cluster_non_caf_peers{0};
  std::atomic<std::uint64_t> cluster_oversized_messages{0};
  std::atomic<std::uint64_t> remote_calls{0};
  std::atomic<std::uint64_t> remote_calls_lost{0};
  // Calls in flight through this node's cluster gateway: made here for other
  // nodes, and made by other nodes for this one's runtimes and functions.
  std::atomic<std::int64_t> remote_calls_outbound{0};
  std::atomic<std::int64_t> remote_calls_inbound{0};
  // Of the outbound ones, the front doors' calls (not iii invocations): what
  // a per-call relay actor counted until the gateway became the calls' handle.
  std::atomic<std::int64_t> remote_calls_in_flight{0};
  latency_histogram remote_call_latency;
  // Services (actors/dispatch/service_queue): calls waiting for a replica
  // with room, refused because a service's queue was full, given up in a
  // queue at their deadline, and how long calls waited there.
  std::atomic<std::int64_t> service_calls_queued{0};
  std::atomic<std::uint64_t> service_calls_refused{0};
  std::atomic<std::uint64_t> service_queue_timeouts{0};
  latency_histogram service_queue_wait;
  std::atomic<std::uint64_t> replica_ejections{0};
  std::atomic<std::uint64_t> idempotent_retries{0};
  // Dashboard: sessions watching the feed, and watches refused over the cap.
  std::atomic<std::int64_t> dashboard_watchers{0};
  std::atomic<std::uint64_t> dashboard_watches_refused{0};

  void record_request(rpc_method m, int outcome_code, std::chrono::nanoseconds took) noexcept;
  /// `code`: "ok" or the iii error code the caller got.
  void record_invocation(std::string_view code, std::chrono::nanoseconds took) noexcept;
};

/// The q-quantile (0..1) in seconds of the observations in `c`, by linear
/// interpolation inside the bucket it falls in (as Prometheus'
/// histogram_quantile does); the +Inf bucket answers the largest bound.
/// Negative when `c` is empty.
double histogram_quantile(const latency_histogram::counts& c, double q) noexcept;

/// The one registry of this process.
metrics& global();

/// Escapes a label value for the text exposition format.
std::string label_value(std::string_view v);

} // namespace actor_host::obs
