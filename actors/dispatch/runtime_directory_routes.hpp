#pragma once

// Private to the runtime directory: how its routes are published once per
// burst of changes, and how watchers and the cluster node hear of changes
// after the routes carry them (runtime_directory.hpp).

#include "actors/dispatch/runtime_directory.hpp"

#include <string>

namespace actor_host {

using directory_self = directory_actor::stateful_pointer<directory_state>;

/// Every change of `entries` or `remote` calls this: the routes are
/// published at once, or marked stale and published behind the burst.
void routes_changed(directory_self self);

/// Before answering what a caller can act on (a listing, a watch).
void publish_if_stale(directory_self self);

/// (flush_atom): the publication a burst held back.
void routes_flush(directory_self self);

/// What is told once the routes carry a change, in order.
void tell_cluster_up(directory_self self, const directory_state::entry& e);
void tell_cluster_down(directory_self self, const std::string& id);
void tell_watchers(directory_self self, const std::string& id, directory_state::notice::kind what);

/// A service with a cap has a queue while it has replicas; a registration
/// needs its service's at once (its reply carries it).
void ensure_service_queue(directory_self self, const std::string& service);
slot_listener_actor queue_of(directory_self self, const std::string& service);

} // namespace actor_host
