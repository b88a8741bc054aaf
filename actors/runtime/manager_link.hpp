#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "net/transport.hpp"
#include "actions/action.hpp"

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace actor_host {

/// Starts one connection attempt for `link` to the manager at `url` (one of
/// link_options::manager_urls); the link then receives (connected_atom,
/// transport_ptr) followed by its frames, or (connect_failed_atom, reason).
/// Injected so tests run without sockets.
using link_connector = std::function<void(const caf::actor& link, const std::string& url)>;

/// The most managers a link keeps (given and learned from register answers).
inline constexpr std::size_t max_manager_urls = 16;

struct link_options {
  std::string runtime_id;
  std::string name;
  std::int64_t pid = 0;
  /// The managers to dial, in order, tokens included (logged redacted). At
  /// least one. The other nodes a register answer lists (managerUrls) are
  /// added, with this list's token, up to max_manager_urls.
  std::vector<std::string> manager_urls;
  caf::timespan backoff_base{std::chrono::milliseconds(500)};
  caf::timespan backoff_max{std::chrono::seconds(5)};
  std::size_t max_bidi_input_bytes = 16u << 20; // unread input per bidi run; 0 = no cap
  caf::actor spans; // span_exporter (null: no spans); told the register reply's telemetryServerUrl
  /// A WebSocket ping this often; one unanswered by the next is a dead
  /// manager (hung, or cut off without a reset): its link is dropped and the
  /// next manager dialled. 0 = off (transports that cannot ping: tests).
  caf::timespan liveness_interval{0};
};

struct manager_link_state {
  struct run {
    caf::actor action;
    caf::actor bidi; // bidi_session, if any; owned by `action`, kept for routing
    std::string key; // the action's key, for errors
  };

  live_count live{actor_kind::manager_link};
  link_options opts;
  actions::catalog_ptr catalog;
  link_connector connect;
  net::transport_ptr transport; // null while disconnected
  std::uint64_t next_request_id = 1; // never reset, as in Genkit
  std::string register_id;           // raw id of our pending register
  unsigned attempt = 0;              // backoffs since the last open
  std::size_t manager = 0;           // index of the manager dialled or connected
  std::size_t failed_in_row = 0;     // managers that failed or dropped since the last open
  std::uint64_t link_generation = 0; // per connect: a probe of an older link is ignored
  bool ping_outstanding = false;     // the last liveness ping is unanswered
  bool stopping = false;
  caf::response_promise stopped;
  std::unordered_map<std::string, run> runs;             // by raw runAction id
  // Runs whose request id a newer runAction took over: no input reaches
  // them any more, but they are ours to cancel and wait for.
  std::unordered_map<caf::actor_addr, caf::actor> displaced;
  std::unordered_map<std::string, caf::actor> by_trace; // trace id -> active_action
  caf::behavior connecting;
  caf::behavior connected;
  caf::behavior waiting;
  static inline const char* name = "manager_link";

  /// The state dies on every way out, a crash or a kill included: the socket
  /// closes (the manager then fails what it sent us) and the runs go down,
  /// since their answers belonged to this connection.
  ~manager_link_state();
};

/// The runtime's side of the Reflection V2 link: dials the manager,
/// registers after every connect (keeping on reading while the register is
/// pending), reconnects with min(base x 2^n, max) backoff, and serves
/// listActions / listValues / runAction / cancelAction and bidi input.
/// Runs outlive a dropped link (their answers go to the next connection, as
/// the Go and JS runtimes do); open bidi inputs end when the link drops.
///
/// Spawned and restarted by the runtime_supervisor. Each run is an
/// active_action it monitors; a run that dies without answering gets an
/// INTERNAL error reply.
///
/// With several managers (cluster nodes), a link that drops or a dial that
/// fails goes to the next one at once; only when each has failed in a row
/// does the backoff apply. The same runtime id registers wherever it lands.
///
/// Named behaviors: connecting -> connected -> waiting -> connecting ...
/// - (shutdown_atom) -> ok: cancels every run, waits for them (and so for
///   their bidi sessions), closes the link
caf::behavior manager_link(caf::stateful_actor<manager_link_state>* self, link_options opts,
                           actions::catalog_ptr catalog, link_connector connect);

} // namespace actor_host
