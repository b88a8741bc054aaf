#include "actors/dispatch/service_queue.hpp"

#include "actors/call/errors.hpp"
#include "actors/dispatch/call_path.hpp"
#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

using self_ptr = service_queue_actor::stateful_pointer<service_queue_state>;
using clock = std::chrono::steady_clock;

void count_queued(self_ptr self, std::int64_t delta) {
  self->state.args.queued->fetch_add(delta, std::memory_order_relaxed);
  obs::global().service_calls_queued.fetch_add(delta, std::memory_order_relaxed);
}

void arm_wake(self_ptr self) {
  arm_deadline_wake(self, self->state.calls, self->state.wake_at);
}

// Hands waiting calls, oldest first, to replicas with room.
void hand_on(self_ptr self) {
  auto& st = self->state;
  while (!st.calls.empty()) {
    auto routes = st.args.routes->current();
    auto* replica = reserve_replica(*routes, st.args.service);
    if (!replica)
      return;
    auto w = std::move(st.calls.front());
    st.calls.pop_front();
    count_queued(self, -1);
    auto waited = self->clock().now() - w.since;
    obs::global().service_queue_wait.observe(waited);
    // The deadline runs from when the call came, not from the hand-on.
    if (w.req.timeout.count() > 0)
      w.req.timeout = std::max(caf::timespan{std::chrono::milliseconds{1}},
                               w.req.timeout - std::chrono::duration_cast<caf::timespan>(waited));
    w.req.counted = true;
    auto method = w.req.method;
    self
      ->request(replica->conn, answered_in_handler, call_atom_v, std::move(w.req),
                std::move(w.caller))
      .then([answer = w.answer](call_handle& call) mutable { answer.deliver(std::move(call)); },
            [answer = w.answer, load = replica->load, id = replica->runtime_id,
             method](caf::error&) mutable {
              // The replica ended between the pick and the call.
              load->release();
              answer.deliver(
                call_refusal(manager_errors::connection_closed(id, method_name(method))));
            });
  }
}

void give_up_due(self_ptr self) {
  auto& st = self->state;
  auto now = self->clock().now();
  take_due(st.calls, now, [&](waiting_call& w) {
    obs::global().service_queue_timeouts.fetch_add(1, std::memory_order_relaxed);
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - w.since);
    w.answer.deliver(call_refusal(manager_errors::queue_timed_out(st.args.service, waited)));
    count_queued(self, -1);
  });
}

} // namespace

service_queue_actor::behavior_type service_queue(self_ptr self, service_queue_args args) {
  self->state.args = std::move(args);
  // The directory ends a queue when its service's last replica left.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& st = self->state;
    for (auto& w : st.calls)
      w.answer.deliver(call_refusal(manager_errors::make_error(
        wire::status_code::unavailable,
        "Service " + st.args.service + " has no replica any more")));
    count_queued(self, -static_cast<std::int64_t>(st.calls.size()));
    st.calls.clear();
    self->quit(msg.reason);
  });
  return {
    [self](call_atom, call_request& req, caller_actor& caller) -> caf::result<call_handle> {
      auto& st = self->state;
      if (st.calls.size() >= st.args.max_queued) {
        obs::global().service_calls_refused.fetch_add(1, std::memory_order_relaxed);
        spdlog::debug("service {}: queue full ({} calls), refusing a call", st.args.service,
                      st.calls.size());
        return call_refusal(manager_errors::service_busy(st.args.service, st.calls.size()));
      }
      auto now = self->clock().now();
      auto deadline = req.timeout.count() > 0 ? now + req.timeout : clock::time_point::max();
      auto answer = self->make_response_promise();
      st.calls.push_back({std::move(req), std::move(caller), answer, now, deadline});
      count_queued(self, 1);
      // A replica may have finished a call between the door's look and now:
      // its slot message came before this call and found nothing waiting.
      hand_on(self);
      arm_wake(self);
      return answer;
    },
    [self](slot_atom) { hand_on(self); },
    [self](expired_atom) {
      self->state.wake_at = clock::time_point::max();
      give_up_due(self);
      arm_wake(self);
    },
  };
}

} // namespace actor_host
