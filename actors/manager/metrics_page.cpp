#include "actors/manager/metrics_page.hpp"

#include "actors/common/live_counts.hpp"
#include "actors/manager/admission_counters.hpp"
#include "net/socket_counters.hpp"
#include "obs/metrics.hpp"
#include "registry/status.hpp"

#include <fmt/format.h>

#include <cctype>

namespace actor_host {

namespace {

class page {
public:
  void family(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  template <class T>
  void sample(const char* name, std::string_view labels, T value) {
    if (labels.empty())
      out_ += fmt::format("{} {}\n", name, value);
    else
      out_ += fmt::format("{}{{{}}} {}\n", name, labels, value);
  }
  template <class T>
  void single(const char* name, const char* type, const char* help, T value) {
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

void socket_family(page& p, const char* name, const char* type, const char* help,
                   std::int64_t reflection, std::int64_t api, std::int64_t worker) {
  p.family(name, type, help);
  p.sample(name, R"(listener="reflection")", reflection);
  p.sample(name, R"(listener="api")", api);
  p.sample(name, R"(listener="worker")", worker);
}

} // namespace

std::string metrics_page(const net::socket_counters& rc, const net::socket_counters& ac,
                         const net::socket_counters& wc) {
  auto& m = obs::global();
  auto ld = [](auto& a) { return static_cast<std::int64_t>(a.load(std::memory_order_relaxed)); };
  page p;
  p.single("actor_host_runtimes_connected", "gauge", "Runtimes registered with this manager.",
           registered_runtimes.load());
  p.single("actor_host_callers_connected", "gauge",
           "Caller sessions (API WebSockets and HTTP calls in progress).",
           live_actors(actor_kind::caller_session));
  p.single("actor_host_pending_requests", "gauge", "Requests sent to runtimes, not yet answered.",
           live_actors(actor_kind::pending_request));
  p.single("actor_host_bidi_sessions", "gauge", "Open bidi input streams (bidi_session actors of the runtime role).",
           live_actors(actor_kind::bidi_session));
  p.single("actor_host_active_actions", "gauge", "Actions running in this process (runtime role).",
           live_actors(actor_kind::active_action));
  p.family("actor_host_live_actors", "gauge", "Live actors by kind.");
  for (int k = 0; k < static_cast<int>(actor_kind::count_); ++k) {
    auto kind = static_cast<actor_kind>(k);
    p.sample("actor_host_live_actors", fmt::format("kind=\"{}\"", actor_kind_name(kind)),
             live_actors(kind));
  }
  p.family("actor_host_requests_total", "counter",
           "Requests routed to runtimes, by method and outcome (ok or the Status name).");
  for (int mi = 0; mi < static_cast<int>(obs::rpc_method::count_); ++mi) {
    for (int code = 0; code < obs::outcome_count; ++code) {
      auto n = m.requests[mi][code].load(std::memory_order_relaxed);
      if (n == 0)
        continue;
      auto outcome = code == 0 ? std::string{"ok"} : lower(registry::status_name(code));
      p.sample("actor_host_requests_total",
               fmt::format("method=\"{}\",outcome=\"{}\"",
                           obs::method_label(static_cast<obs::rpc_method>(mi)), outcome),
               n);
    }
  }
  p.family("actor_host_request_duration_seconds", "histogram",
           "Time from sending a request to a runtime to its answer (whole stream for runAction).");
  for (int mi = 0; mi < static_cast<int>(obs::rpc_method::count_); ++mi)
    m.latency[mi].render(
      p.text(), "actor_host_request_duration_seconds",
      fmt::format("method=\"{}\"", obs::method_label(static_cast<obs::rpc_method>(mi))));
  p.single("actor_host_stream_chunks_total", "counter", "Stream chunks relayed to callers.",
           ld(m.stream_chunks));
  p.single("actor_host_input_chunks_total", "counter", "Bidi input chunks relayed to runtimes.",
           ld(m.input_chunks));
  socket_family(p, "actor_host_websockets", "gauge", "Open WebSocket connections.",
                ld(rc.websockets), ld(ac.websockets), ld(wc.websockets));
  socket_family(p, "actor_host_http_connections", "gauge", "Open HTTP connections.",
                ld(rc.http_connections), ld(ac.http_connections), ld(wc.http_connections));
  socket_family(p, "actor_host_frames_in_total", "counter", "WebSocket messages read.",
                ld(rc.frames_in), ld(ac.frames_in), ld(wc.frames_in));
  socket_family(p, "actor_host_frames_out_total", "counter", "WebSocket messages written.",
                ld(rc.frames_out), ld(ac.frames_out), ld(wc.frames_out));
  socket_family(p, "actor_host_bytes_in_total", "counter", "WebSocket payload bytes read.",
                ld(rc.bytes_in), ld(ac.bytes_in), ld(wc.bytes_in));
  socket_family(p, "actor_host_bytes_out_total", "counter", "WebSocket payload bytes written.",
                ld(rc.bytes_out), ld(ac.bytes_out), ld(wc.bytes_out));
  socket_family(p, "actor_host_write_queue_bytes", "gauge",
                "Bytes queued for writing to sockets and not yet written.", ld(rc.queued_bytes),
                ld(ac.queued_bytes), ld(wc.queued_bytes));
  socket_family(p, "actor_host_write_queue_overflows_total", "counter",
                "Peers dropped (WebSocket) or HTTP calls aborted because they did not drain their socket (max_write_queue_bytes).",
                ld(rc.write_queue_overflows), ld(ac.write_queue_overflows), ld(wc.write_queue_overflows));
  socket_family(p, "actor_host_access_refused_total", "counter",
                "Requests and upgrades refused by the access policy (Origin, Host, token).",
                ld(rc.access_refused), ld(ac.access_refused), ld(wc.access_refused));
  socket_family(p, "actor_host_unsafe_headers_dropped_total", "counter",
                "Response headers dropped because their value had CR, LF or NUL.",
                ld(rc.unsafe_headers_dropped), ld(ac.unsafe_headers_dropped),
                ld(wc.unsafe_headers_dropped));
  socket_family(p, "actor_host_connections", "gauge",
                "Open connections (HTTP or WebSocket), against max_connections.",
                ld(rc.connections), ld(ac.connections), ld(wc.connections));
  socket_family(p, "actor_host_connections_refused_total", "counter",
                "Connections refused because max_connections were open.",
                ld(rc.connections_refused), ld(ac.connections_refused),
                ld(wc.connections_refused));
  socket_family(p, "actor_host_accept_errors_total", "counter",
                "Failed accepts (EMFILE: out of file descriptors).", ld(rc.accept_errors),
                ld(ac.accept_errors), ld(wc.accept_errors));
  socket_family(p, "actor_host_tls_handshake_failures_total", "counter",
                "TLS handshakes that failed or timed out (bad or missing client certificate).",
                ld(rc.tls_handshake_failures), ld(ac.tls_handshake_failures),
                ld(wc.tls_handshake_failures));
  socket_family(p, "actor_host_tls_plaintext_refused_total", "counter",
                "Plain HTTP connections refused on a TLS listener.", ld(rc.plaintext_refused),
                ld(ac.plaintext_refused), ld(wc.plaintext_refused));
  p.single("actor_host_tls_reloads_total", "counter", "TLS certificate reloads (SIGHUP).",
           ld(m.tls_reloads));
  p.single("actor_host_tls_reload_failures_total", "counter",
           "TLS reloads that failed (the certificates loaded before stay in use).",
           ld(m.tls_reload_failures));
  p.single("actor_host_workers_connected", "gauge", "iii workers connected (worker_connection actors).",
           live_actors(actor_kind::worker_connection));
  p.single("actor_host_invocations_in_flight", "gauge",
           "iii invocations sent to workers, not yet answered.",
           live_actors(actor_kind::invocation));
  p.single("actor_host_triggers_registered", "gauge", "iii trigger bindings (live or parked).",
           live_actors(actor_kind::trigger_binding));
  p.family("actor_host_invocations_total", "counter",
           "iii invocations routed to workers, by outcome (ok or the iii error code).");
  for (int i = 0; i < static_cast<int>(obs::invocation_outcome::count_); ++i)
    p.sample("actor_host_invocations_total",
             fmt::format("outcome=\"{}\"",
                         obs::invocation_outcome_label(static_cast<obs::invocation_outcome>(i))),
             m.invocations[i].load(std::memory_order_relaxed));
  p.family("actor_host_invocation_duration_seconds", "histogram",
           "Time from routing an iii invocation to its answer.");
  m.invocation_latency.render(p.text(), "actor_host_invocation_duration_seconds", {});
  p.single("actor_host_runtime_register_refused_total", "counter",
           "Registrations refused: the id is held by a connection that answers pings.",
           ld(runtime_register_refused));
  p.single("actor_host_runtime_takeovers_total", "counter",
           "Ids handed to a new connection because the holder did not answer a ping.",
           ld(runtime_takeovers));
  p.single("actor_host_otel_frames_total", "counter",
           "Telemetry frames received from iii workers on /otel (dropped: no sink).",
           ld(m.otel_frames));
  p.single("actor_host_iii_channels_open", "gauge",
           "iii streaming channels open (channel actors).", live_actors(actor_kind::channel));
  p.single("actor_host_iii_channel_frames_total", "counter",
           "Frames relayed from channel writers to readers.", ld(m.channel_frames));
  p.single("actor_host_iii_channels_swept_total", "counter",
           "Channels removed because both ends had not connected in time.",
           ld(m.channels_swept));
  p.single("actor_host_iii_channel_overflows_total", "counter",
           "Channels ended because the writer overran the buffer before a reader came.",
           ld(m.channel_overflows));
  p.single("actor_host_iii_channels_refused_total", "counter",
           "engine::channels::create calls refused: max_channels_per_worker reached.",
           ld(m.channels_refused));
  p.single("actor_host_iii_registrations_refused_total", "counter",
           "Function or trigger type registrations refused: id of another live worker, or "
           "reserved.",
           ld(m.iii_registrations_refused));
  p.single("actor_host_iii_bindings_refused_total", "counter",
           "Trigger bindings refused: the binder's session may not call the function.",
           ld(m.iii_bindings_refused));
  p.single("actor_host_iii_invalid_frames_total", "counter",
           "Worker frames refused because they are not valid JSON.", ld(m.iii_invalid_frames));
  p.single("actor_host_services_expected", "gauge", "Configured services that must register.",
           ld(m.services_expected));
  p.single("actor_host_services_ready", "gauge", "Configured services currently registered.",
           ld(m.services_ready));
  p.single("actor_host_child_starts_total", "counter", "Child runtime processes started.",
           ld(m.child_starts));
  p.single("actor_host_child_restarts_total", "counter",
           "Child runtimes restarted by their restart policy.", ld(m.child_restarts));
  p.single("actor_host_child_start_failures_total", "counter",
           "Child runtimes that could not be started (exec failed).", ld(m.child_start_failures));
  p.single("actor_host_draining", "gauge", "1 while the manager drains before shutting down.",
           m.draining.load() ? 1 : 0);
  p.single("actor_host_drain_cancelled_calls_total", "counter",
           "Calls cancelled because they outlived the drain timeout.",
           ld(m.drain_cancelled_calls));
  p.single("actor_host_abandoned_calls_total", "counter",
           "Calls whose caller went away before the answer; forgotten at once.",
           ld(m.abandoned_calls));
  p.single("actor_host_abandoned_cancels_total", "counter",
           "cancelAction requests sent for runs nobody waits for any more.",
           ld(m.abandoned_cancels));
  p.single("actor_host_calls_over_cap_total", "counter",
           "Calls refused because their caller had max_calls_per_caller in flight.",
           ld(m.calls_over_cap));
  p.single("actor_host_bidi_input_overflows_total", "counter",
           "Runs failed because bidi input held before they started exceeded "
           "max_bidi_input_bytes.",
           ld(m.bidi_input_overflows));
  p.single("actor_host_read_pauses_total", "counter",
           "Times a socket stopped being read because its actor had max_unread_frames "
           "unprocessed.",
           ld(m.read_pauses));
  p.single("actor_host_read_pauses_long_total", "counter",
           "Read pauses that lasted longer than 5 s.", ld(m.read_pauses_long));
  p.single("actor_host_read_paused_sockets", "gauge",
           "Sockets not being read right now (their actor is behind).",
           ld(m.read_paused_sockets));
  return std::move(p.text());
}

} // namespace actor_host
