#include "actors/dispatch/pending_request.hpp"

#include "actions/action_list.hpp"
#include "actors/call/errors.hpp"
#include "actors/tracing/route_span_queue.hpp"
#include "obs/log.hpp"
#include "obs/metrics.hpp"
#include "wire/jsonrpc.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

using self_ptr = pending_request_actor*;

bool is_run(const pending_args& a) {
  return a.method == call_method::run_action;
}

// `trace`: the call's trace id as text (st.trace_id.str()), kept by the
// caller while the fields are in scope.
obs::scoped_log_fields call_fields(self_ptr self, const std::string& trace) {
  auto& st = self->state;
  return obs::scoped_log_fields{{.trace_id = trace,
                                 .runtime_id = st.args.shared->runtime_id,
                                 .action = st.args.action_key}};
}

std::int64_t epoch_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// The manager's own span of a run: which runtime (and node) it was routed
// to, how long it took here, how it ended. Queued as plain text, no
// message and no heap block per run (route_span_queue.hpp).
void send_route_span(self_ptr self, const call_end& end) {
  auto& st = self->state;
  auto& a = st.args;
  auto& sh = *a.shared;
  auto now_wall = std::chrono::system_clock::now();
  auto took = std::chrono::steady_clock::now() - st.started;
  auto start = now_wall - std::chrono::duration_cast<std::chrono::system_clock::duration>(took);
  packed_trace_id::text_buffer buf;
  std::string_view status = end.ok ? std::string_view{} : wire::status_name(end.error.status);
  std::string_view message = end.ok ? std::string_view{} : std::string_view{end.error.message};
  sh.traces->push(st.trace_id.text(buf), sh.runtime_id, sh.node, a.action_key, end.ok, status,
                  message, epoch_ms(start), epoch_ms(now_wall));
}

// Outlier detection (replica_load.hpp): failures of the replica, not of
// the caller's input or the action's own logic, count against it.
void record_outcome(self_ptr self, int code) {
  using wire::status_code;
  auto& sh = *self->state.args.shared;
  bool failed = code == static_cast<int>(status_code::unavailable)
                || code == static_cast<int>(status_code::internal)
                || code == static_cast<int>(status_code::deadline_exceeded);
  if (auto span = sh.load->record(failed, replica_load::clock::now()); span.count() > 0) {
    obs::global().replica_ejections.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("runtime {} ejected from balanced calls for {} s: {} calls in a row failed "
                 "(UNAVAILABLE, INTERNAL or DEADLINE_EXCEEDED); pinned calls still reach it",
                 sh.runtime_id, span.count(), replica_load::failures_to_eject);
  }
}

void finish(self_ptr self, call_end end) {
  auto& a = self->state.args;
  auto took = std::chrono::steady_clock::now() - self->state.started;
  auto code = end.ok ? 0 : end.error.status;
  if (a.shared->traces && is_run(a) && !self->state.trace_id.empty())
    send_route_span(self, end);
  obs::global().record_request(obs::method_from_name(method_name(a.method)), code, took);
  if (a.shared->load && is_run(a))
    record_outcome(self, code);
  if (spdlog::should_log(spdlog::level::debug)) {
    auto trace = self->state.trace_id.str();
    auto fields = call_fields(self, trace);
    spdlog::debug("{} {}: {} in {:.3f} ms", method_name(a.method), a.action_key,
                  end.ok ? std::string_view{"ok"} : wire::status_name(code),
                  std::chrono::duration<double, std::milli>(took).count());
  }
  if (a.caller)
    caf::anon_send(std::exchange(a.caller, nullptr), done_atom_v, a.tag, std::move(end));
  self->quit();
}

// Ends the call without its answer: the connection forgets the wire id (a
// late answer is dropped quietly) and, for a run, cancels it on the runtime,
// at once or when the trace id shows up. Nothing of the call stays here.
void give_up(self_ptr self) {
  auto& st = self->state;
  caf::anon_send(st.args.conn, forget_atom_v, quoted_wire_id(st.args.wire_id),
                 st.trace_id.str(), is_run(st.args));
}

void forward_input(self_ptr self, const std::string& chunk) {
  auto& a = self->state.args;
  auto id = quoted_wire_id(a.wire_id);
  if (!chunk.empty())
    obs::global().input_chunks.fetch_add(1, std::memory_order_relaxed);
  if (chunk.empty())
    a.shared->transport->send_text(
      rpc::notification("endInputStream", R"({"requestId":)" + id + "}"));
  else
    a.shared->transport->send_text(rpc::notification(
      "sendInputStreamChunk", R"({"requestId":)" + id + R"(,"chunk":)" + chunk + "}"));
}

void input(self_ptr self, std::string chunk) {
  auto& st = self->state;
  if (!st.trace_id.empty())
    return forward_input(self, chunk);
  auto cap = st.args.shared->max_held_input_bytes;
  if (!st.held)
    st.held = std::make_unique<held_input>();
  if (chunk.empty()) {
    st.held->hold_end();
  } else if (!st.held->hold(std::move(chunk), cap)) {
    obs::global().bidi_input_overflows.fetch_add(1, std::memory_order_relaxed);
    auto trace = self->state.trace_id.str();
    auto fields = call_fields(self, trace);
    spdlog::warn("run {} on runtime {}: bidi input held before the run started exceeds "
                 "max_bidi_input_bytes ({} bytes); failing the run",
                 quoted_wire_id(st.args.wire_id), st.args.shared->runtime_id, cap);
    give_up(self);
    return finish(self, failed(manager_errors::bidi_input_overflow(cap)));
  }
}

// The caller is gone: nobody waits for the answer, so the call is forgotten
// and cancelled now rather than held until the runtime answers (a runtime
// that never does would keep it forever).
void abandon(self_ptr self) {
  auto& st = self->state;
  obs::global().abandoned_calls.fetch_add(1, std::memory_order_relaxed);
  if (spdlog::should_log(spdlog::level::debug)) {
    auto trace = self->state.trace_id.str();
    auto fields = call_fields(self, trace);
    spdlog::debug("{} {} on runtime {} abandoned by its caller; forgotten and cancelled",
                  method_name(st.args.method), quoted_wire_id(st.args.wire_id),
                  st.args.shared->runtime_id);
  }
  st.args.caller = nullptr;
  give_up(self);
  finish(self, failed(manager_errors::make_error(wire::status_code::cancelled,
                                                 "Call abandoned by its caller")));
}

void on_run_trace(self_ptr self, std::string& trace) {
  auto& st = self->state;
  // Go runtimes send runActionState once per span; the first one counts.
  if (!st.trace_id.empty())
    return;
  st.trace_id.assign(trace);
  if (st.held) {
    auto held = std::move(st.held);
    held->release([self](std::string&& chunk) { forward_input(self, chunk); },
                  [self] { forward_input(self, std::string{}); });
  }
  if (st.args.caller && !st.args.connection_relays)
    caf::anon_send(st.args.caller, trace_atom_v, st.args.tag, std::move(trace));
}

void on_response(self_ptr self, bool ok, std::string& raw) {
  auto& a = self->state.args;
  if (ok && a.method == call_method::list_actions) {
    auto normalized = actions::normalize_list_actions(raw);
    if (!normalized) {
      auto& why = normalized.error();
      auto& rid = a.shared->runtime_id;
      spdlog::warn("invalid listActions result from runtime {}: {}", rid, why);
      return finish(self, failed(manager_errors::internal(
                            "invalid listActions result from runtime " + rid + ": " + why)));
    }
    raw = std::move(*normalized);
  }
  // A runtime's error object is classified here, where it arrives.
  finish(self, ok ? succeeded(std::move(raw)) : failed(manager_errors::error_of(std::move(raw))));
}

void on_expired(self_ptr self) {
  auto& a = self->state.args;
  auto trace = self->state.trace_id.str();
  auto fields = call_fields(self, trace);
  spdlog::warn("request {} ({}) to runtime {} timed out", quoted_wire_id(a.wire_id),
               method_name(a.method), a.shared->runtime_id);
  give_up(self);
  finish(self, failed(manager_errors::timed_out(a.shared->runtime_id, method_name(a.method),
                                                std::chrono::milliseconds{a.timeout_ms})));
}

// A chunk or state over the frame cap was dropped: the run cannot be
// relayed whole, so it is cancelled on the runtime and fails here.
void on_oversized(self_ptr self, call_error& error) {
  auto& a = self->state.args;
  auto trace = self->state.trace_id.str();
  auto fields = call_fields(self, trace);
  spdlog::warn("{} {} on runtime {}: a message over max_frame_bytes; failing and cancelling it",
               method_name(a.method), quoted_wire_id(a.wire_id), a.shared->runtime_id);
  give_up(self);
  finish(self, failed(std::move(error)));
}

// The manager's drain timeout passed: the run is cancelled on the runtime
// and the caller told why.
void on_drain_cancel(self_ptr self) {
  auto& a = self->state.args;
  obs::global().drain_cancelled_calls.fetch_add(1, std::memory_order_relaxed);
  auto trace = self->state.trace_id.str();
  auto fields = call_fields(self, trace);
  spdlog::warn("cancelling {} {} on runtime {}: drain timeout passed", method_name(a.method),
               trace, a.shared->runtime_id);
  give_up(self);
  finish(self, failed(manager_errors::make_error(wire::status_code::cancelled,
                                                 wire::drain_cancel_message)));
}

} // namespace

std::string quoted_wire_id(std::uint64_t id) {
  std::string out;
  out.reserve(22);
  out += '"';
  out += std::to_string(id);
  out += '"';
  return out;
}

pending_request_actor::pending_request_actor(caf::actor_config& cfg, pending_args args)
  : lean_actor(cfg) {
  new (&state) pending_state();
  state.args = std::move(args);
}

// The messages of pending_actor (interfaces.hpp), the most frequent first.
void pending_request_actor::handle(caf::mailbox_element& element) {
  auto& m = element.content();
  if (m.match_elements<response_atom, bool, std::string>())
    return on_response(this, m.get_as<bool>(1), m.get_mutable_as<std::string>(2));
  if (m.match_elements<run_trace_atom, std::string>())
    return on_run_trace(this, m.get_mutable_as<std::string>(1));
  if (m.match_elements<run_chunk_atom, std::string>()) {
    obs::global().stream_chunks.fetch_add(1, std::memory_order_relaxed);
    if (state.args.caller)
      caf::anon_send(state.args.caller, chunk_atom_v, state.args.tag,
                     std::move(m.get_mutable_as<std::string>(1)));
    return;
  }
  // A pending request is its call's own actor: the call id is 0.
  if (m.match_elements<input_atom, std::uint64_t, std::string>())
    return input(this, std::move(m.get_mutable_as<std::string>(2)));
  if (m.match_elements<end_input_atom, std::uint64_t>())
    return input(this, {});
  // From the caller, or from the connection when the caller died (socket
  // closed, HTTP client gone).
  if (m.match_elements<abort_atom, std::uint64_t>())
    return abandon(this);
  if (m.match_elements<response_atom, call_error>())
    // An answer that failed here (over max_frame_bytes).
    return finish(this, failed(std::move(m.get_mutable_as<call_error>(1))));
  if (m.match_elements<conn_lost_atom, std::string>())
    return finish(this, failed(manager_errors::connection_closed(state.args.shared->runtime_id,
                                                                 method_name(state.args.method))));
  if (m.match_elements<expired_atom>())
    return on_expired(this);
  if (m.match_elements<oversized_atom, call_error>())
    return on_oversized(this, m.get_mutable_as<call_error>(1));
  if (m.match_elements<cancel_atom>())
    return on_drain_cancel(this);
  spdlog::debug("pending request {}: dropped a message it does not take",
                quoted_wire_id(state.args.wire_id));
}

void pending_request_actor::on_end(const caf::error& reason) {
  if (state.args.caller) {
    // Killed with its connection at a shutdown (call_table.hpp), or by
    // something else: its caller does not monitor it
    // (call_handle::answers_at_end) and still waits.
    bool shutdown = reason == caf::exit_reason::user_shutdown;
    caf::anon_send(state.args.caller, done_atom_v, state.args.tag,
                   failed(shutdown ? manager_errors::shutting_down()
                                   : manager_errors::internal("the request ended unexpectedly")));
  }
  state.~pending_state();
}

} // namespace actor_host
