#pragma once

// Private to grpc_door/*.cpp: includes gRPC's headers.

#include "grpc_door/detail/cq_reactor.hpp"

#include <grpcpp/alarm.h>
#include <grpcpp/completion_queue.h>

#include <mutex>
#include <vector>

namespace actor_host::grpc_door::detail {

/// What the door's thread is woken for (cq_wakeups::push).
class wakeup_target {
public:
  /// On the door's thread.
  virtual void woken() = 0;

protected:
  ~wakeup_target() = default;
};

/// Reactors that another thread (the actors') has given something to send:
/// their gRPC operations are started on the door's thread, one wake-up per
/// batch. Starting them where the answer comes from ran gRPC's write path
/// (its transport lock, HPACK, the sendmsg) on the I/O thread, and each
/// write's completion then woke the door's thread on its own. Measured on
/// bench_grpc_floor, answers handed back through an inbox like this one
/// cost 0.63-0.83x the server CPU per call of answers started from the
/// other thread one by one; in the manager, 0.6-0.8x the CPU per gRPC call
/// (bench/runs/2026-12-07-grpc-cost.md).
///
/// Bounded without a cap of its own: a reactor is queued at most once until
/// it is woken (its owner keeps a flag under its lock) and only while it
/// lives, so the queue never holds more than the calls open on the
/// listener (server_options::max_calls).
class cq_wakeups final : public cq_tag {
public:
  /// Before the first push: the queue the door's thread polls.
  void bind(grpc::CompletionQueue* cq) {
    cq_ = cq;
  }

  /// Any thread: `t` is woken on the door's thread. The caller keeps it
  /// alive until then (a hold on its reactor) and pushes it at most once
  /// until woken.
  void push(wakeup_target* t) {
    bool first = false;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      first = queue_.empty();
      queue_.push_back(t);
    }
    // Only the push that found the queue empty sets the alarm; the next
    // can only come once the door's thread took the queue, after the
    // alarm's event came back (gRPC lets an alarm be set again then).
    if (first)
      alarm_.Set(cq_, gpr_inf_past(GPR_CLOCK_MONOTONIC), static_cast<cq_tag*>(this));
  }

  /// The alarm's event, on the door's thread.
  void on_event(bool /*ok*/) override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      batch_.swap(queue_);
    }
    for (auto* t : batch_)
      t->woken();
    batch_.clear();
  }

  /// Reactors queued now (tests, the bound).
  std::size_t queued() {
    std::lock_guard<std::mutex> guard{mtx_};
    return queue_.size();
  }

  /// Whether this thread is the door's (set by the poller).
  static bool on_door_thread() {
    return door_thread_;
  }
  static void mark_door_thread() {
    door_thread_ = true;
  }

private:
  static inline thread_local bool door_thread_ = false;
  grpc::CompletionQueue* cq_ = nullptr;
  grpc::Alarm alarm_;
  std::mutex mtx_;
  std::vector<wakeup_target*> queue_;
  std::vector<wakeup_target*> batch_; // the door's thread only
};

} // namespace actor_host::grpc_door::detail
