#include "actors/manager/trigger_binding.hpp"

#include "net/iii_protocol.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace iii = net::iii;

caf::behavior trigger_binding(caf::stateful_actor<trigger_binding_state>* self,
                              trigger_binding_args args) {
  self->state.args = std::move(args);
  return {
    [self](provider_atom, net::transport_ptr& provider) {
      auto& st = self->state;
      st.provider = std::move(provider);
      auto& a = st.args;
      st.provider->send_text(
        iii::register_trigger(a.id, a.trigger_type, a.function_id, a.config, a.metadata));
    },
    [self](park_atom) { self->state.provider = nullptr; },
    [self](bind_result_atom, const std::string& error) {
      auto& st = self->state;
      auto& a = st.args;
      spdlog::info("trigger {} ({} -> {}) rejected by its provider; parked", a.id,
                   a.trigger_type, a.function_id);
      st.provider = nullptr;
      a.binder->send_text(
        iii::trigger_registration_result(a.id, a.trigger_type, a.function_id, error));
    },
    [self](unbind_atom) {
      auto& st = self->state;
      if (st.provider)
        st.provider->send_text(iii::unregister_trigger(st.args.id, st.args.trigger_type));
      self->quit();
    },
  };
}

} // namespace actor_host
