#pragma once

#include "actors/call/hub_calls.hpp"
#include "actors/call/interfaces.hpp"
#include "actors/common/held_input.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/dispatch/call_path.hpp"
#include "grpc_door/call_bridge.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

// The door's calls reach the hubs as messages from gRPC's threads (local only).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(actor_host::grpc_door::call_start)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<actor_host::grpc_door::call_sink>)

namespace actor_host {

/// The callers of gRPC calls: a caller (events tagged by call) that the
/// door starts calls on and feeds with their clients' input and cancels.
using grpc_caller_actor = caller_actor::extend<
  caf::reacts_to<call_atom, std::uint64_t, grpc_door::call_start,
                 std::shared_ptr<grpc_door::call_sink>>,
  caf::reacts_to<input_atom, std::uint64_t, std::string>,
  caf::reacts_to<end_input_atom, std::uint64_t>, caf::reacts_to<cancel_atom, std::uint64_t>>;

/// One gRPC call a hub makes (a caller_session of the design: counted as
/// one while it lasts).
struct grpc_call {
  live_count live{actor_kind::caller_session};
  std::shared_ptr<grpc_door::call_sink> sink;
  call_handle pending;           // the call in flight, once accepted
  held_input held;               // bidi input before the call is accepted
};

struct grpc_caller_state {
  front_door door;
  hub_calls<grpc_call> calls;
  /// A hub going away (the manager stops) fails the calls it still has.
  ~grpc_caller_state();
  static inline const char* name = "grpc_caller";
};

/// A long-lived caller of many gRPC calls of catalog methods: parses the
/// params the door built, as HTTP's are (parse_run_action), starts each on
/// the one call path and passes its events to the call's sink. The door
/// spreads calls over a few hubs, so a call costs two messages into CAF
/// instead of an actor spawned, adopted and reaped. A client that leaves
/// sends `cancel`: the pending request is told to abandon the run.
grpc_caller_actor::behavior_type
grpc_caller(grpc_caller_actor::stateful_pointer<grpc_caller_state> self, front_door door);

/// The door's call starter over a fixed set of hubs (children of the
/// manager's supervisor): picks one per call, round robin.
class grpc_call_starter {
public:
  explicit grpc_call_starter(std::vector<grpc_caller_actor> hubs);
  std::shared_ptr<grpc_door::call_source> operator()(grpc_door::call_start start,
                                                     std::shared_ptr<grpc_door::call_sink> sink);

private:
  hub_ring<grpc_caller_actor> hubs_;
};

/// This door's wire shape of a call's error: a gRPC status code and message.
std::pair<int, std::string> grpc_status_of(const call_error& error);

} // namespace actor_host
