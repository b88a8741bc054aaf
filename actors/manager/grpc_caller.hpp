#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/manager/call_path.hpp"
#include "actors/manager/interfaces.hpp"
#include "grpc_door/call_bridge.hpp"

#include <memory>
#include <string>
#include <vector>

namespace actor_host {

/// A gRPC caller: a caller fed with bidi input by its call's reactor.
using grpc_caller_actor = caller_actor::extend<caf::reacts_to<input_atom, std::string>,
                                               caf::reacts_to<end_input_atom>>;

struct grpc_caller_state {
  live_count live{actor_kind::caller_session};
  front_door door;
  std::shared_ptr<grpc_door::call_sink> sink;
  call_actor pending;               // the call in flight, once accepted
  std::vector<std::string> held;    // bidi input before the call is accepted
  std::size_t held_bytes = 0;
  bool input_ended = false;
  static inline const char* name = "grpc_caller";
};

/// The caller of one gRPC call of a catalog method (a caller_session of the
/// design): parses the params the door built, as HTTP's are
/// (parse_run_action), starts the call on the one call path and passes the
/// run's events to the call's sink. The client leaving ends it (an exit
/// from the door), and its pending request, which monitors it, then cancels
/// the run.
grpc_caller_actor::behavior_type grpc_caller(grpc_caller_actor::stateful_pointer<grpc_caller_state> self,
                                             front_door door, grpc_door::call_start start,
                                             std::shared_ptr<grpc_door::call_sink> sink);

/// The door's call starter: spawns a grpc_caller per call (adopted by
/// `supervisor`) and returns its end of the call.
std::shared_ptr<grpc_door::call_source> start_grpc_call(caf::actor_system& sys,
                                                        caf::actor supervisor, front_door door,
                                                        grpc_door::call_start start,
                                                        std::shared_ptr<grpc_door::call_sink> sink);

/// The gRPC status code and message of an error object of the call path.
std::pair<int, std::string> grpc_status_of(const std::string& error_object);

} // namespace actor_host
