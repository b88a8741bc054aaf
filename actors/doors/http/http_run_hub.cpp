#include "actors/doors/http/http_run_hub.hpp"

#include "actors/doors/http/http_caller.hpp"

namespace actor_host {

namespace {

using self_ptr = http_run_hub_actor::stateful_pointer<http_run_hub_state>;

void on_done(self_ptr self, std::uint64_t tag, call_end& end) {
  auto* c = self->state.calls.find(tag);
  if (!c)
    return;
  respond_end(*c->run->res, end, std::move(c->trace_id), {}, c->run->tools_shape);
  self->state.calls.forget(self, tag); // the slot, responder and count go with it
}

void fail(self_ptr self, std::uint64_t tag, const call_error& error) {
  auto end = failed(error);
  on_done(self, tag, end);
}

void on_accepted(self_ptr self, std::uint64_t tag, const call_handle& pending) {
  auto* c = self->state.calls.find(tag);
  if (!c) {
    // Its client left before we learned who runs it.
    pending.send_abort(self);
    return;
  }
  c->pending = pending;
  self->state.calls.watch(self, tag, pending);
}

void start(self_ptr self, std::uint64_t tag, std::shared_ptr<http_run>& run) {
  auto& st = self->state;
  auto [it, fresh] = st.calls.by_tag.try_emplace(tag);
  if (!fresh)
    return; // tags are unique per hub; a repeat is a bug upstream, not a second call
  it->second.run = std::move(run);
  auto& req = it->second.run->req;
  call_request call;
  if (auto error = parse_run_action(std::move(req.body), st.door.policy, {false, false}, call))
    return fail(self, tag, *error);
  // Every call the door makes counts its hops (http_caller's begin).
  if (auto error = count_hop(req.header("x-actor-host-hops"), call))
    return fail(self, tag, *error);
  call.tag = tag;
  start_call(
    self, st.door, std::move(call), self,
    [self, tag](call_handle pending) { on_accepted(self, tag, pending); },
    [self, tag](call_end end) { on_done(self, tag, end); });
}

} // namespace

http_run_hub_actor::behavior_type http_run_hub(self_ptr self, front_door door) {
  self->state.door = std::move(door);
  self->set_down_handler([self](caf::down_msg& dm) {
    if (auto tag = self->state.calls.gone(dm))
      fail(self, *tag,
           dm.reason == caf::exit_reason::user_shutdown
             ? manager_errors::shutting_down()
             : manager_errors::internal("the request ended unexpectedly"));
  });
  return {
    [self](call_atom, std::uint64_t tag, std::shared_ptr<http_run>& run) {
      start(self, tag, run);
    },
    [self](trace_atom, std::uint64_t tag, std::string& trace) {
      if (auto* c = self->state.calls.find(tag))
        c->trace_id = std::move(trace);
    },
    [](chunk_atom, std::uint64_t, const std::string&) {},
    [self](done_atom, std::uint64_t tag, call_end& end) { on_done(self, tag, end); },
    [self](cancel_atom, std::uint64_t tag) {
      // The client left: nothing is answered; the run is abandoned (an
      // accepted call's pending request cancels it; one not accepted yet is
      // aborted in on_accepted).
      auto* c = self->state.calls.find(tag);
      if (!c)
        return;
      if (c->pending)
        c->pending.send_abort(self);
      self->state.calls.forget(self, tag);
    },
  };
}

http_run_starter::http_run_starter(std::vector<http_run_hub_actor> hubs)
  : hubs_(std::move(hubs)) {
}

void http_run_starter::operator()(std::shared_ptr<http_run> run) {
  auto [hub, tag] = hubs_.next();
  // Set before the call starts: the session calls it (on its strand) if the
  // client hangs up before the answer is written.
  run->res->on_abort([hub, tag] { caf::anon_send(hub, cancel_atom_v, tag); });
  caf::anon_send(hub, call_atom_v, tag, std::move(run));
}

} // namespace actor_host
