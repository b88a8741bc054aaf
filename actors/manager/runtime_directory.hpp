#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace actor_host {

struct directory_state {
  struct entry {
    std::string id;
    std::string info_json;
    caf::actor conn;
  };

  live_count live{actor_kind::runtime_directory};
  std::vector<entry> entries; // registration order; back() is the most recent
  std::unordered_map<std::string, caf::actor> bidi_by_trace;
  // Child runtimes waiting for (or watching) their id's registration.
  std::unordered_map<std::string, std::vector<caf::actor>> watchers;
  // Caller sessions that keep a copy of the routes (subscribe_atom, actor).
  std::vector<caf::actor> route_subscribers;
  // The iii side of the catalog (function_registry), for `/iii/` keys.
  caf::actor functions;
  static inline const char* name = "runtime_directory";

  entry* find(const std::string& id);
};

/// runtimeId -> runtime_connection, in registration order. As in Genkit, the
/// last entry is the "most recent" runtime. An id cannot be taken over: a
/// register of an id held by another connection asks that connection first
/// ((probe_atom) -> bool: a WebSocket ping, 2 s deadline); if the holder
/// answers, the claimant is refused; if not (a dead link the runtime
/// reconnected around), the holder is dropped and the claimant gets the id in
/// place. Also indexes bidi runs by trace id for the HTTP front door.
///
/// - (register_atom, id, info_json, conn) -> (bool ok, string why): add, or
///   update the info for the same conn, or take over as above; monitors conn
/// - (deregister_atom, id, conn): remove if conn still owns the id
/// - (route_atom, id) -> (bool ok, actor conn, string id_or_error); "" = most recent
/// - (list_atom) -> string: JSON array of RuntimeInfo
/// - (list_iii_atom) -> string: the iii functions as a listActions
///   result (asked of the function registry)
/// - (bidi_open_atom, trace, pending), (bidi_close_atom, trace)
/// - (bidi_find_atom, trace) -> (bool, actor)
/// - (watch_atom, id, watcher): the watcher gets (ready_atom, id) whenever id
///   registers (at once if it is registered) and (unready_atom, id) when it
///   goes away
/// - (subscribe_atom, subscriber): the subscriber keeps its own copy of the
///   routes, so a call costs no round trip here. It gets (route_update_atom,
///   id, conn) for every entry in registration order, then
///   (routes_ready_atom); afterwards (route_update_atom, id, conn) for each change: a new id
///   appends, a known id is replaced in place, a null conn removes it. Applied
///   in order, these keep the copy equal to `entries`' ids and connections.
/// - (drain_atom) -> vector<actor>: the registered runtimes' connections
/// - (functions_atom, function_registry): where iii functions are routed
/// - (route_iii_atom, function_id) -> (bool ok, actor conn, string
///   function_id_or_error): answered by the function registry
caf::behavior runtime_directory(caf::stateful_actor<directory_state>* self);

} // namespace actor_host
