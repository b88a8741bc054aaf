// bench_fake_runtime: N fake Reflection V2 runtimes in one process, cheap
// enough that the manager in front of them is what a benchmark measures.
//
//   bench_fake_runtime --url ws://127.0.0.1:3200 [--n 1] [--prefix bench-rt]
//                      [--connect-window 256] [--lifetime 3600] [--hold N]
//                      [--name SERVICE] [--serial-us N] [--trace-ids counted|random]
//
// Each connection registers as <prefix>-<i> (named SERVICE with --name: a
// replica of that service; default its id) and answers
//   listActions     a fixed 10-action map
//   runAction       /flow/echo        result = input
//                   /flow/streamCount {n}: n chunks {"i":k}, result {count,sum}
//                   /flow/slow        runs until cancelled
//                   /flow/bidiEcho    echoes every input chunk as an output
//                                     chunk; result {count} at endInputStream
//                   /flow/fail        an action error
//   cancelAction    by traceId (slow, bidiEcho, streamCount)
// Every run first sends runActionState with a fresh 32-hex trace id: by
// default the process id and a counter (every new trace sorts after the
// last, which a store keyed by trace id appends); --trace-ids random makes
// 32 random hex digits, as Genkit runtimes do (OpenTelemetry's id
// generator), so a benchmark sees what a store pays for real ids. Replies
// are assembled from pre-built pieces; chunks are produced only while the
// socket drains (bounded memory, one write per batch).
//
// Prints {"ready":N,"pid":P} on stdout once every connection has its register
// answer; exits when all connections are closed, on SIGINT/SIGTERM, or after
// --lifetime seconds.
//
// --hold N: echo runs get their runActionState but no result until SIGUSR1;
// once N are held, {"held":N} is printed (then a bench reads the manager's
// memory with N requests pending). Runs after the release answer at once.
//
// --serial-us N: every echo takes N microseconds of the process, one at a
// time (a runtime that serves one call at a time: the bottleneck, so more
// replicas mean more calls per second).
#include "bench/fake_runtime_frames.hpp"
#include "bench/flags.hpp"
#include "bench/wsraw.hpp"

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

using namespace std::chrono_literals;

std::atomic<bool> stop_requested{false};
std::atomic<bool> release_requested{false};

// ---- options ----------------------------------------------------------------

struct options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string path = "/";
  int n = 1;
  std::string prefix = "bench-rt";
  int connect_window = 256;
  int lifetime_s = 3600;
  long hold = 0;
  std::string name;  // registered name ("" = the runtime's id)
  long serial_us = 0; // per echo, the process blocked (one call at a time)
  bool random_trace_ids = false; // --trace-ids random
};

bool parse_url(const std::string& url, options& o) {
  return bench::split_ws_url(url, o.host, o.port, o.path);
}

// ---- pre-built pieces ---------------------------------------------------------

constexpr std::string_view k_state_a = R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)";
constexpr std::string_view k_state_b = R"(,"state":{"traceId":")";
constexpr std::string_view k_state_c = R"("}}})";
constexpr std::string_view k_res_a = R"({"jsonrpc":"2.0","result":{"result":)";
constexpr std::string_view k_res_b = R"(,"telemetry":{"traceId":")";
constexpr std::string_view k_res_c = R"("}},"id":)";
constexpr std::string_view k_res_none = R"({"jsonrpc":"2.0","result":{"telemetry":{"traceId":")";
constexpr std::string_view k_chunk_a = R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)";
constexpr std::string_view k_chunk_b = R"(,"chunk":)";
constexpr std::string_view k_chunk_i = R"(,"chunk":{"i":)";
constexpr std::string_view k_close2 = "}}";
constexpr std::string_view k_close3 = "}}}";
constexpr std::string_view k_ok_a = R"({"jsonrpc":"2.0","result":)";
constexpr std::string_view k_id = R"(,"id":)";
constexpr std::string_view k_err_a = R"({"jsonrpc":"2.0","error":)";
constexpr std::string_view k_end = "}";
constexpr std::string_view k_cancelled_a =
  R"({"jsonrpc":"2.0","error":{"code":-32000,"message":"Action was cancelled","data":{"code":1,"message":"Action was cancelled","details":{"traceId":")";
constexpr std::string_view k_cancelled_b = R"("}}},"id":)";

std::string make_actions_result() {
  std::string s = R"({"actions":{)";
  const char* names[] = {"echo", "streamCount", "slow", "bidiEcho", "fail",
                         "a1",   "a2",          "a3",   "a4",       "a5"};
  bool first = true;
  for (auto* n : names) {
    if (!first)
      s += ',';
    first = false;
    s += std::string{R"("/flow/)"} + n + R"(":{"key":"/flow/)" + n + R"(","name":")" + n
         + R"(","inputSchema":{"type":"object","additionalProperties":true,"$schema":"http://json-schema.org/draft-07/schema#"},"metadata":{"fake":true)"
         + (std::string_view{n} == "bidiEcho" ? R"(,"bidi":true)" : "") + "}}";
  }
  s += "}}";
  return s;
}

// ---- runtimes -----------------------------------------------------------------

struct held_run {
  std::string request_id; // raw JSON
  bool bidi = false;
  bool stream = false;
  long count = 0;
};

struct stream_job {
  std::string request_id;
  std::string trace;
  long n = 0;
  long k = 0;
  long long sum = 0;
  bool cancelled = false;
};

struct fake;
struct runtime_conn;

struct held_echo {
  runtime_conn* conn;
  std::string id;    // raw JSON
  std::string input; // raw JSON, empty: none
  std::string trace;
};

struct runtime_conn {
  fake* owner = nullptr;
  int index = 0;
  std::string id;
  std::shared_ptr<bench::ws_conn> ws;
  bool registered = false;
  bool open = false;
  std::unordered_map<std::string, held_run> held;             // trace -> run
  std::unordered_map<std::string, std::string> bidi_by_req;   // request id -> trace
  std::deque<stream_job> streams;
};

struct fake {
  options opt;
  bench::loop loop;
  std::vector<std::unique_ptr<runtime_conn>> conns;
  std::string actions_result = make_actions_result();
  int next_to_connect = 0;
  int connecting = 0;
  int ready = 0;
  int open = 0;
  bool announced = false;
  std::uint64_t trace_seq = 0;
  std::mt19937_64 trace_rng{std::random_device{}()}; // --trace-ids random
  int failures = 0;
  std::vector<held_echo> held_echoes; // --hold
  bool released = false;

  void answer_echo(runtime_conn& c, std::string_view id, std::string_view input,
                   std::string_view trace) {
    if (input.empty())
      c.ws->send_parts({k_res_none, trace, k_res_c, id, k_end});
    else
      c.ws->send_parts({k_res_a, input, k_res_b, trace, k_res_c, id, k_end});
  }

  void release_held() {
    released = true;
    for (auto& h : held_echoes)
      if (h.conn->open)
        answer_echo(*h.conn, h.id, h.input, h.trace);
    std::fprintf(stderr, "fake runtime: released %zu held runs\n", held_echoes.size());
    held_echoes.clear();
    held_echoes.shrink_to_fit();
  }

  std::string new_trace() {
    char b[40];
    if (opt.random_trace_ids)
      std::snprintf(b, sizeof(b), "%016llx%016llx", static_cast<unsigned long long>(trace_rng()),
                    static_cast<unsigned long long>(trace_rng()));
    else
      std::snprintf(b, sizeof(b), "%08x%024llx", static_cast<unsigned>(getpid()),
                    static_cast<unsigned long long>(++trace_seq));
    return b;
  }

  void connect_more() {
    while (next_to_connect < opt.n && connecting < opt.connect_window)
      connect_one(next_to_connect++);
  }

  void connect_one(int i) {
    auto rc = std::make_unique<runtime_conn>();
    auto* c = rc.get();
    c->owner = this;
    c->index = i;
    c->id = opt.prefix + "-" + std::to_string(i);
    conns.push_back(std::move(rc));
    ++connecting;
    bench::ws_conn::handlers h;
    h.on_open = [this, c] {
      c->open = true;
      ++open;
      auto pid = std::to_string(getpid());
      c->ws->send_parts({R"({"jsonrpc":"2.0","id":"1","method":"register","params":{"id":")", c->id,
                         R"(","pid":)", pid, R"(,"name":")", opt.name.empty() ? c->id : opt.name,
                         R"(","genkitVersion":"bench/0","reflectionApiSpecVersion":1,"envs":["dev"]}})"});
    };
    h.on_text = [this, c](std::string_view f) { on_frame(*c, f); };
    h.on_drain = [this, c] { pump(*c); };
    h.on_close = [this, c](const std::string& why) {
      if (!c->registered) {
        --connecting;
        ++failures;
        std::fprintf(stderr, "fake runtime %s: %s\n", c->id.c_str(), why.c_str());
      }
      if (c->open)
        --open;
      c->open = false;
      if (announced && open == 0)
        loop.stop();
      if (!announced && failures > 0 && connecting == 0 && next_to_connect >= opt.n)
        loop.stop();
    };
    // Idle runtimes at scale: keep the receive buffer small.
    c->ws = bench::ws_conn::connect(loop, opt.host, opt.port, opt.path, std::move(h),
                                    opt.n > 16 ? 16 * 1024 : 256 * 1024);
  }

  void on_registered(runtime_conn& c) {
    c.registered = true;
    --connecting;
    ++ready;
    if (ready == opt.n && !announced) {
      announced = true;
      std::printf("{\"ready\":%d,\"pid\":%d}\n", ready, static_cast<int>(getpid()));
      std::fflush(stdout);
    }
    connect_more();
  }

  void reply_result(runtime_conn& c, std::string_view id, std::string_view result) {
    c.ws->send_parts({k_ok_a, result, k_id, id, k_end});
  }

  void reply_error(runtime_conn& c, std::string_view id, int code, std::string_view msg) {
    char num[16];
    auto r = std::to_chars(num, num + sizeof(num), code);
    c.ws->send_parts({k_err_a, R"({"code":)", std::string_view{num, static_cast<std::size_t>(r.ptr - num)},
                      R"(,"message":")", msg, R"("})", k_id, id, k_end});
  }

  void send_state(runtime_conn& c, std::string_view id, std::string_view trace) {
    c.ws->send_parts({k_state_a, id, k_state_b, trace, k_state_c});
  }

  void send_cancelled(runtime_conn& c, std::string_view id, std::string_view trace) {
    c.ws->send_parts({k_cancelled_a, trace, k_cancelled_b, id, k_end});
  }

  void on_frame(runtime_conn& c, std::string_view frame) {
    bench::runtime_inbound m;
    if (!bench::parse_runtime_inbound(frame, m)) {
      std::fprintf(stderr, "fake runtime %s: unparsable frame\n", c.id.c_str());
      return;
    }
    if (m.method.empty()) {
      if (!c.registered && m.id == "\"1\"" && m.has_result)
        on_registered(c);
      return;
    }
    if (m.method == "runAction" && !m.id.empty())
      return run_action(c, m);
    if (m.method == "sendInputStreamChunk" || m.method == "endInputStream")
      return input(c, m, m.method == "endInputStream");
    if (m.method == "cancelAction" && !m.id.empty())
      return cancel(c, m);
    if (m.method == "listActions" && !m.id.empty())
      return reply_result(c, m.id, actions_result);
    if (m.method == "listValues" && !m.id.empty())
      return reply_result(c, m.id, R"({"values":{}})");
    if (!m.id.empty()) {
      std::string msg = "Method not found: " + std::string{m.method};
      reply_error(c, m.id, -32601, msg);
    }
  }

  void run_action(runtime_conn& c, const bench::runtime_inbound& m) {
    if (m.key == "/flow/echo") {
      auto trace = new_trace();
      send_state(c, m.id, trace);
      if (opt.hold > 0 && !released) {
        held_echoes.push_back({&c, std::string{m.id}, std::string{m.input}, trace});
        if (static_cast<long>(held_echoes.size()) == opt.hold) {
          std::printf("{\"held\":%ld}\n", opt.hold);
          std::fflush(stdout);
        }
        return;
      }
      if (opt.serial_us > 0)
        usleep(static_cast<useconds_t>(opt.serial_us));
      answer_echo(c, m.id, m.input, trace);
      return;
    }
    if (m.key == "/flow/streamCount") {
      long n = 0;
      if (auto p = m.input.find("\"n\":"); p != std::string_view::npos)
        std::from_chars(m.input.data() + p + 4, m.input.data() + m.input.size(), n);
      auto trace = new_trace();
      send_state(c, m.id, trace);
      stream_job j{std::string{m.id}, trace, n, 0, 0, false};
      if (!m.stream) {
        j.k = n;
        j.sum = static_cast<long long>(n) * (n - 1) / 2;
        finish_stream(c, j);
        return;
      }
      c.held[trace] = held_run{std::string{m.id}, false, true, 0};
      c.streams.push_back(std::move(j));
      pump(c);
      return;
    }
    if (m.key == "/flow/slow" || m.key == "/flow/bidiEcho") {
      auto trace = new_trace();
      send_state(c, m.id, trace);
      bool bidi = m.key == "/flow/bidiEcho";
      c.held[trace] = held_run{std::string{m.id}, bidi, m.stream, 0};
      if (bidi)
        c.bidi_by_req[std::string{m.id}] = trace;
      return;
    }
    if (m.key == "/flow/fail") {
      auto trace = new_trace();
      send_state(c, m.id, trace);
      c.ws->send_parts({k_err_a,
                        R"({"code":-32000,"message":"INTERNAL: failed on purpose","data":{"code":13,"message":"INTERNAL: failed on purpose","details":{"traceId":")",
                        trace, R"("}}})", k_id, m.id, k_end});
      return;
    }
    std::string msg = "action " + std::string{m.key} + " not found";
    reply_error(c, m.id, -32602, msg);
  }

  void input(runtime_conn& c, const bench::runtime_inbound& m, bool end) {
    auto i = c.bidi_by_req.find(std::string{m.request_id});
    if (i == c.bidi_by_req.end())
      return;
    auto h = c.held.find(i->second);
    if (h == c.held.end())
      return;
    auto& run = h->second;
    if (!end) {
      ++run.count;
      if (run.stream && !m.chunk.empty())
        c.ws->send_parts({k_chunk_a, run.request_id, k_chunk_b, m.chunk, k_close2});
      return;
    }
    auto count = std::to_string(run.count);
    c.ws->send_parts({k_res_a, R"({"count":)", count, "}", k_res_b, h->first, k_res_c,
                      run.request_id, k_end});
    c.held.erase(h);
    c.bidi_by_req.erase(i);
  }

  void cancel(runtime_conn& c, const bench::runtime_inbound& m) {
    auto h = c.held.find(std::string{m.trace_id});
    if (h == c.held.end())
      return reply_error(c, m.id, -32602, "Action not found or already completed");
    reply_result(c, m.id, R"({"message":"Action cancelled"})");
    send_cancelled(c, h->second.request_id, h->first);
    if (h->second.bidi)
      c.bidi_by_req.erase(h->second.request_id);
    for (auto& j : c.streams)
      if (j.trace == h->first)
        j.cancelled = true;
    c.held.erase(h);
  }

  void finish_stream(runtime_conn& c, const stream_job& j) {
    char buf[64];
    int len = std::snprintf(buf, sizeof(buf), R"({"count":%ld,"sum":%lld})", j.k, j.sum);
    c.ws->send_parts({k_res_a, std::string_view{buf, static_cast<std::size_t>(len)}, k_res_b, j.trace,
                      k_res_c, j.request_id, k_end});
  }

  // Produces chunks while the socket keeps up (called again on drain).
  void pump(runtime_conn& c) {
    constexpr std::size_t high_water = 256 * 1024;
    while (!c.streams.empty() && c.ws->backlog() < high_water) {
      for (auto it = c.streams.begin(); it != c.streams.end();) {
        auto& j = *it;
        if (j.cancelled) {
          it = c.streams.erase(it);
          continue;
        }
        char num[24];
        for (int b = 0; b < 64 && j.k < j.n; ++b, ++j.k) {
          auto r = std::to_chars(num, num + sizeof(num), j.k);
          c.ws->send_parts({k_chunk_a, j.request_id, k_chunk_i,
                            std::string_view{num, static_cast<std::size_t>(r.ptr - num)}, k_close3});
          j.sum += j.k;
        }
        if (j.k >= j.n) {
          finish_stream(c, j);
          c.held.erase(j.trace);
          it = c.streams.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
};

void on_signal(int) {
  stop_requested = true;
}

void on_release(int) {
  release_requested = true;
}

} // namespace

int main(int argc, char** argv) {
  fake f;
  std::string url;
  if (!bench::read_flags(argc, argv,
                         {{"--url", &url},
                          {"--n", &f.opt.n},
                          {"--prefix", &f.opt.prefix},
                          {"--connect-window", &f.opt.connect_window},
                          {"--lifetime", &f.opt.lifetime_s},
                          {"--hold", &f.opt.hold},
                          {"--name", &f.opt.name},
                          {"--serial-us", &f.opt.serial_us},
                          {"--trace-ids", [&f](const std::string& v) {
                             f.opt.random_trace_ids = v == "random";
                             if (v == "random" || v == "counted")
                               return true;
                             std::fprintf(stderr, "--trace-ids: counted or random, not %s\n",
                                          v.c_str());
                             return false;
                           }}}))
    return 2;
  if (url.empty() || !parse_url(url, f.opt) || f.opt.n < 1) {
    std::fprintf(stderr, "usage: bench_fake_runtime --url ws://HOST:PORT[/path] [--n N] "
                         "[--prefix P] [--connect-window W] [--lifetime S] [--hold N] "
                         "[--name SERVICE] [--serial-us N] [--trace-ids counted|random]\n");
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGUSR1, on_release);
  std::signal(SIGPIPE, SIG_IGN);
  f.conns.reserve(static_cast<std::size_t>(f.opt.n));
  f.connect_more();
  std::function<void()> watch = [&] {
    if (stop_requested)
      return f.loop.stop();
    if (release_requested && !f.released)
      f.release_held();
    f.loop.after(50ms, watch);
  };
  f.loop.after(50ms, watch);
  f.loop.run_for(std::chrono::seconds(f.opt.lifetime_s));
  if (!f.announced) {
    std::fprintf(stderr, "fake runtime: only %d of %d registered (%d failed)\n", f.ready, f.opt.n,
                 f.failures);
    return 1;
  }
  return 0;
}
