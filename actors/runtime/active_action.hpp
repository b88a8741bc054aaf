#pragma once

#include "actions/action.hpp"
#include "actions/cancel_flag.hpp"
#include "actions/input_queue.hpp"
#include "actors/common/live_counts.hpp"
#include "actors/common/messages.hpp"

#include <memory>
#include <optional>
#include <string>

namespace actor_host {

/// What the manager_link read from one runAction frame.
struct run_request {
  std::string request_id; // raw JSON id of the runAction
  actions::catalog_ptr catalog;
  const actions::action_descriptor* action = nullptr; // owned by catalog
  std::string input;   // raw JSON; "" when absent
  std::string init;    // raw JSON; "" when absent
  std::string context; // raw JSON object; "" when absent
  bool stream = false;
  std::shared_ptr<actions::cancel_flag> cancel;
  std::shared_ptr<actions::input_queue> inputs; // bidi runs only
  caf::actor spans; // span_exporter: the run's span goes there when it ends; null = none
};

struct active_action_state {
  live_count live{actor_kind::active_action};
  run_request req;
  caf::actor link;
  caf::actor bidi; // our bidi_session until it is down; null for other runs
  std::string trace_id;
  std::int64_t started_ms = 0; // wall clock, for the span
  std::optional<std::string> input_error; // a bad bidi chunk overrides the outcome
  bool answered = false;                  // done_atom sent
  caf::behavior running;
  caf::behavior draining;
  static inline const char* name = "active_action";

  /// The state dies on every way out, a kill included: an unanswered run
  /// stops its handler, and the bidi session goes with the run.
  ~active_action_state();
};

/// One runAction on the runtime side. Validates the input, opens the trace
/// (runActionState), runs the handler on a thread of its own so a slow action
/// blocks nothing else, relays its chunks in order, checks the result against
/// the action's output schema, and sends the final result or Status error
/// after the last chunk.
///
/// Owns the run's bidi_session (`bidi`, may be null): the manager_link
/// creates it before the run starts, so that input right behind the
/// runAction frame is kept, and the run monitors it, ends it after the
/// answer and exits only once it is down.
///
/// Named behaviors: running -> draining (answered, waiting for the session).
/// - to the link: (action_trace_atom, request_id, trace_id),
///   (action_chunk_atom, request_id, raw), (action_done_atom, request_id, ok, raw)
/// - (cancel_atom): cancels the handler; the run then ends with CANCELLED
/// - (input_error_atom, message): a bidi chunk failed the input schema
caf::behavior active_action(caf::stateful_actor<active_action_state>* self, run_request req,
                            caf::actor link, caf::actor bidi);

/// The JSON-RPC error of a failed run: -32000 with a Genkit Status in data,
/// {code, message, details: {stack?, traceId?, stderr?}}.
std::string run_failure(wire::status_code code, const std::string& message,
                        const std::string& trace_id, const std::string& stack,
                        const std::string& stderr_tail = {});

/// 32 lowercase hex characters, as Genkit trace ids are.
std::string make_trace_id();

/// The id of a run's root span: the first 16 hex characters of its trace id
/// (random, so as unique as Genkit's own), known to every actor that knows
/// the trace id without another message.
std::string root_span_id(const std::string& trace_id);

} // namespace actor_host
