#include "actors/iii/trigger_binding.hpp"

#include "actors/call/errors.hpp"
#include "wire/iii_protocol.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace iii = wire::iii;

namespace {

using self_ptr = caf::stateful_actor<trigger_binding_state>*;

/// Answers engine::register_trigger's caller (once).
void answer_waiter(self_ptr self, call_end end) {
  auto& a = self->state.args;
  if (!a.waiter)
    return;
  self->send(a.waiter, done_atom_v, a.waiter_tag, std::move(end));
  a.waiter = nullptr;
}

call_error registration_failed(std::string message) {
  return manager_errors::iii_error("trigger_registration_failed", message);
}

std::string id_result(const std::string& id) {
  return R"({"id":)" + wire::jsonrpc::quote(id) + "}";
}

} // namespace

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
      if (a.waiter && !st.timer) {
        st.timer = true;
        self->delayed_send(self, a.wait_timeout, expired_atom_v);
      }
    },
    [self](provider_atom, const std::string&) {
      // Delivered to another node's provider (the registry forwarded it):
      // its answer comes back as bind_answer_atom; the wait is the same.
      auto& st = self->state;
      if (st.args.waiter && !st.timer) {
        st.timer = true;
        self->delayed_send(self, st.args.wait_timeout, expired_atom_v);
      }
    },
    [self](park_atom) {
      self->state.provider = nullptr;
      // The provider left before answering: the binding waits for the type
      // to come back, as one made while the type was unknown.
      answer_waiter(self, succeeded(id_result(self->state.args.id)));
    },
    [self](bind_answer_atom, std::string& error) {
      auto& st = self->state;
      auto& a = st.args;
      if (error.empty()) {
        answer_waiter(self, succeeded(id_result(a.id)));
        return;
      }
      if (a.waiter) {
        // engine::register_trigger: the provider's error is the answer, and
        // the binding (whose id the caller never learns) ends.
        spdlog::info("trigger {} ({} -> {}) rejected by its provider; not registered", a.id,
                     a.trigger_type, a.function_id);
        // The provider's error object is classified here, where it arrives.
        answer_waiter(self, failed(manager_errors::error_of(std::move(error))));
        self->quit();
        return;
      }
      spdlog::info("trigger {} ({} -> {}) rejected by its provider; parked", a.id,
                   a.trigger_type, a.function_id);
      st.provider = nullptr;
      if (a.binder)
        a.binder->send_text(
          iii::trigger_registration_result(a.id, a.trigger_type, a.function_id, error));
    },
    [self](expired_atom) {
      auto& st = self->state;
      auto& a = st.args;
      if (!a.waiter)
        return; // answered in time
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(a.wait_timeout).count();
      spdlog::warn("trigger {} ({} -> {}): no triggerregistrationresult from the provider within "
                   "{} s; not registered",
                   a.id, a.trigger_type, a.function_id, secs);
      answer_waiter(self, failed(registration_failed("no answer from the provider of trigger type "
                                                     + a.trigger_type + " within "
                                                     + std::to_string(secs) + " s")));
      if (st.provider)
        st.provider->send_text(iii::unregister_trigger(a.id, a.trigger_type));
      self->quit();
    },
    [self](retire_atom) {
      auto& st = self->state;
      if (st.provider)
        st.provider->send_text(iii::unregister_trigger(st.args.id, st.args.trigger_type));
      answer_waiter(self,
                    failed(registration_failed("trigger " + st.args.id + " was unregistered")));
      self->quit();
    },
  };
}

} // namespace actor_host
