#include "actors/runtime/bidi_session.hpp"

#include <boost/json/parse.hpp>

#include <spdlog/spdlog.h>

namespace actor_host {

caf::behavior bidi_session(caf::stateful_actor<bidi_session_state>* self,
                           std::shared_ptr<registry::input_queue> queue,
                           std::shared_ptr<const registry::json_schema> schema) {
  self->state.queue = std::move(queue);
  self->state.schema = std::move(schema);
  // Whatever ends the session ends the input, so the handler never waits on
  // a queue nobody fills.
  self->attach_functor([q = self->state.queue] { q->end(); });
  return {
    [self](caf::actor& run) { self->state.run = std::move(run); },
    [self](input_atom, const std::string& raw) {
      auto& st = self->state;
      if (st.queue->ended())
        return;
      boost::json::error_code ec;
      auto v = boost::json::parse(raw, ec);
      std::vector<std::string> errors;
      if (!ec && st.schema && !st.schema->validate(v, errors)) {
        std::string msg = "INVALID_ARGUMENT: invalid stream chunk: ";
        for (auto& e : errors)
          msg += (&e == &errors.front() ? "" : "; ") + e;
        spdlog::debug("{}", msg);
        if (st.run)
          self->send(st.run, input_error_atom_v, std::move(msg));
        st.queue->end();
        return;
      }
      st.queue->push(std::move(v));
    },
    [self](end_input_atom) { self->state.queue->end(); },
  };
}

} // namespace actor_host
