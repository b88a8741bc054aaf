#include "actors/doors/grpc/grpc_caller.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host {

namespace rpc = wire::jsonrpc;

namespace {

using self_ptr = grpc_caller_actor::stateful_pointer<grpc_caller_state>;

/// The door's end of one call: messages to its hub, tagged with the call.
class hub_source final : public grpc_door::call_source {
public:
  hub_source(grpc_caller_actor hub, std::uint64_t tag) : hub_(std::move(hub)), tag_(tag) {
  }
  void input(std::string json) override {
    caf::anon_send(hub_, input_atom_v, tag_, std::move(json));
  }
  void end_input() override {
    caf::anon_send(hub_, end_input_atom_v, tag_);
  }
  void cancelled() override {
    caf::anon_send(hub_, cancel_atom_v, tag_);
  }

private:
  grpc_caller_actor hub_;
  std::uint64_t tag_;
};

grpc_call* find_call(self_ptr self, std::uint64_t tag) {
  return self->state.calls.find(tag);
}

void forget(self_ptr self, std::uint64_t tag) {
  self->state.calls.forget(self, tag);
}

void fail(self_ptr self, std::uint64_t tag, const call_error& error) {
  if (auto* c = find_call(self, tag)) {
    auto [code, message] = grpc_status_of(error);
    c->sink->fail(code, std::move(message));
  }
  forget(self, tag);
}

void on_done(self_ptr self, std::uint64_t tag, call_end& end) {
  auto* c = find_call(self, tag);
  if (!c)
    return;
  if (!end.ok)
    return fail(self, tag, end.error);
  // The one member wanted, as a view: split_object copied every member of
  // the answer into strings of their own, per call.
  std::string_view result;
  if (!rpc::find_members(end.result, {"result"}, &result) || result.empty())
    return fail(self, tag, manager_errors::internal("the runtime answered without a result"));
  c->sink->output(std::string{result});
  forget(self, tag);
}

void on_accepted(self_ptr self, std::uint64_t tag, const call_handle& pending) {
  // A call whose client left before we learned who runs it is aborted.
  if (!take_accepted(self, find_call(self, tag), pending))
    return;
  // The gateway's calls (a shared actor) end with a `done` however it ends,
  // and so do this node's pending requests: only another node's is watched.
  self->state.calls.watch(self, tag, pending);
}

void start(self_ptr self, std::uint64_t tag, grpc_door::call_start& start,
           std::shared_ptr<grpc_door::call_sink>& sink) {
  auto& st = self->state;
  auto [it, fresh] = st.calls.by_tag.try_emplace(tag);
  if (!fresh)
    return; // tags are unique per hub; a repeat is a bug upstream, not a second call
  it->second.sink = std::move(sink);
  call_request req;
  auto error = parse_run_action(std::move(start.params), st.door.policy,
                                {start.stream, start.stream_input}, req);
  if (error)
    return fail(self, tag, *error);
  req.tag = tag;
  start_call(
    self, st.door, std::move(req), self,
    [self, tag](call_handle pending) { on_accepted(self, tag, pending); },
    [self, tag](call_end end) { on_done(self, tag, end); });
}

} // namespace

grpc_caller_state::~grpc_caller_state() {
  for (auto& [tag, c] : calls.by_tag)
    if (c.sink)
      c.sink->fail(14, "the manager is shutting down"); // UNAVAILABLE
}

std::pair<int, std::string> grpc_status_of(const call_error& error) {
  int code = error.status;
  if (code <= 0 || code > 16)
    code = 2; // UNKNOWN: an error is never OK
  return {code, error.message.empty() ? std::string{"the call failed"} : error.message};
}

grpc_caller_actor::behavior_type grpc_caller(self_ptr self, front_door door) {
  self->state.door = std::move(door);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto tag = self->state.calls.gone(dm);
    if (!tag)
      return;
    auto end = failed(dm.reason == caf::exit_reason::user_shutdown
                        ? manager_errors::shutting_down()
                        : manager_errors::internal("the request ended unexpectedly"));
    on_done(self, *tag, end);
  });
  return {
    [self](call_atom, std::uint64_t tag, grpc_door::call_start& cs,
           std::shared_ptr<grpc_door::call_sink>& sink) { start(self, tag, cs, sink); },
    [self](trace_atom, std::uint64_t tag, std::string& trace) {
      if (auto* c = find_call(self, tag))
        c->sink->trace(std::move(trace));
    },
    [self](chunk_atom, std::uint64_t tag, std::string& chunk) {
      if (auto* c = find_call(self, tag))
        c->sink->chunk(std::move(chunk));
    },
    [self](done_atom, std::uint64_t tag, call_end& end) { on_done(self, tag, end); },
    [self](input_atom, std::uint64_t tag, std::string& json) {
      auto* c = find_call(self, tag);
      if (!c)
        return;
      if (c->pending)
        return c->pending.send_input(self, std::move(json));
      // Before the call is accepted the input waits here, capped like the
      // input a pending request holds for a run not started yet.
      auto cap = self->state.door.policy.max_bidi_input_bytes;
      if (!c->held.hold(std::move(json), cap))
        return fail(self, tag, manager_errors::bidi_input_overflow(cap));
    },
    [self](end_input_atom, std::uint64_t tag) {
      auto* c = find_call(self, tag);
      if (!c)
        return;
      if (c->pending)
        c->pending.send_end_input(self);
      else
        c->held.hold_end();
    },
    [self](cancel_atom, std::uint64_t tag) {
      // The client left: nothing reaches its sink any more; the run is
      // abandoned (an accepted call's pending request cancels it; one not
      // accepted yet is aborted in on_accepted).
      auto* c = find_call(self, tag);
      if (!c)
        return;
      if (c->pending)
        c->pending.send_abort(self);
      c->sink = nullptr;
      forget(self, tag);
    },
  };
}

grpc_call_starter::grpc_call_starter(std::vector<grpc_caller_actor> hubs)
  : hubs_(std::move(hubs)) {
}

std::shared_ptr<grpc_door::call_source>
grpc_call_starter::operator()(grpc_door::call_start start,
                              std::shared_ptr<grpc_door::call_sink> sink) {
  auto [hub, tag] = hubs_.next();
  caf::anon_send(hub, call_atom_v, tag, std::move(start), std::move(sink));
  return std::make_shared<hub_source>(hub, tag);
}

} // namespace actor_host
