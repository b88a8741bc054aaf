#pragma once

#include "net/liveness.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace actor_host::net {

class io_runtime;

struct v1_link_options {
  std::string runtime_id;
  std::string url; // the runtime file's reflectionServerUrl (http://host:port)
  /// The `register` params the link hands its owner first (from the file).
  std::string register_params;
  /// Posted to /api/notify once registered, as Genkit's CLI does; "" = not.
  std::string telemetry_url;
  std::chrono::milliseconds health_interval{5000}; // as the CLI
  std::chrono::milliseconds request_timeout{30000}; // listings, cancel, health
  /// A cancelled run whose answer has not come after this is answered
  /// CANCELLED here and its exchange closed.
  std::chrono::milliseconds cancel_grace{10000};
  std::size_t max_answer_bytes = 8u << 20; // per answer, or per record of a stream
  std::size_t max_exchanges = 1024;        // requests in flight; beyond: RESOURCE_EXHAUSTED
};

/// A Reflection V1 runtime (an HTTP server) as the manager's runtime
/// connection sees every runtime: a transport of V2 frames. The link
/// health-checks the runtime (GET /api/__health?id=, then every
/// health_interval; refused or not 200 = gone, as Genkit's CLI judges), hands
/// its owner a `register` request, turns each V2 request it is sent into one
/// HTTP request (reflection_v1_bridge) and what comes back into V2 frames.
/// It closes (on_closed with the reason) when the runtime fails a health
/// check, when the owner refuses its `register`, or on close().
class v1_runtime_link : public transport, public pingable {
public:
  static std::shared_ptr<v1_runtime_link> make(io_runtime& io, v1_link_options opts);

  /// Starts the first health check; `handler` then gets the frames.
  virtual void start(frame_handler_ptr handler) = 0;
};

} // namespace actor_host::net
