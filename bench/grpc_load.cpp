// bench_grpc_load: closed-loop load on the gRPC front door, the gRPC twin of
// `bench_load --scenario echo|stream` (same actions, same inputs, same JSON
// line), so bench/grpc_vs_ws.sh can put the two side by side.
//
//   bench_grpc_load --target 127.0.0.1:PORT [--scenario echo|stream] [--stream-n N]
//                   --callers N --inflight K --seconds S --warmup W
//                   [--watch NAME=PID ...] [--system S --round R]
//
// N channels (one HTTP/2 connection each, like N WebSocket callers), K calls
// in flight on each:
//   echo    unary /genkit.flow.Flows/echo with {"i": n}; rate = calls/s
//   stream  server-streaming /genkit.flow.Flows/streamCount_stream with
//           {"n": N}: N chunk messages, then the output; rate = chunks/s,
//           latency = time to the first chunk
// Requests are google.protobuf.Value in wire bytes (no protoc needed). One
// JSON line on stdout: rate, latency percentiles, CPU per operation of the
// watched processes.

#include "bench/measure.hpp"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using bench::clock;

/// google.protobuf.Value{struct_value: {fields: {key: {number_value: n}}}},
/// key one character.
std::string value_request(char key, double n) {
  std::string number(1, '\x11');
  number.append(reinterpret_cast<const char*>(&n), 8); // little-endian fixed64
  std::string entry = std::string{"\x0a\x01", 2} + key + '\x12' + static_cast<char>(number.size()) + number;
  std::string fields = std::string(1, '\x0a') + static_cast<char>(entry.size()) + entry;
  return std::string(1, '\x2a') + static_cast<char>(fields.size()) + fields;
}

struct options {
  std::string target;
  std::string scenario = "echo";
  std::string method; // default per scenario
  long stream_n = 1000;
  int callers = 1;
  int inflight = 1;
  double seconds = 5;
  double warmup = 1;
  std::string system = "ours-grpc";
  int round = 1;
  std::map<std::string, int> watch;
};

struct shared_state {
  std::atomic<bool> measuring{false};
  std::atomic<bool> stopping{false};
  std::atomic<long> errors{0};
  std::atomic<long> open{0};
  std::mutex mtx;
  std::condition_variable drained;
  std::vector<double> lat_us; // under mtx
  long ops = 0;               // under mtx: calls (echo) or chunks (stream)
};

/// Under s.mtx: one operation's latency and how many operations it counts.
void count(shared_state& s, double us, long ops) {
  std::lock_guard<std::mutex> g{s.mtx};
  s.lat_us.push_back(us);
  s.ops += ops;
}

void report_error(shared_state& s, const std::string& what) {
  if (s.errors++ < 3)
    std::fprintf(stderr, "bench_grpc_load: %s\n", what.c_str());
}

/// What the completion-queue thread gets back.
class cq_event {
public:
  virtual void on_event(bool ok) = 0;

protected:
  ~cq_event() = default;
};

/// One server-streaming call on the completion queue: the request (the
/// only one, so sent as the last), then reads until the status. Deletes
/// itself when its operations are all back and tells its slot.
class stream_call {
public:
  stream_call(grpc::GenericStub& stub, grpc::CompletionQueue& cq, const options& o,
              shared_state& s, std::function<void()> next)
    : o_(o), s_(s), next_(std::move(next)) {
    auto bytes = value_request('n', static_cast<double>(o.stream_n));
    grpc::Slice slice{bytes};
    req_ = grpc::ByteBuffer{&slice, 1};
    t0_ = clock::now();
    // A stalled stream fails the run instead of hanging it.
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    rw_ = stub.PrepareCall(&ctx_, o.method, &cq);
    rw_->StartCall(&started_);
  }

private:
  struct op final : cq_event {
    op(stream_call* c, void (stream_call::*f)(bool)) : call(c), fn(f) {
    }
    void on_event(bool ok) override {
      (call->*fn)(ok);
    }
    stream_call* call;
    void (stream_call::*fn)(bool);
  };

  void on_started(bool ok) {
    if (!ok)
      return finish();
    pending_ = 2;
    rw_->WriteLast(req_, grpc::WriteOptions{}, &written_);
    rw_->Read(&res_, &read_);
  }
  void on_written(bool) {
    settle();
  }
  void on_read(bool ok) {
    if (!ok)
      return settle();
    if (got_++ == 0)
      first_us_ = bench::us_since(t0_);
    rw_->Read(&res_, &read_);
  }
  /// The write and the reads are back: the status follows.
  void settle() {
    if (--pending_ == 0)
      finish();
  }
  void finish() {
    rw_->Finish(&status_, &finished_);
  }
  void on_finished(bool) {
    // Every message but the last (the output) is a chunk.
    auto chunks = got_ - 1;
    if (!status_.ok())
      report_error(s_, std::to_string(status_.error_code()) + " " + status_.error_message());
    else if (chunks != o_.stream_n)
      report_error(s_, "stream ended after " + std::to_string(chunks) + " chunks");
    else if (s_.measuring)
      count(s_, first_us_, chunks);
    auto next = std::move(next_);
    delete this;
    next();
  }

  const options& o_;
  shared_state& s_;
  std::function<void()> next_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> rw_;
  grpc::ByteBuffer req_;
  grpc::ByteBuffer res_;
  grpc::Status status_;
  op started_{this, &stream_call::on_started};
  op written_{this, &stream_call::on_written};
  op read_{this, &stream_call::on_read};
  op finished_{this, &stream_call::on_finished};
  int pending_ = 0;
  clock::time_point t0_;
  long got_ = 0;
  double first_us_ = 0;
};

/// One call slot: sends the next call when the previous one ends. Calls go
/// through grpc++'s async API on one completion queue polled by one thread,
/// the lightest client grpc++ offers: the callback API's own threads cost
/// the client 50-60 µs of CPU per call, CPU the server on the same 2 cores
/// then lacks.
class slot final : public cq_event {
public:
  slot(grpc::GenericStub& stub, grpc::CompletionQueue& cq, const options& o, shared_state& s,
       int id)
    : stub_(stub), cq_(cq), o_(o), s_(s), id_(id) {
  }
  void send() {
    if (s_.stopping) {
      if (--s_.open == 0)
        s_.drained.notify_all();
      return;
    }
    if (o_.scenario == "stream") {
      new stream_call(stub_, cq_, o_, s_, [this] { send(); });
      return;
    }
    ctx_ = std::make_unique<grpc::ClientContext>();
    ctx_->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto bytes = value_request('i', ++n_ + id_ * 1e6);
    grpc::Slice slice{bytes};
    req_ = grpc::ByteBuffer{&slice, 1};
    t0_ = clock::now();
    reader_ = stub_.PrepareUnaryCall(ctx_.get(), o_.method, req_, &cq_);
    reader_->StartCall();
    reader_->Finish(&res_, &status_, this);
  }

  /// The call's Finish came back on the completion queue.
  void on_event(bool) override {
    if (!status_.ok())
      report_error(s_, std::to_string(status_.error_code()) + " " + status_.error_message());
    else if (s_.measuring)
      count(s_, bench::us_since(t0_), 1);
    send();
  }

private:
  grpc::GenericStub& stub_;
  grpc::CompletionQueue& cq_;
  const options& o_;
  shared_state& s_;
  int id_;
  double n_ = 0;
  std::unique_ptr<grpc::ClientContext> ctx_;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader_;
  grpc::ByteBuffer req_;
  grpc::ByteBuffer res_;
  grpc::Status status_;
  clock::time_point t0_;
};

double pct(std::vector<double>& v, double p) {
  if (v.empty())
    return 0;
  auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

} // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--target") o.target = v;
    else if (k == "--method") o.method = v;
    else if (k == "--scenario") o.scenario = v;
    else if (k == "--stream-n") o.stream_n = std::stol(v);
    else if (k == "--callers") o.callers = std::stoi(v);
    else if (k == "--inflight") o.inflight = std::stoi(v);
    else if (k == "--seconds") o.seconds = std::stod(v);
    else if (k == "--warmup") o.warmup = std::stod(v);
    else if (k == "--system") o.system = v;
    else if (k == "--round") o.round = std::stoi(v);
    else if (k == "--watch") {
      auto eq = v.find('=');
      if (eq == std::string::npos) { std::fprintf(stderr, "--watch NAME=PID\n"); return 2; }
      o.watch[v.substr(0, eq)] = std::stoi(v.substr(eq + 1));
    } else { std::fprintf(stderr, "bench_grpc_load: unknown option %s\n", k.c_str()); return 2; }
  }
  if (o.target.empty()) {
    std::fprintf(stderr, "usage: bench_grpc_load --target HOST:PORT [--callers N --inflight K ...]\n");
    return 2;
  }
  if (o.scenario != "echo" && o.scenario != "stream") {
    std::fprintf(stderr, "bench_grpc_load: --scenario echo|stream\n");
    return 2;
  }
  if (o.method.empty())
    o.method = o.scenario == "echo" ? "/genkit.flow.Flows/echo"
                                    : "/genkit.flow.Flows/streamCount_stream";
  shared_state s;
  grpc::CompletionQueue cq;
  std::thread poller{[&cq] {
    void* tag = nullptr;
    bool ok = false;
    while (cq.Next(&tag, &ok))
      static_cast<cq_event*>(tag)->on_event(ok);
  }};
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  std::vector<std::unique_ptr<slot>> slots;
  for (int c = 0; c < o.callers; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1); // one connection per caller
    channels.push_back(grpc::CreateCustomChannel(o.target, grpc::InsecureChannelCredentials(), args));
    stubs.push_back(std::make_unique<grpc::GenericStub>(channels.back()));
    for (int k = 0; k < o.inflight; ++k)
      slots.push_back(std::make_unique<slot>(*stubs.back(), cq, o, s, c * o.inflight + k));
  }
  s.open = static_cast<long>(slots.size());
  for (auto& sl : slots)
    sl->send();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  std::map<std::string, double> cpu0;
  for (auto& [name, pid] : o.watch)
    cpu0[name] = bench::proc_cpu_ms(pid);
  auto self0 = bench::proc_cpu_ms(getpid());
  auto t0 = clock::now();
  s.measuring = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  s.measuring = false;
  auto wall = bench::ms_since(t0);
  std::map<std::string, double> cpu;
  for (auto& [name, pid] : o.watch)
    cpu[name] = bench::proc_cpu_ms(pid) - cpu0[name];
  auto self_cpu = bench::proc_cpu_ms(getpid()) - self0;
  s.stopping = true;
  {
    std::unique_lock<std::mutex> lock{s.mtx};
    s.drained.wait_for(lock, std::chrono::seconds(30), [&] { return s.open.load() == 0; });
  }
  cq.Shutdown();
  poller.join();
  std::lock_guard<std::mutex> g{s.mtx};
  auto ops = s.ops;
  std::string procs;
  auto add = [&](const std::string& name, int pid, double ms) {
    char buf[256];
    std::snprintf(buf, sizeof buf, R"(%s"%s":{"pid":%d,"cpu_pct":%.1f,"cpu_us_per_op":%.3f,"rss_kb":%ld})",
                  procs.empty() ? "" : ",", name.c_str(), pid, 100 * ms / wall,
                  ops ? ms * 1000 / static_cast<double>(ops) : 0.0, bench::proc_rss_kb(pid));
    procs += buf;
  };
  for (auto& [name, pid] : o.watch)
    add(name, pid, cpu[name]);
  add("caller", getpid(), self_cpu);
  auto& lat = s.lat_us;
  std::printf(R"({"system":"%s","scenario":"%s","round":%d,"callers":%d,"inflight":%d,"wall_ms":%.1f,"ops":%ld,"unit":"%s","rate":%.1f,"errors":%ld,"lat_us":{"n":%zu,"p50":%.1f,"p99":%.1f},"procs":{%s},"ok":%s})"
              "\n",
              o.system.c_str(), o.scenario.c_str(), o.round, o.callers, o.inflight, wall, ops,
              o.scenario == "echo" ? "calls" : "chunks",
              static_cast<double>(ops) * 1000 / wall, s.errors.load(), lat.size(), pct(lat, 0.5),
              pct(lat, 0.99), procs.c_str(), s.errors == 0 && ops > 0 ? "true" : "false");
  return 0;
}
