#pragma once

#include "actions/action.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/http_exchange.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>

// The Reflection V1 server's messages: a block of their own (after the
// trace keeper's), so that the rest of the tree does not rebuild with them.
CAF_BEGIN_TYPE_ID_BLOCK(actor_host_v1, caf::first_custom_type_id + 600)
// (v1_run_atom, body, stream, responder)        POST /api/runAction[?stream=true]
CAF_ADD_ATOM(actor_host_v1, actor_host::v1_atoms, v1_run_atom, "v1run")
// (v1_cancel_atom, body, responder)             POST /api/cancelAction
CAF_ADD_ATOM(actor_host_v1, actor_host::v1_atoms, v1_cancel_atom, "v1cancel")
// (v1_gone_atom, request_id)                    the run's HTTP client went away
CAF_ADD_ATOM(actor_host_v1, actor_host::v1_atoms, v1_gone_atom, "v1gone")
// (v1_notify_atom, telemetry_server_url)        POST /api/notify
CAF_ADD_ATOM(actor_host_v1, actor_host::v1_atoms, v1_notify_atom, "v1notify")
CAF_END_TYPE_ID_BLOCK(actor_host_v1)

// Responders cross actor boundaries only inside one process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::net::http_responder_ptr)

namespace actor_host {

using namespace v1_atoms;

/// The X-Genkit-Version this runtime answers with (V1) and registers (V2).
inline constexpr const char* runtime_genkit_version = "cpp/" ACTOR_HOST_VERSION;

struct v1_reflection_state {
  struct run {
    caf::actor action;
    net::http_responder_ptr res; // null once answered or its client left
    std::string key;
    std::string trace_id;
    bool stream = false;
    bool started = false; // the head went out with the trace id
  };

  // Counted as the runtime's link: it is what V1 has in the manager_link's place.
  live_count live{actor_kind::manager_link};
  actions::catalog_ptr catalog;
  std::uint64_t next_run = 1;
  std::unordered_map<std::string, run> runs;           // by our request id
  std::unordered_map<std::string, std::string> by_trace; // trace id -> request id
  caf::actor spans; // span_exporter; null = no spans
  std::size_t max_runs = 1024;
  bool stopping = false;
  caf::response_promise stopped;
  static inline const char* name = "v1_reflection";

  /// Every way out, a kill included: unanswered clients get an answer and
  /// the runs go down with their server.
  ~v1_reflection_state();
};

/// The runtime's side of Reflection V1 (../shared/spec/REFLECTION_V1.md):
/// the routes that run something come here from the HTTP server (v1_routes);
/// each run is an active_action whose events this actor writes to the run's
/// HTTP response: the head with X-Genkit-Trace-Id as soon as the trace
/// starts, NDJSON chunks when streaming, then the final record ({result,
/// telemetry} or {error: Status}). A client that goes away cancels its run.
///
/// - (shutdown_atom) -> ok: cancels every run and answers once they are down
/// At most `max_runs` runs at once: more are answered 429 with a
/// RESOURCE_EXHAUSTED Status (each is one HTTP connection, but the cap does
/// not rest on the listener's).
caf::behavior v1_reflection(caf::stateful_actor<v1_reflection_state>* self,
                            actions::catalog_ptr catalog, caf::actor spans,
                            std::size_t max_runs);

} // namespace actor_host
