#pragma once

#include "actors/call/interfaces.hpp"
#include "actors/dispatch/call_path.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace actor_host {

namespace grpc_door {
class catalog;
}

/// The catalog keeper: a caller of listActions, told of catalog changes.
using grpc_catalog_actor = caller_actor::extend<caf::reacts_to<changed_atom, std::string>>;

struct grpc_catalog_state {
  front_door door;
  std::function<void(std::shared_ptr<const grpc_door::catalog>)> publish;
  std::uint64_t next_tag = 1;
  std::uint64_t round = 0;                // the listing round in flight (0 = none)
  std::map<std::uint64_t, std::string> answers; // tag -> listActions result ("" = failed)
  std::map<std::uint64_t, std::string> asked;   // tag -> runtime id, this round
  bool again = false;                     // a change came during the round
  static inline const char* name = "grpc_catalog";
};

/// Keeps the gRPC door's catalog current: the runtime directory and the iii
/// registry tell it of every change (subscribe_atom); it then lists the
/// actions of every runtime (newest first, then the other nodes') and the
/// iii functions through the one call path, builds the services
/// (grpc_door::catalog::build) and publishes them. One round at a time; a
/// change during a round starts one more.
grpc_catalog_actor::behavior_type
grpc_catalog(grpc_catalog_actor::stateful_pointer<grpc_catalog_state> self, front_door door,
             std::function<void(std::shared_ptr<const grpc_door::catalog>)> publish);

} // namespace actor_host
