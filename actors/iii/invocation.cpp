#include "actors/iii/invocation.hpp"

#include "actors/call/errors.hpp"
#include "obs/metrics.hpp"
#include "wire/iii_protocol.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace iii = wire::iii;

namespace {

using self_ptr = invocation_actor::stateful_pointer<invocation_state>;

/// Ends the call: the caller gets its end, in its own protocol.
void finish(self_ptr self, call_end end, std::string_view outcome) {
  auto& a = self->state.args;
  obs::global().record_invocation(outcome, std::chrono::steady_clock::now() - self->state.started);
  if (a.caller && a.req.wants_reply)
    self->send(a.caller, done_atom_v, a.tag, std::move(end));
  self->quit();
}

/// The worker's answer as the call's end; its error object is classified
/// here, where it arrives.
call_end answered(const invocation_args& a, bool ok, const std::string& raw) {
  bool genkit = a.req.format == reply_format::genkit;
  if (ok)
    return succeeded(genkit ? iii::iii_result_to_genkit(raw, a.invocation_id) : raw);
  return failed(manager_errors::error_of(genkit ? iii::iii_error_to_genkit(raw) : raw));
}

/// An error the engine makes itself (the worker gone, the deadline).
call_end engine_error(const invocation_args& a, std::string_view code, std::string message) {
  return failed(a.req.format == reply_format::genkit
                  ? manager_errors::iii_error_as_genkit(code, message)
                  : manager_errors::iii_error(code, message));
}

std::string error_code_of(const std::string& error) {
  std::string code;
  if (auto e = wire::jsonrpc::split_object(error))
    if (auto* c = e->find("code"))
      wire::jsonrpc::string_value(*c, code);
  return code.empty() ? std::string{"error"} : code;
}

} // namespace

invocation_actor::behavior_type invocation(self_ptr self, invocation_args args) {
  self->state.args = std::move(args);
  auto& a = self->state.args;
  // A caller that dies (socket closed, HTTP client gone) abandons the call.
  if (a.caller) {
    self->monitor(a.caller);
    self->set_down_handler([self](caf::down_msg& dm) {
      auto& a = self->state.args;
      if (dm.source != a.caller.address())
        return;
      spdlog::debug("caller of {} ({}) went away; its answer will be dropped", a.invocation_id,
                    a.req.function_id);
      self->send(a.conn, forget_inv_atom_v, a.invocation_id);
      a.caller = nullptr;
      finish(self, {}, "abandoned");
    });
  }
  return {
    [self](response_atom, bool ok, const std::string& raw) {
      finish(self, answered(self->state.args, ok, raw),
             ok ? std::string{"ok"} : error_code_of(raw));
    },
    [self](conn_lost_atom, const std::string& reason) {
      auto& a = self->state.args;
      spdlog::debug("invocation {} of {} stopped: worker {} gone ({})", a.invocation_id,
                    a.req.function_id, a.worker_id, reason);
      finish(self, engine_error(a, iii::code::invocation_stopped, "Invocation stopped"),
             iii::code::invocation_stopped);
    },
    [self](expired_atom) {
      auto& a = self->state.args;
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(a.req.timeout).count();
      spdlog::warn("invocation {} of {} on worker {} timed out after {} ms", a.invocation_id,
                   a.req.function_id, a.worker_id, ms);
      self->send(a.conn, forget_inv_atom_v, a.invocation_id);
      finish(self,
             engine_error(a, iii::code::timeout,
                          "Invocation of " + a.req.function_id + " timed out after "
                            + std::to_string(ms) + " ms (engine)"),
             iii::code::timeout);
    },
    [self](abort_atom, std::uint64_t) {
      auto& a = self->state.args;
      self->send(a.conn, forget_inv_atom_v, a.invocation_id);
      a.caller = nullptr;
      finish(self, {}, "abandoned");
    },
    // Front-door callers may send bidi input; iii functions have no input stream.
    [](input_atom, std::uint64_t, const std::string&) {},
    [](end_input_atom, std::uint64_t) {},
  };
}

} // namespace actor_host
