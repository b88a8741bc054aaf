#include "actors/dispatch/failover_hold.hpp"

#include "actors/call/errors.hpp"
#include "actors/dispatch/call_path.hpp"
#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

using self_ptr = failover_hold_actor::stateful_pointer<failover_hold_state>;
using clock = std::chrono::steady_clock;

void count_held(std::int64_t delta) {
  obs::global().failover_held.fetch_add(delta, std::memory_order_relaxed);
}

// The name a held call waits for (its runtime id, else its service).
const std::string& awaited(const call_request& req) {
  return req.runtime_id.empty() ? req.runtime_name : req.runtime_id;
}

// Until when the routes say `req`'s runtime or service is moving; min() if
// it is not (any more).
clock::time_point moving_until(const route_table& routes, const call_request& req) {
  const auto& m = req.runtime_id.empty() ? routes.moving_services : routes.moving_ids;
  auto i = m.find(awaited(req));
  return i == m.end() ? clock::time_point::min() : i->second;
}

void arm_wake(self_ptr self) {
  arm_deadline_wake(self, self->state.calls, self->state.wake_at);
}

void release(self_ptr self, waiting_call& h) {
  self->state.bytes -= h.req.params.size();
  count_held(-1);
}

// Routes the held calls again: those that go somewhere now are handed on
// (or fail as they would have), the others keep waiting.
void route_again(self_ptr self, const front_door& door) {
  auto& st = self->state;
  auto routes = door.routes->current();
  for (auto i = st.calls.begin(); i != st.calls.end();) {
    auto route = route_call(*routes, i->req);
    if (route.how == call_route::kind::hold) {
      ++i;
      continue;
    }
    auto h = std::move(*i);
    i = st.calls.erase(i);
    release(self, h);
    auto waited = self->clock().now() - h.since;
    spdlog::debug("failover hold: a call for {} goes on after {} ms", awaited(h.req),
                  std::chrono::duration_cast<std::chrono::milliseconds>(waited).count());
    // The deadline runs from when the call came, not from the hand-on.
    if (h.req.timeout.count() > 0)
      h.req.timeout = std::max(caf::timespan{std::chrono::milliseconds{1}},
                               h.req.timeout - std::chrono::duration_cast<caf::timespan>(waited));
    auto answer = h.answer;
    detail::dispatch_route(
      self, door, routes, std::move(route), std::move(h.req), std::move(h.caller),
      [answer](call_handle pending) mutable { answer.deliver(std::move(pending)); },
      [answer](call_end e) mutable { answer.deliver(call_refusal(std::move(e.error))); },
      caf::actor_addr{});
  }
}

void give_up_due(self_ptr self) {
  auto& st = self->state;
  auto now = self->clock().now();
  take_due(st.calls, now, [&](waiting_call& w) {
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - w.since);
    bool own_deadline = w.req.timeout.count() > 0 && w.since + w.req.timeout <= now;
    obs::global().failover_hold_expired.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("failover hold: {} did not come back within {} ms; the call fails",
                 awaited(w.req), waited.count());
    w.answer.deliver(call_refusal(
      own_deadline
        ? manager_errors::make_error(wire::status_code::deadline_exceeded,
                                     "the call's deadline passed while " + awaited(w.req)
                                       + " was moving to another node")
        : manager_errors::make_error(wire::status_code::unavailable,
                                     awaited(w.req) + " was on a node that was lost and did "
                                     "not register again within the failover hold ("
                                       + std::to_string(waited.count()) + " ms)")));
    release(self, w);
  });
}

} // namespace

failover_hold_actor::behavior_type failover_hold(self_ptr self, front_door door,
                                                 failover_hold_limits limits) {
  door.hold = nullptr; // a call is held once
  // What is held when the manager stops fails as if no hold had been.
  self->attach_functor([self] {
    auto& st = self->state;
    for (auto& h : st.calls) {
      h.answer.deliver(call_refusal(manager_errors::make_error(
        wire::status_code::unavailable, "the manager stopped while " + awaited(h.req)
                                              + " was moving to another node")));
      count_held(-1);
    }
    st.calls.clear();
  });
  return {
    [self, door, limits](call_atom, call_request& req,
                         caller_actor& caller) -> caf::result<call_handle> {
      auto& st = self->state;
      auto routes = door.routes->current();
      auto until = moving_until(*routes, req);
      auto now = self->clock().now();
      if (st.calls.size() >= limits.max_calls
          || st.bytes + req.params.size() > limits.max_bytes) {
        obs::global().failover_hold_refused.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("failover hold full ({} calls, {} bytes): a call for {} fails at once",
                     st.calls.size(), st.bytes, awaited(req));
        return call_refusal(manager_errors::make_error(
          wire::status_code::unavailable,
          awaited(req) + " is moving to another node and the failover hold is full"));
      }
      auto deadline = until;
      if (req.timeout.count() > 0)
        deadline = std::min(deadline, now + req.timeout);
      auto answer = self->make_response_promise();
      st.bytes += req.params.size();
      count_held(1);
      obs::global().failover_holds.fetch_add(1, std::memory_order_relaxed);
      st.calls.push_back({std::move(req), std::move(caller), answer, now, deadline});
      // The runtime may be back already (routes changed since the door looked).
      route_again(self, door);
      give_up_due(self);
      arm_wake(self);
      return answer;
    },
    [self, door](changed_atom, const std::string&) {
      route_again(self, door);
    },
    [self](expired_atom) {
      self->state.wake_at = clock::time_point::max();
      give_up_due(self);
      arm_wake(self);
    },
  };
}

} // namespace actor_host
