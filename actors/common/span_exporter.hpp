#pragma once

#include "actors/common/live_counts.hpp"
#include "net/http_post.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>

// The span exporter's messages: a block of their own.
CAF_BEGIN_TYPE_ID_BLOCK(actor_host_spans, caf::first_custom_type_id + 650)
// (span_atom, trace_data_json)                  an ended run's span
CAF_ADD_ATOM(actor_host_spans, actor_host::span_atoms, span_atom, "span")
// (span_target_atom, telemetry_server_url)      where spans go from now on ("" = nowhere)
CAF_ADD_ATOM(actor_host_spans, actor_host::span_atoms, span_target_atom, "spantarget")
// (span_sent_atom, status, error)               its own: one POST ended
CAF_ADD_ATOM(actor_host_spans, actor_host::span_atoms, span_sent_atom, "spansent")
CAF_END_TYPE_ID_BLOCK(actor_host_spans)

namespace actor_host {

using namespace span_atoms;

/// Sends one POST and reports its outcome through the callback, from any
/// thread. net::http_post in the process; a recorder in tests.
using span_poster
  = std::function<void(const std::string& url, std::string body,
                       std::function<void(net::post_outcome)> done)>;

struct span_exporter_options {
  std::size_t max_queued = 256; // spans waiting; beyond, new ones are dropped
  unsigned max_in_flight = 4;   // POSTs at once
  /// Appended to the server's URL: Genkit's telemetry server, or "/v1/traces"
  /// of an OpenTelemetry collector (OTLP/HTTP JSON).
  std::string path = "/api/traces";
};

struct span_exporter_state {
  std::string url; // the telemetry server; "" = spans are dropped quietly
  bool pinned = false; // given by the environment: what the peers say is ignored
  span_poster post;
  span_exporter_options limits;
  std::deque<std::string> queued;
  unsigned in_flight = 0;
  std::uint64_t sent = 0;
  std::uint64_t dropped = 0; // queue full
  std::uint64_t failed = 0;  // the server refused or was unreachable
  static inline const char* name = "span_exporter";
};

/// Exports the spans of the runtime's runs to the telemetry server, as
/// Genkit runtimes do (POST <url>/api/traces, one TraceData each): the
/// manager's trace store, or `genkit start`'s telemetry server; and the
/// manager's spans to an OpenTelemetry collector (`--otlp-endpoint`, the
/// bodies OTLP JSON, path /v1/traces). Bounded:
/// at most `max_in_flight` POSTs and `max_queued` waiting; past that, and
/// when the server fails, spans are dropped with a log line (the first and
/// every 100th), never retried, never waited for by a run. A `url` given at
/// spawn (GENKIT_TELEMETRY_SERVER) wins over later span_target_atoms, as in
/// the JS runtime.
caf::behavior span_exporter(caf::stateful_actor<span_exporter_state>* self, std::string url,
                            span_poster post, span_exporter_options limits);

/// The process's poster: net::http_post with a 10 s timeout.
span_poster http_span_poster(net::io_runtime& io);

} // namespace actor_host
