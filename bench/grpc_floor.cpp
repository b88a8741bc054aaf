// bench_grpc_floor: what grpc++ itself costs per unary call, the floor under
// the gRPC front door (issue 35: gRPC unary <= 1.0x the /api/ws manager CPU
// per call). The door's own shape without anything of ours: one async
// generic service polled by one completion-queue thread, each call's
// request read, then the read that sees the half-close (the door needs it
// to refuse a second message), the answer and the status in one
// WriteAndFinish, and AsyncNotifyWhenDone: the five completions per call
// the door has. The answer is the request's own bytes (bench_grpc_load's
// echo: google.protobuf.Value in, the same out), any method.
//
//   bench_grpc_floor [--port 0] [--handoff 0|1|2|3] [--trace-md 0|1]
//                    [--arg NAME=INT ...] [--reads 2|1] [--notify 1|0]
//
// --handoff 1: the answer is started from a second thread (an io_context,
//   one post per call), as the door's actors answer from the I/O thread;
//   the difference to 0 is what one hand-off each way costs.
// --handoff 2: the calls go to that thread through an inbox (a mutex, one
//   post when it goes non-empty); the answers are started there.
// --handoff 3: as 2, and the answers come back to the completion-queue
//   thread through an inbox of their own, woken by a grpc::Alarm when it
//   goes non-empty, which starts them there.
// --trace-md 1: an x-genkit-trace-id in the initial and trailing metadata,
//   as the door sends.
// --arg: a channel argument of the server's (a tuning tried on the floor
//   first). --reads 1: no read behind the request; --notify 0: no
//   AsyncNotifyWhenDone (what the door's events cost gRPC).
// Prints {"port":N,"pid":P} on stdout once listening; runs until killed.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <grpcpp/alarm.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <absl/synchronization/mutex.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct options {
  int port = 0;
  int handoff = 0;
  bool trace_md = false;
  std::vector<std::pair<std::string, int>> args;
  int reads = 2;
  bool notify = true;
};

struct tag_base {
  virtual void on_event(bool ok) = 0;

protected:
  ~tag_base() = default;
};

struct floor_server;

/// One call: request -> read -> read (half-close) -> WriteAndFinish, with
/// the done notification; deleted once the finish and done are both back.
class call {
public:
  call(floor_server& s);
  void on_event(int ev, bool ok);

private:
  struct tag final : tag_base {
    tag(call* c, int e) : c(c), ev(e) {
    }
    void on_event(bool ok) override {
      c->on_event(ev, ok);
    }
    call* c;
    int ev;
  };
  enum { requested, read_first, read_end, finished, done };

public:
  void answer();
  void write();

private:
  void release() {
    if (--holds_ == 0)
      delete this;
  }

  floor_server& s_;
  grpc::GenericServerContext ctx_;
  grpc::GenericServerAsyncReaderWriter stream_{&ctx_};
  grpc::ByteBuffer in_;
  grpc::ByteBuffer end_;
  tag t_request_{this, requested};
  tag t_read_{this, read_first};
  tag t_end_{this, read_end};
  tag t_finish_{this, finished};
  tag t_done_{this, done};
  std::atomic<int> holds_; // the finish (or a failed request) and done
};

struct floor_server;

/// Calls handed between the threads (handoff 2, 3): one wake-up per batch.
struct inbox {
  std::mutex mtx;
  std::vector<call*> calls;
  /// True when it was empty (the pusher wakes the other side).
  bool push(call* c) {
    std::lock_guard<std::mutex> g{mtx};
    calls.push_back(c);
    return calls.size() == 1;
  }
  std::vector<call*> take() {
    std::vector<call*> out;
    std::lock_guard<std::mutex> g{mtx};
    out.swap(calls);
    return out;
  }
};

struct alarm_tag final : tag_base {
  floor_server* s;
  void on_event(bool ok) override;
};

struct floor_server {
  options o;
  grpc::AsyncGenericService service;
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  std::unique_ptr<grpc::Server> server;
  boost::asio::io_context io{1};
  inbox to_io;
  inbox to_cq;
  grpc::Alarm alarm;
  alarm_tag alarm_done;

  void drain_io() {
    for (auto* c : to_io.take())
      c->answer();
  }
};

void alarm_tag::on_event(bool) {
  for (auto* c : s->to_cq.take())
    c->write();
}

call::call(floor_server& s) : s_(s), holds_(s.o.notify ? 2 : 1) {
  if (s.o.notify)
    ctx_.AsyncNotifyWhenDone(&t_done_);
  s.service.RequestCall(&ctx_, &stream_, s.cq.get(), s.cq.get(), &t_request_);
}

void call::on_event(int ev, bool ok) {
  switch (ev) {
    case requested:
      if (!ok) {
        delete this; // shutting down
        return;
      }
      new call(s_);
      stream_.Read(&in_, &t_read_);
      return;
    case read_first:
      if (!ok) {
        stream_.Finish(grpc::Status{grpc::StatusCode::INVALID_ARGUMENT, "no request"},
                       &t_finish_);
        return;
      }
      if (s_.o.reads == 2) {
        stream_.Read(&end_, &t_end_);
        return;
      }
      [[fallthrough]];
    case read_end:
      if (s_.o.handoff == 1)
        boost::asio::post(s_.io, [this] { answer(); });
      else if (s_.o.handoff >= 2) {
        if (s_.to_io.push(this))
          boost::asio::post(s_.io, [s = &s_] { s->drain_io(); });
      } else
        answer();
      return;
    case finished:
    case done:
      release();
      return;
  }
}

void call::answer() {
  if (s_.o.trace_md) {
    static const std::string id(32, 'a');
    ctx_.AddInitialMetadata("x-genkit-trace-id", id);
    ctx_.AddTrailingMetadata("x-genkit-trace-id", id);
  }
  if (s_.o.handoff == 3) {
    if (s_.to_cq.push(this))
      s_.alarm.Set(s_.cq.get(), gpr_inf_past(GPR_CLOCK_MONOTONIC), &s_.alarm_done);
    return;
  }
  write();
}

void call::write() {
  stream_.WriteAndFinish(in_, grpc::WriteOptions{}, grpc::Status::OK, &t_finish_);
}

} // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--port") o.port = std::stoi(v);
    else if (k == "--handoff") o.handoff = std::stoi(v);
    else if (k == "--trace-md") o.trace_md = v == "1";
    else if (k == "--reads") o.reads = std::stoi(v);
    else if (k == "--notify") o.notify = v == "1";
    else if (k == "--arg") {
      auto eq = v.find('=');
      if (eq == std::string::npos) { std::fprintf(stderr, "--arg NAME=INT\n"); return 2; }
      o.args.emplace_back(v.substr(0, eq), std::stoi(v.substr(eq + 1)));
    }
    else { std::fprintf(stderr, "bench_grpc_floor: unknown option %s\n", k.c_str()); return 2; }
  }
  // As the door does (grpc_door/server.cpp): Debian's abseil runs its
  // deadlock detector on every lock otherwise.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  floor_server s;
  s.o = o;
  s.alarm_done.s = &s;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(o.port), grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterAsyncGenericService(&s.service);
  s.cq = builder.AddCompletionQueue();
  // The door's listener settings (grpc_door/server.cpp's defaults).
  builder.SetMaxReceiveMessageSize(8 << 20);
  grpc::ResourceQuota quota{"bench-grpc-floor"};
  quota.Resize(std::size_t{256} << 20);
  builder.SetResourceQuota(quota);
  builder.SetMaxSendMessageSize(-1);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 100);
  builder.AddChannelArgument(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET,
                             1 << GRPC_COMPRESS_NONE);
  for (auto& [name, value] : o.args)
    builder.AddChannelArgument(name, value);
  s.server = builder.BuildAndStart();
  if (!s.server || port == 0) {
    std::fprintf(stderr, "bench_grpc_floor: cannot listen\n");
    return 1;
  }
  for (int i = 0; i < 32; ++i) // calls requested ahead, as the door does
    new call(s);
  std::thread io_thread;
  auto guard = boost::asio::make_work_guard(s.io);
  if (o.handoff)
    io_thread = std::thread{[&s] { s.io.run(); }};
  std::printf("{\"port\":%d,\"pid\":%d}\n", port, static_cast<int>(getpid()));
  std::fflush(stdout);
  void* tag = nullptr;
  bool ok = false;
  while (s.cq->Next(&tag, &ok))
    static_cast<tag_base*>(tag)->on_event(ok);
  return 0;
}
