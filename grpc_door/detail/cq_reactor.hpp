#pragma once

// Private to grpc_door/*.cpp: includes gRPC's headers.
//
// The door's calls run on grpc++'s async API with a completion-queue thread
// of ours, not on its callback API: the callback API hands every completion
// to its own "nexting" threads and every call's end to its executor, and on
// 2 cores those hops cost more than the call (bench: a trivial echo behind
// one thread hand-off took 50 µs of server CPU per call that way and 30 %
// less on the async API with one thread). cq_reactor keeps the reactor
// shape (the names and guarantees of grpc::ServerGenericBidiReactor) so the
// door's services read the same on either.

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace actor_host::grpc_door::detail {

/// The IP of a gRPC peer string ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000").
std::string peer_ip(std::string_view peer);

/// What the completion-queue thread gets back from Next().
class cq_tag {
public:
  virtual void on_event(bool ok) = 0;

protected:
  ~cq_tag() = default;
};

class cq_reactor;

/// The reactors of one server alive now: the server shuts its completion
/// queue only once none is left (an operation started after that would
/// abort the process).
class reactor_count {
public:
  void add() {
    std::lock_guard<std::mutex> guard{mtx_};
    ++n_;
  }
  void remove() {
    std::lock_guard<std::mutex> guard{mtx_};
    if (--n_ == 0)
      cv_.notify_all();
  }
  /// False when reactors were still alive at `deadline`.
  bool wait_for_none(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock{mtx_};
    return cv_.wait_until(lock, deadline, [this] { return n_ == 0; });
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::size_t n_ = 0;
};

/// One call of the generic service: its context, its stream and a tag per
/// kind of operation (at most one of each is in flight). Requested by the
/// server, then owned by the reactor that serves the call.
struct cq_call {
  enum class event { request, read, write, finish, done };

  struct tag final : cq_tag {
    tag(cq_call* c, event e) : call(c), ev(e) {
    }
    void on_event(bool ok) override {
      call->on_event(ev, ok);
    }
    cq_call* call;
    event ev;
  };

  /// Called on the completion-queue thread with the request's outcome (ok:
  /// a call arrived; not ok: the server is shutting down and `this` is the
  /// callee's to delete).
  using on_request_fn = void (*)(void* server, cq_call* call, bool ok);
  /// Called on the completion-queue thread when a served call is over
  /// (before its reactor hears it): the server judges how it ended.
  using on_done_fn = void (*)(void* server, cq_call& call);

  cq_call(on_request_fn f, on_done_fn d, void* server, reactor_count* live)
    : on_request(f), on_done(d), server(server), live(live) {
  }

  void on_event(event ev, bool ok);

  /// The client's address as gRPC names it ("ipv4:127.0.0.1:5000") and its
  /// IP, asked of gRPC once per call: ctx.peer() takes the call's lock and
  /// copies the string each time, and admission, the per-address count, the
  /// call's start and the judging of its end each want it. The door's
  /// thread only (or after the call was handed on from it).
  const std::string& peer() {
    if (!have_peer_) {
      peer_ = ctx.peer();
      ip_ = detail::peer_ip(peer_);
      have_peer_ = true;
    }
    return peer_;
  }
  const std::string& ip() {
    peer();
    return ip_;
  }

  grpc::GenericServerContext ctx;
  grpc::GenericServerAsyncReaderWriter stream{&ctx};
  tag request_tag{this, event::request};
  tag read_tag{this, event::read};
  tag write_tag{this, event::write};
  tag finish_tag{this, event::finish};
  tag done_tag{this, event::done};
  on_request_fn on_request;
  on_done_fn on_done;
  void* server;
  reactor_count* live;
  cq_reactor* reactor = nullptr;
  bool done_early = false; // the done notification came before the reactor

private:
  bool have_peer_ = false;
  std::string peer_;
  std::string ip_;
};

/// Serves one call with the reactor shape: StartX may be called from any
/// thread (one read and one write or finish in flight at a time), OnX run on
/// the completion-queue thread, OnCancel comes at most once when the call
/// was cancelled (client cancel, deadline, connection gone, shutdown), and
/// OnDone comes last, once the finish and every operation have completed.
/// Finish must be called exactly once, also after OnCancel.
class cq_reactor {
public:
  explicit cq_reactor(std::unique_ptr<cq_call> call);
  virtual ~cq_reactor();
  cq_reactor(const cq_reactor&) = delete;
  cq_reactor& operator=(const cq_reactor&) = delete;

  void StartRead(grpc::ByteBuffer* buf);
  void StartWrite(const grpc::ByteBuffer* buf, grpc::WriteOptions opts = {});
  /// The last message and the status in one operation: no OnWriteDone.
  void StartWriteAndFinish(const grpc::ByteBuffer* buf, grpc::WriteOptions opts,
                           grpc::Status status);
  void Finish(grpc::Status status);
  /// Keeps OnDone away until the matching RemoveHold (grpc++'s reactors
  /// have the same pair). RemoveHold on the completion-queue thread only:
  /// it may run OnDone.
  void AddHold() {
    holds_.fetch_add(1, std::memory_order_relaxed);
  }
  void RemoveHold() {
    release();
  }

  virtual void OnReadDone(bool /*ok*/) {
  }
  virtual void OnWriteDone(bool /*ok*/) {
  }
  virtual void OnCancel() {
  }
  virtual void OnDone() = 0;

  grpc::GenericServerContext& context() {
    return call_->ctx;
  }
  /// The call's peer and its IP, asked of gRPC once (cq_call::peer).
  const std::string& peer() {
    return call_->peer();
  }
  const std::string& peer_ip() {
    return call_->ip();
  }

private:
  friend struct cq_call;
  void completed(cq_call::event ev, bool ok);
  void release();

  std::unique_ptr<cq_call> call_;
  // What keeps OnDone away: the done notification, the finish, and each
  // read or write in flight.
  std::atomic<int> holds_{2};
};

} // namespace actor_host::grpc_door::detail
