#pragma once

#include "actors/call/hub_calls.hpp"
#include "actors/call/interfaces.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/dispatch/call_path.hpp"
#include "actors/doors/http/caller_slots.hpp"
#include "net/http_exchange.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace actor_host {

/// One runAction exchange of the HTTP door, as the handler on the I/O
/// thread hands it to a hub.
struct http_run {
  net::http_request req;
  net::http_responder_ptr res;
  caller_slot slot;         // the caller's slot (caller_slots.hpp), given back at the end
  bool tools_shape = false; // /api/runAction: errors in the tools server's shape
};

} // namespace actor_host

// The door's exchanges reach the hubs as messages from the I/O thread (local only).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<actor_host::http_run>)

namespace actor_host {

/// The callers of HTTP runAction calls: a caller (events tagged by call)
/// that the door starts calls on, and cancels when their clients leave.
using http_run_hub_actor = caller_actor::extend<
  caf::reacts_to<call_atom, std::uint64_t, std::shared_ptr<http_run>>,
  caf::reacts_to<cancel_atom, std::uint64_t>>;

/// One runAction a hub makes (a caller_session of the design: counted as
/// one while it lasts).
struct http_hub_call {
  live_count live{actor_kind::caller_session};
  std::shared_ptr<http_run> run;
  call_handle pending; // the call in flight, once accepted
  std::string trace_id;
};

struct http_run_hub_state {
  front_door door;
  hub_calls<http_hub_call> calls;
  static inline const char* name = "http_run_hub";
};

/// A long-lived caller of many runAction exchanges (POST /api/runAction and
/// /api/rpc/runAction): parses each body once (parse_run_action), starts
/// it on the one call path and answers it as http_caller would
/// (respond_end). A per-request http_caller cost a spawn, an adoption by
/// the supervisor, a monitor and the actor's teardown per call; here a call
/// costs one message into CAF. A client that leaves sends `cancel`: its
/// pending request is told to abandon the run, as a caller's end told it
/// before. A hub that ends (the manager stops) drops its exchanges, and
/// those that reach it after: their responders answer 503 as they go
/// (http_response.cpp); the runs it started are abandoned as a dead
/// caller's are.
http_run_hub_actor::behavior_type
http_run_hub(http_run_hub_actor::stateful_pointer<http_run_hub_state> self, front_door door);

/// The door's runAction starter over a fixed set of hubs (children of the
/// manager's supervisor): picks one per call, round robin. Called on the
/// I/O thread.
class http_run_starter {
public:
  explicit http_run_starter(std::vector<http_run_hub_actor> hubs);
  void operator()(std::shared_ptr<http_run> run);

private:
  hub_ring<http_run_hub_actor> hubs_;
};

} // namespace actor_host
