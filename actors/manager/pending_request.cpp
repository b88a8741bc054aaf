#include "actors/manager/pending_request.hpp"

#include "actors/manager/errors.hpp"
#include "net/jsonrpc.hpp"
#include "obs/log.hpp"
#include "obs/metrics.hpp"
#include "registry/action_list.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace rpc = net::jsonrpc;

namespace {

using self_ptr = caf::stateful_actor<pending_state>*;

obs::scoped_log_fields call_fields(self_ptr self) {
  auto& st = self->state;
  return obs::scoped_log_fields{{.trace_id = st.trace_id,
                                 .runtime_id = st.args.runtime_id,
                                 .action = st.args.action_key}};
}

void finish(self_ptr self, bool ok, std::string raw) {
  auto& a = self->state.args;
  auto took = std::chrono::steady_clock::now() - self->state.started;
  auto code = ok ? 0 : manager_errors::status_code_of(raw);
  obs::global().record_request(obs::method_from_name(a.method), code, took);
  if (spdlog::should_log(spdlog::level::debug)) {
    auto fields = call_fields(self);
    spdlog::debug("{} {}: {} in {:.3f} ms", a.method, a.action_key,
                  ok ? std::string_view{"ok"} : registry::status_name(code),
                  std::chrono::duration<double, std::milli>(took).count());
  }
  if (a.caller) {
    // The monitor lives in the caller's state until removed: a long-lived
    // caller session would otherwise keep ~1 KB per finished call.
    self->demonitor(a.caller);
    self->send(a.caller, done_atom_v, a.tag, ok, std::move(raw));
  }
  self->quit();
}

// Abandoned runs should stop consuming the runtime's resources. The cancel is
// a detached call: nobody waits for its answer.
void cancel_on_runtime(self_ptr self) {
  auto& st = self->state;
  if (st.cancel_sent || st.trace_id.empty() || st.args.method != "runAction")
    return;
  st.cancel_sent = true;
  auto fields = call_fields(self);
  spdlog::debug("cancelling abandoned run {} on runtime {}", st.trace_id, st.args.runtime_id);
  caf::anon_send(st.args.conn, call_atom_v, std::uint64_t{0}, std::string{"cancelAction"},
                 R"({"traceId":)" + rpc::quote(st.trace_id) + "}", st.args.cancel_timeout);
}

void forward_input(self_ptr self, const std::string& chunk) {
  auto& a = self->state.args;
  if (!chunk.empty())
    obs::global().input_chunks.fetch_add(1, std::memory_order_relaxed);
  if (chunk.empty())
    a.transport->send_text(
      rpc::notification("endInputStream", R"({"requestId":)" + a.wire_id + "}"));
  else
    a.transport->send_text(rpc::notification(
      "sendInputStreamChunk", R"({"requestId":)" + a.wire_id + R"(,"chunk":)" + chunk + "}"));
}

void input(self_ptr self, std::string chunk) {
  auto& st = self->state;
  if (st.trace_id.empty())
    st.held_input.push_back(std::move(chunk));
  else
    forward_input(self, chunk);
}

void abandon(self_ptr self) {
  auto& st = self->state;
  st.caller_gone = true;
  st.args.caller = nullptr;
  cancel_on_runtime(self);
}

} // namespace

caf::behavior pending_request(caf::stateful_actor<pending_state>* self, pending_args args) {
  self->state.args = std::move(args);
  // A caller that dies (socket closed, HTTP client gone) abandons the call.
  if (self->state.args.caller) {
    self->monitor(self->state.args.caller);
    self->set_down_handler([self](caf::down_msg& dm) {
      if (dm.source == self->state.args.caller.address())
        abandon(self);
    });
  }
  if (self->state.args.timeout.count() > 0)
    self->delayed_send(self, self->state.args.timeout, expired_atom_v);
  return {
    [self](trace_atom, std::string& trace) {
      auto& st = self->state;
      // Go runtimes send runActionState once per span; the first one counts.
      if (!st.trace_id.empty())
        return;
      st.trace_id = trace;
      for (auto& chunk : st.held_input)
        forward_input(self, chunk);
      st.held_input.clear();
      if (st.args.caller)
        self->send(st.args.caller, trace_atom_v, st.args.tag, std::move(trace));
      if (st.caller_gone)
        cancel_on_runtime(self);
    },
    [self](chunk_atom, std::string& raw) {
      auto& a = self->state.args;
      obs::global().stream_chunks.fetch_add(1, std::memory_order_relaxed);
      if (a.caller)
        self->send(a.caller, chunk_atom_v, a.tag, std::move(raw));
    },
    [self](response_atom, bool ok, std::string& raw) {
      auto& a = self->state.args;
      std::string why;
      if (ok && a.method == "listActions" && !registry::normalize_list_actions(raw, why)) {
        spdlog::warn("invalid listActions result from runtime {}: {}", a.runtime_id, why);
        return finish(self, false,
                      manager_errors::internal("invalid listActions result from runtime "
                                               + a.runtime_id + ": " + why));
      }
      finish(self, ok, std::move(raw));
    },
    [self](expired_atom) {
      auto& a = self->state.args;
      auto fields = call_fields(self);
      spdlog::warn("request {} ({}) to runtime {} timed out", a.wire_id, a.method, a.runtime_id);
      self->send(a.conn, forget_atom_v, a.wire_id);
      cancel_on_runtime(self);
      finish(self, false,
             manager_errors::timed_out(
               a.runtime_id, a.method,
               std::chrono::duration_cast<std::chrono::milliseconds>(a.timeout)));
    },
    [self](conn_lost_atom, const std::string&) {
      auto& a = self->state.args;
      finish(self, false, manager_errors::connection_closed(a.runtime_id, a.method));
    },
    [self](input_atom, std::string& chunk) { input(self, std::move(chunk)); },
    [self](end_input_atom) { input(self, {}); },
    [self](abort_atom) { abandon(self); },
    [self](cancel_atom) {
      // The manager's drain timeout passed: the run is cancelled on the
      // runtime and the caller told why.
      auto& a = self->state.args;
      obs::global().drain_cancelled_calls.fetch_add(1, std::memory_order_relaxed);
      auto fields = call_fields(self);
      spdlog::warn("cancelling {} {} on runtime {}: drain timeout passed", a.method,
                   self->state.trace_id, a.runtime_id);
      self->send(a.conn, forget_atom_v, a.wire_id);
      cancel_on_runtime(self);
      finish(self, false,
             manager_errors::status_error(registry::status_code::cancelled,
                                          "Call cancelled: the manager is shutting down and "
                                          "the drain timeout passed"));
    },
  };
}

} // namespace actor_host
