// One call of a catalog method: reads the request (or, bidi, the input
// stream), hands the call to the actor side as JSON and writes what comes
// back. OnX run on the door's completion-queue thread and the actor calls
// the sink on CAF's; the state both touch is under one mutex, and every gRPC
// operation is started after it is released (decided under the lock, so
// there is one writer and Finish comes once, after the last write). What
// the actors send is started on the door's thread too: the sink queues the
// call there (door_state::wakeups, one wake-up per batch), holding it.

#include "grpc_door/detail/door_state.hpp"
#include "grpc_door/detail/response_queue.hpp"
#include "grpc_door/detail/run_params.hpp"
#include "obs/metrics.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

namespace actor_host::grpc_door::detail {

namespace {

class action_call;
class sink_impl;

template <class F>
void with_call(sink_impl& s, F f);

/// The actor's handle on the call (and the shutdown's): forwards to the
/// reactor while it lives.
class sink_impl final : public call_sink, public open_action {
public:
  explicit sink_impl(action_call* call) : call_(call) {
  }
  void trace(std::string trace_id) override;
  void chunk(std::string json) override;
  void output(std::string json) override;
  void fail(int code, std::string message) override;
  void abort(grpc::Status status) override;

  std::mutex mtx; // guards the reactor's state too
  action_call* call_;
};

class action_call final : public counted_reactor,
                          public first_message_waiter,
                          public wakeup_target {
public:
  action_call(door_ptr door, std::shared_ptr<const catalog> cat, const catalog_method* m,
              std::unique_ptr<cq_call> call)
    : counted_reactor(std::move(door), std::move(call)),
      catalog_(std::move(cat)),
      method_(m),
      ctx_(&context()),
      sink_(std::make_shared<sink_impl>(this)) {
    door_->action_started(sink_);
    door_->await_first_message(*this);
    StartRead(&in_);
  }

  ~action_call() override {
    door_->stop_waiting(*this);
    door_->action_ended(sink_);
  }

  // --- gRPC's side ---

  void OnReadDone(bool ok) override {
    bool bidi = method_->kind == method_kind::bidi_streaming;
    door_->stop_waiting(*this);
    {
      // Ended before this read completed (first_message_overdue, a
      // shutdown): nothing is started or read any more.
      std::lock_guard<std::mutex> guard{sink_->mtx};
      if (ended_ && !source_)
        return;
    }
    if (!bidi && started_) {
      // The read behind the one request message of a unary or
      // server-streaming call: the client's end of the stream, or a second
      // message, which the method does not take (its run is cancelled).
      if (ok)
        fail_here(grpc::StatusCode::INVALID_ARGUMENT,
                  "this method takes one request message; the call sent more");
      return;
    }
    if (!started_) {
      started_ = true;
      if (!bidi && !ok)
        return fail_here(grpc::StatusCode::INVALID_ARGUMENT, "the call sent no request message");
      std::string input;
      if (ok && !read_input(input))
        return;
      if (!start(bidi ? std::string_view{} : std::string_view{input}))
        return;
      if (!bidi) {
        // A second message would be a protocol error: the run starts now
        // and this read sees whether the stream ends here.
        StartRead(&in_);
        return;
      }
      if (ok)
        source_->input(std::move(input));
    } else if (ok) {
      std::string input;
      if (!read_input(input))
        return;
      source_->input(std::move(input));
    }
    if (!ok) {
      source_->end_input();
      return;
    }
    if (bidi)
      StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> guard{sink_->mtx};
      queued_bytes_ -= held_bytes(out_.front());
      out_.pop_front();
      writing_ = false;
      if (!ok) {
        // The client is gone; OnCancel follows.
        drop_queue();
        if (!finish_)
          finish_ = grpc::Status{grpc::StatusCode::CANCELLED, "the client left"};
      }
    }
    pump();
  }

  void OnCancel() override {
    std::shared_ptr<call_source> src;
    {
      std::lock_guard<std::mutex> guard{sink_->mtx};
      drop_queue();
      if (!ended_)
        src = source_;
      ended_ = true;
      if (!finish_)
        finish_ = grpc::Status{grpc::StatusCode::CANCELLED, "the call was cancelled"};
    }
    if (src)
      src->cancelled();
    pump();
  }

  /// The door's thread, after a sink event queued the call: starts what
  /// the actors gave it, then lets go of the hold taken when it was queued
  /// (which may end the call).
  void woken() override {
    with_call(*sink_, [](action_call& c) { c.wake_queued_ = false; });
    RemoveHold();
  }

  void OnDone() override {
    std::shared_ptr<call_source> src;
    {
      std::lock_guard<std::mutex> guard{sink_->mtx};
      sink_->call_ = nullptr;
      if (!ended_)
        src = source_;
    }
    if (src)
      src->cancelled();
    delete this;
  }

  // --- the actor's side (under sink_->mtx) ---

  void on_trace(std::string id) {
    if (!writes_begun_ && !finish_)
      ctx_->AddInitialMetadata("x-genkit-trace-id", id);
    trace_ = std::move(id);
  }

  void on_chunk(std::string json) {
    if (ended_)
      return;
    enqueue_json(R"({"chunk":)" + json + "}");
  }

  void on_output(std::string json) {
    if (ended_)
      return;
    ended_ = true;
    if (method_->kind == method_kind::unary)
      enqueue_json(json);
    else
      enqueue_json(R"({"output":)" + json + "}");
    if (!finish_)
      finish_ = grpc::Status::OK;
  }

  void on_fail(int code, std::string message) {
    if (ended_)
      return;
    ended_ = true;
    if (code <= 0 || code > 16)
      code = grpc::StatusCode::UNKNOWN;
    if (!finish_)
      finish_ = grpc::Status{static_cast<grpc::StatusCode>(code), std::move(message)};
  }

  void first_message_overdue() override;

  void on_first_message_overdue() {
    if (started_ || ended_)
      return;
    auto ms = door_->opts.first_message_timeout.count();
    spdlog::warn("gRPC client {}: no request message within {} ms of the call to {}; ended "
                 "(first_message_timeout)",
                 peer_ip(), ms, method_->key);
    obs::global().grpc_first_message_timeouts.fetch_add(1, std::memory_order_relaxed);
    on_abort({grpc::StatusCode::DEADLINE_EXCEEDED,
              "no request message came within " + std::to_string(ms)
                + " ms of the call's start (first_message_timeout)"});
  }

  void on_abort(grpc::Status status) {
    if (ended_)
      return;
    ended_ = true;
    cancel_source_ = true;
    drop_queue();
    if (!finish_)
      finish_ = std::move(status);
  }

  /// Under the lock: what to start next, the next write or Finish once
  /// nothing is left to write. Whatever is decided keeps the reactor alive
  /// until it is started (one writer; Finish only from here).
  /// The last response goes out with the status in one operation (a unary
  /// call's only one): a separate Finish would cost another completion per
  /// call.
  enum class next_op { none, write, finish, write_and_finish };
  /// Under the lock: whether decide() would start something.
  bool has_next_op() const {
    return !writing_ && !finished_ && (!out_.empty() || finish_);
  }
  next_op decide(grpc::ByteBuffer*& buf, grpc::Status& status) {
    if (writing_ || finished_)
      return next_op::none;
    if (out_.size() > 1 || (!out_.empty() && !finish_)) {
      writing_ = writes_begun_ = true;
      buf = &out_.front();
      return next_op::write;
    }
    if (!finish_)
      return next_op::none;
    finished_ = true;
    status = *finish_;
    if (!trace_.empty())
      ctx_->AddTrailingMetadata("x-genkit-trace-id", trace_);
    if (out_.empty())
      return next_op::finish;
    // No OnWriteDone follows: the buffer stays queued until the reactor goes.
    writing_ = writes_begun_ = true;
    buf = &out_.front();
    return next_op::write_and_finish;
  }

  void start_op(next_op op, grpc::ByteBuffer* buf, const grpc::Status& status) {
    // No buffer_hint on writes with more queued: gRPC then holds the write
    // and its completion until a later unhinted one, which we only start
    // after that completion (a stream stalled in the grpc_vs_ws bench).
    if (op == next_op::write)
      StartWrite(buf);
    else if (op == next_op::finish)
      Finish(status);
    else if (op == next_op::write_and_finish)
      StartWriteAndFinish(buf, grpc::WriteOptions{}, status);
  }

  void pump();

private:
  bool read_input(std::string& json) {
    // Straight from the wire bytes when they are as clients write them: no
    // message object built, printed and destroyed per call.
    if (grpc::Slice one; in_.TrySingleSlice(&one).ok()) {
      std::string_view wire{reinterpret_cast<const char*>(one.begin()), one.size()};
      if (catalog_->wire_to_json(method_->request, wire, json))
        return true;
    }
    auto msg = catalog_->new_message(method_->request);
    if (!from_buffer(in_, *msg)) {
      fail_here(grpc::StatusCode::INVALID_ARGUMENT,
                "the request does not parse as " + method_->request->full_name());
      return false;
    }
    json = catalog_->to_json(*msg);
    return true;
  }

  /// Builds the run's params as the HTTP front door takes them and hands
  /// the call to the actor side.
  bool start(std::string_view input) {
    std::string params;
    if (auto bad = run_params(*ctx_, *method_, input, params); !bad.ok()) {
      fail_here(bad.error_code(), bad.error_message());
      return false;
    }
    call_start cs;
    cs.key = method_->key;
    cs.params = std::move(params);
    cs.stream = method_->kind != method_kind::unary;
    cs.stream_input = method_->kind == method_kind::bidi_streaming;
    cs.peer = peer();
    peer_ = &peer();
    auto src = door_->opts.start_call(std::move(cs), sink_);
    std::lock_guard<std::mutex> guard{sink_->mtx};
    source_ = std::move(src);
    return true;
  }

  /// Ends the call from gRPC's side (bad request): no run was started, or
  /// the one started is cancelled.
  void fail_here(grpc::StatusCode code, std::string message) {
    std::shared_ptr<call_source> src;
    {
      std::lock_guard<std::mutex> guard{sink_->mtx};
      if (!ended_)
        src = source_;
      ended_ = true;
      drop_queue();
      if (!finish_)
        finish_ = grpc::Status{code, std::move(message)};
    }
    if (src)
      src->cancelled();
    pump();
  }

  /// Under the lock: one response message from the runtime's JSON.
  void enqueue_json(const std::string& json) {
    auto wire = catalog_->json_to_wire(method_->response, json);
    if (!wire) {
      drop_queue();
      ended_ = true;
      finish_ = grpc::Status{grpc::StatusCode::INTERNAL,
                             "the runtime's answer does not fit "
                               + method_->response->full_name() + ": " + wire.error()};
      return;
    }
    grpc::ByteBuffer buf = wire_buffer(*wire);
    queued_bytes_ += held_bytes(buf);
    if (queued_bytes_ > door_->opts.max_write_queue_bytes) {
      obs::global().grpc_write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("gRPC client {}: {} bytes of responses wait to be written "
                   "(max_write_queue_bytes {}); the call ends RESOURCE_EXHAUSTED and its run "
                   "is cancelled",
                   *peer_, queued_bytes_, door_->opts.max_write_queue_bytes);
      drop_queue();
      cancel_source_ = !ended_;
      ended_ = true;
      finish_ = grpc::Status{grpc::StatusCode::RESOURCE_EXHAUSTED,
                             "the client does not read its responses: over "
                               + std::to_string(door_->opts.max_write_queue_bytes)
                               + " bytes queued (max_write_queue_bytes)"};
      return;
    }
    out_.push_back(buf);
  }

  /// What a queued response really holds: its bytes, and gRPC's byte buffer,
  /// slice and our queue's node around them. Counting the bytes alone let a
  /// stream of small chunks (11 bytes each, ~340 held) to a client that does
  /// not read take 340 MB per million chunks under a 16 MiB cap.
  static std::size_t held_bytes(const grpc::ByteBuffer& buf) {
    constexpr std::size_t per_message = 320;
    return buf.Length() + per_message;
  }

  /// Under the lock: forgets the responses not being written.
  void drop_queue() {
    while (out_.size() > (writing_ ? 1u : 0u)) {
      queued_bytes_ -= held_bytes(out_.back());
      out_.pop_back();
    }
  }

  friend class sink_impl;
  template <class F>
  friend void with_call(sink_impl& s, F f);

  std::shared_ptr<const catalog> catalog_;
  const catalog_method* method_;
  grpc::GenericServerContext* ctx_;
  std::shared_ptr<sink_impl> sink_;
  std::shared_ptr<call_source> source_;
  grpc::ByteBuffer in_;
  bool started_ = false; // the door's thread only
  const std::string* peer_ = nullptr; // for log lines; set before the call starts

  // Under sink_->mtx:
  response_queue out_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool writes_begun_ = false;
  bool finished_ = false;
  bool ended_ = false;         // the run is over (answered, failed, cancelled)
  bool cancel_source_ = false; // the run is to be cancelled (over the write cap)
  bool wake_queued_ = false;   // in door_->wakeups, holding the reactor
  std::optional<grpc::Status> finish_;
  std::string trace_;
};

/// Runs `f` on the reactor if it still lives, then starts what follows: on
/// the door's thread at once, from any other thread by queueing the call
/// for the door's thread (once until it is woken). The reactor is not
/// touched after the lock is released unless an operation was decided or
/// a wake-up queued under it (either keeps the reactor alive).
template <class F>
void with_call(sink_impl& s, F f) {
  std::shared_ptr<call_source> cancel;
  action_call* call = nullptr;
  auto op = action_call::next_op::none;
  bool wake = false;
  grpc::ByteBuffer* buf = nullptr;
  grpc::Status status;
  {
    std::lock_guard<std::mutex> guard{s.mtx};
    if (!s.call_)
      return;
    call = s.call_;
    f(*call);
    if (call->cancel_source_) {
      call->cancel_source_ = false;
      cancel = call->source_;
    }
    if (cq_wakeups::on_door_thread()) {
      op = call->decide(buf, status);
    } else if (!call->wake_queued_ && call->has_next_op()) {
      call->wake_queued_ = wake = true;
      call->AddHold();
    }
  }
  if (cancel)
    cancel->cancelled();
  if (wake)
    call->door_->wakeups.push(call);
  if (op != action_call::next_op::none)
    call->start_op(op, buf, status);
}

void action_call::pump() {
  with_call(*sink_, [](action_call&) {});
}

void sink_impl::trace(std::string id) {
  with_call(*this, [&](action_call& c) { c.on_trace(std::move(id)); });
}
void sink_impl::chunk(std::string json) {
  with_call(*this, [&](action_call& c) { c.on_chunk(std::move(json)); });
}
void sink_impl::output(std::string json) {
  with_call(*this, [&](action_call& c) { c.on_output(std::move(json)); });
}
void sink_impl::fail(int code, std::string message) {
  with_call(*this, [&](action_call& c) { c.on_fail(code, std::move(message)); });
}
void sink_impl::abort(grpc::Status status) {
  with_call(*this, [&](action_call& c) { c.on_abort(std::move(status)); });
}
void action_call::first_message_overdue() {
  with_call(*sink_, [](action_call& c) { c.on_first_message_overdue(); });
}

} // namespace

void action_reactor(door_ptr door, std::shared_ptr<const catalog> cat, const catalog_method* m,
                    std::unique_ptr<cq_call> call) {
  new action_call(std::move(door), std::move(cat), m, std::move(call));
}

} // namespace actor_host::grpc_door::detail
