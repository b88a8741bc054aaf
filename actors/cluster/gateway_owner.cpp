#include "actors/cluster/gateway_state.hpp"

#include "actors/call/errors.hpp"
#include "wire/iii_protocol.hpp"

#include <caf/all.hpp>

namespace actor_host::gateway_detail {

namespace {

void count_in(std::int64_t delta) {
  obs::global().remote_calls_inbound.fetch_add(delta, std::memory_order_relaxed);
}

} // namespace

void forget_in(self_ptr self, std::unordered_map<std::uint64_t, inbound>::iterator i) {
  self->state.in_by_origin.erase({i->second.origin.address(), i->second.id});
  self->state.in.erase(i);
  count_in(-1);
}

namespace {

/// Whether `target` names a live actor of this node. A handle to a local
/// actor that has ended arrives null (BASP finds no such actor here): the
/// connection ended after the entry node routed the call, and its caller
/// is owed an answer all the same. A peer names only this node's actors.
bool is_local(self_ptr self, const caf::actor& target) {
  return target && target.node() == self->node();
}

gw_event failure(std::uint64_t id, call_error error) {
  return gw_event{gw_event::done_failed, id, {}, std::move(error)};
}

/// Answers the call `id` of `origin` at once, without running it.
void refuse(self_ptr self, const gateway_actor& origin, std::uint64_t id, call_error error) {
  if (id != 0)
    post(self, origin, failure(id, std::move(error)));
}

call_error function_gone(const std::string& function_id) {
  return manager_errors::iii_error(wire::iii::code::function_not_found,
                                   "Function " + function_id + " is gone: its worker disconnected");
}

/// A new call from `origin` to the local actor it names.
std::uint64_t start_in(self_ptr self, const gateway_actor& origin, std::uint64_t id) {
  auto& st = self->state;
  watch(self, origin);
  auto tag = st.next_tag++;
  st.in_by_origin[{origin.address(), id}] = tag;
  st.in.emplace(tag, inbound{origin, id, {}, {}});
  count_in(1);
  return tag;
}

/// The inbound call `id` of `origin`.
std::unordered_map<std::uint64_t, inbound>::iterator find_in(self_ptr self,
                                                             const gateway_actor& origin,
                                                             std::uint64_t id) {
  auto& st = self->state;
  auto k = st.in_by_origin.find({origin.address(), id});
  return k == st.in_by_origin.end() ? st.in.end() : st.in.find(k->second);
}

void accepted(self_ptr self, std::uint64_t tag, call_handle& pending) {
  // Aborted, or already answered: if it still runs, it is aborted.
  auto i = self->state.in.find(tag);
  take_accepted(self, i == self->state.in.end() ? nullptr : &i->second, pending);
}

void run_call(self_ptr self, const gateway_actor& origin, gw_request& r) {
  auto method = std::string{method_name(r.req.method)};
  if (!is_local(self, r.conn))
    return refuse(self, origin, r.id, manager_errors::connection_closed(r.text, method));
  auto tag = start_in(self, origin, r.id);
  r.req.tag = tag;
  self
    ->request(caf::actor_cast<call_target_actor>(r.conn), caf::infinite, call_atom_v,
              std::move(r.req), caf::actor_cast<caller_actor>(self))
    .then([self, tag](call_handle& pending) { accepted(self, tag, pending); },
          [self, tag, target = std::move(r.text), method](caf::error&) {
            // The connection ended between the entry node's routing and now.
            auto i = self->state.in.find(tag);
            if (i == self->state.in.end())
              return;
            post(self, i->second.origin,
                 failure(i->second.id, manager_errors::connection_closed(target, method)));
            forget_in(self, i);
          });
}

void run_invocation(self_ptr self, const gateway_actor& origin, gw_request& r) {
  if (!is_local(self, r.conn))
    return refuse(self, origin, r.inv.wants_reply ? r.id : 0, function_gone(r.inv.function_id));
  auto worker = caf::actor_cast<worker_connection_actor>(r.conn);
  if (r.id == 0 || !r.inv.wants_reply) {
    self->send(worker, execute_atom_v, caller_actor{}, std::uint64_t{0}, std::move(r.inv));
    return;
  }
  auto tag = start_in(self, origin, r.id);
  // A request, not a send: the worker's connection may have ended after the
  // entry node routed the call here (its function set not yet withdrawn
  // there), and a message to an ended actor is dropped without a word.
  auto function_id = r.inv.function_id;
  self
    ->request(worker, caf::infinite, execute_atom_v, caf::actor_cast<caller_actor>(self), tag,
              std::move(r.inv))
    .then([] {},
          [self, tag, function_id](caf::error&) {
            answer(self, tag, failure(0, function_gone(function_id)));
          });
}

} // namespace

void on_requests(self_ptr self, const gateway_actor& origin, std::vector<gw_request>& requests) {
  for (auto& r : requests) {
    switch (r.kind) {
      case gw_request::call:
        run_call(self, origin, r);
        break;
      case gw_request::exec:
        run_invocation(self, origin, r);
        break;
      case gw_request::input:
      case gw_request::end_input: {
        if (r.kind == gw_request::input && r.text.empty())
          break;
        auto i = find_in(self, origin, r.id);
        if (i == self->state.in.end())
          break;
        auto& c = i->second;
        if (!c.pending) {
          if (r.kind == gw_request::end_input)
            c.held.hold_end();
          else
            (void) c.held.hold(std::move(r.text), 0); // no cap here: see inbound::held
        } else if (r.kind == gw_request::end_input)
          c.pending.send_end_input(self);
        else
          c.pending.send_input(self, std::move(r.text));
        break;
      }
      case gw_request::abort: {
        auto i = find_in(self, origin, r.id);
        if (i == self->state.in.end())
          break;
        if (i->second.pending)
          i->second.pending.send_abort(self);
        forget_in(self, i);
        break;
      }
      default:
        break;
    }
  }
}

/// An event of a call another node made, for its gateway.
void answer(self_ptr self, std::uint64_t tag, gw_event e) {
  auto i = self->state.in.find(tag);
  if (i == self->state.in.end())
    return;
  e.id = i->second.id;
  bool done = e.kind == gw_event::done_ok || e.kind == gw_event::done_failed;
  post(self, i->second.origin, std::move(e));
  if (done)
    forget_in(self, i);
}


} // namespace actor_host::gateway_detail
