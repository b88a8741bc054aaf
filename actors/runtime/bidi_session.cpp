#include "actors/runtime/bidi_session.hpp"

#include "obs/metrics.hpp"
#include "wire/jsonrpc.hpp"

#include <boost/json/parse.hpp>

#include <spdlog/spdlog.h>

namespace actor_host {

caf::behavior bidi_session(caf::stateful_actor<bidi_session_state>* self,
                           std::shared_ptr<actions::input_queue> queue,
                           std::shared_ptr<const schema::json_schema> schema,
                           std::size_t max_bytes) {
  self->state.queue = std::move(queue);
  self->state.schema = std::move(schema);
  self->state.max_bytes = max_bytes;
  // Whatever ends the session ends the input, so the handler never waits on
  // a queue nobody fills.
  self->attach_functor([q = self->state.queue] { q->end(); });
  return {
    [self](caf::actor& run) { self->state.run = std::move(run); },
    [self](input_atom, const std::string& raw) {
      auto& st = self->state;
      if (st.queue->ended())
        return;
      // An action that does not read its input (or not yet) must not make
      // the runtime hold whatever the caller sends.
      if (st.max_bytes > 0 && st.queue->held_bytes() + raw.size() > st.max_bytes) {
        obs::global().bidi_input_overflows.fetch_add(1, std::memory_order_relaxed);
        auto msg = "RESOURCE_EXHAUSTED: bidi input not yet read by the action exceeds "
                   "max_bidi_input_bytes ("
                   + std::to_string(st.max_bytes) + " bytes)";
        spdlog::warn("{}", msg);
        if (st.run)
          self->send(st.run, input_error_atom_v, std::move(msg));
        st.queue->end();
        return;
      }
      boost::json::error_code ec;
      boost::json::parse_options deep;
      deep.max_depth = wire::jsonrpc::max_json_depth;
      auto v = boost::json::parse(raw, ec, {}, deep);
      if (ec) {
        // Pushed as null before: wrong data is worse than an error.
        auto msg = "INVALID_ARGUMENT: invalid stream chunk: nested deeper than "
                   + std::to_string(wire::jsonrpc::max_json_depth) + " levels or not JSON ("
                   + ec.message() + ")";
        spdlog::debug("{}", msg);
        if (st.run)
          self->send(st.run, input_error_atom_v, std::move(msg));
        st.queue->end();
        return;
      }
      std::vector<std::string> errors;
      if (st.schema && !st.schema->validate(v, errors)) {
        std::string msg = "INVALID_ARGUMENT: invalid stream chunk: ";
        for (auto& e : errors)
          msg += (&e == &errors.front() ? "" : "; ") + e;
        spdlog::debug("{}", msg);
        if (st.run)
          self->send(st.run, input_error_atom_v, std::move(msg));
        st.queue->end();
        return;
      }
      st.queue->push(std::move(v), raw.size());
    },
    [self](end_input_atom) { self->state.queue->end(); },
  };
}

} // namespace actor_host
