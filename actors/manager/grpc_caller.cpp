#include "actors/manager/grpc_caller.hpp"

#include "net/jsonrpc.hpp"

namespace actor_host {

namespace rpc = net::jsonrpc;

namespace {

using self_ptr = grpc_caller_actor::stateful_pointer<grpc_caller_state>;

constexpr std::uint64_t the_call = 1;

class actor_source final : public grpc_door::call_source {
public:
  explicit actor_source(grpc_caller_actor hdl) : hdl_(std::move(hdl)) {
  }
  void input(std::string json) override {
    caf::anon_send(hdl_, input_atom_v, std::move(json));
  }
  void end_input() override {
    caf::anon_send(hdl_, end_input_atom_v);
  }
  void cancelled() override {
    caf::anon_send_exit(hdl_, caf::exit_reason::user_shutdown);
  }

private:
  grpc_caller_actor hdl_;
};

void fail(self_ptr self, const std::string& error_object) {
  auto [code, message] = grpc_status_of(error_object);
  self->state.sink->fail(code, std::move(message));
  self->quit();
}

void on_done(self_ptr self, bool ok, const std::string& raw) {
  auto& st = self->state;
  if (st.pending)
    self->demonitor(st.pending.address());
  if (!ok)
    return fail(self, raw);
  rpc::object_members o;
  std::string why;
  const std::string* result = nullptr;
  if (rpc::split_object(raw, o, why))
    result = o.find("result");
  if (!result)
    return fail(self, manager_errors::internal("the runtime answered without a result"));
  st.sink->output(*result);
  self->quit();
}

void on_accepted(self_ptr self, call_actor pending) {
  auto& st = self->state;
  st.pending = pending;
  self->monitor(pending);
  for (auto& in : st.held)
    self->send(pending, input_atom_v, std::move(in));
  st.held.clear();
  st.held_bytes = 0;
  if (st.input_ended)
    self->send(pending, end_input_atom_v);
}

} // namespace

std::pair<int, std::string> grpc_status_of(const std::string& error_object) {
  int code = manager_errors::status_code_of(error_object);
  std::string message;
  rpc::object_members o, data;
  std::string why;
  if (rpc::split_object(error_object, o, why)) {
    // The Status in `data` says it best; the JSON-RPC message otherwise.
    if (auto* d = o.find("data"); d && rpc::split_object(*d, data, why))
      if (auto* m = data.find("message"))
        rpc::string_value(*m, message);
    if (message.empty())
      if (auto* m = o.find("message"))
        rpc::string_value(*m, message);
  }
  if (code <= 0 || code > 16)
    code = 2; // UNKNOWN: an error is never OK
  return {code, message.empty() ? std::string{"the call failed"} : std::move(message)};
}

grpc_caller_actor::behavior_type grpc_caller(self_ptr self, front_door door,
                                             grpc_door::call_start start,
                                             std::shared_ptr<grpc_door::call_sink> sink) {
  auto& st = self->state;
  st.door = std::move(door);
  st.sink = std::move(sink);
  self->set_down_handler([self](caf::down_msg& dm) {
    if (dm.source != self->state.pending.address())
      return;
    on_done(self, false,
            dm.reason == caf::exit_reason::user_shutdown
              ? manager_errors::shutting_down()
              : manager_errors::internal("the request ended unexpectedly"));
  });
  call_request req;
  auto error = parse_run_action(std::move(start.params), st.door.policy,
                                {start.stream, start.stream_input}, req);
  if (!error.empty()) {
    fail(self, error);
  } else {
    req.tag = the_call;
    start_call(
      self, st.door, std::move(req), self,
      [self](call_actor pending) { on_accepted(self, pending); },
      [self](bool ok, std::string raw) { on_done(self, ok, raw); });
  }
  return {
    [self](trace_atom, std::uint64_t, std::string& trace) { self->state.sink->trace(std::move(trace)); },
    [self](chunk_atom, std::uint64_t, std::string& chunk) { self->state.sink->chunk(std::move(chunk)); },
    [self](done_atom, std::uint64_t, bool ok, std::string& raw) { on_done(self, ok, raw); },
    [self](input_atom, std::string& json) {
      auto& st = self->state;
      if (st.pending)
        return self->send(st.pending, input_atom_v, std::move(json));
      // Before the call is accepted the input waits here, capped like the
      // input a pending request holds for a run not started yet.
      auto cap = st.door.policy.max_bidi_input_bytes;
      st.held_bytes += json.size();
      if (cap != 0 && st.held_bytes > cap)
        return fail(self, manager_errors::bidi_input_overflow(cap));
      st.held.push_back(std::move(json));
    },
    [self](end_input_atom) {
      auto& st = self->state;
      if (st.pending)
        self->send(st.pending, end_input_atom_v);
      else
        st.input_ended = true;
    },
  };
}

std::shared_ptr<grpc_door::call_source> start_grpc_call(caf::actor_system& sys,
                                                        caf::actor supervisor, front_door door,
                                                        grpc_door::call_start start,
                                                        std::shared_ptr<grpc_door::call_sink> sink) {
  auto caller = sys.spawn(grpc_caller, std::move(door), std::move(start), std::move(sink));
  caf::anon_send(supervisor, adopt_atom_v, caf::actor_cast<caf::actor>(caller));
  return std::make_shared<actor_source>(std::move(caller));
}

} // namespace actor_host
