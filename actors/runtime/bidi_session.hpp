#pragma once

#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"
#include "schema/json_schema.hpp"
#include "actions/input_queue.hpp"

#include <memory>

namespace actor_host {

struct bidi_session_state {
  live_count live{actor_kind::bidi_session};
  std::shared_ptr<actions::input_queue> queue;
  std::shared_ptr<const schema::json_schema> schema; // input chunks; may be null
  caf::actor run;  // the active_action to tell about an invalid chunk
  std::size_t max_bytes = 0; // input queued and not yet read by the action; 0 = no cap
  static inline const char* name = "bidi_session";
};

/// The input side of one bidi run. The manager_link creates it the moment it
/// reads the runAction frame, before the action starts, and feeds it input in
/// wire order; the handler's thread drains the queue. Input after
/// endInputStream is dropped. A chunk that fails the action's input schema
/// fails the run (INVALID_ARGUMENT); so does input piling up unread beyond
/// `max_bytes` (RESOURCE_EXHAUSTED), and the queued input is dropped.
///
/// - (input_atom, raw chunk), (end_input_atom): from the link
/// - (input_error_atom, message) -> the run, once
caf::behavior bidi_session(caf::stateful_actor<bidi_session_state>* self,
                           std::shared_ptr<actions::input_queue> queue,
                           std::shared_ptr<const schema::json_schema> schema,
                           std::size_t max_bytes);

} // namespace actor_host
