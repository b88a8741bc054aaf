// bench_load: load generator for a Reflection V2 manager's caller WebSocket
// (actor-host's /api/ws, or the bench relay, which speaks the same protocol).
//
//   bench_load --url ws://127.0.0.1:4100/api/ws --scenario echo|open|stream|bidi|cancel
//              [--callers N] [--inflight K] [--seconds S] [--warmup W]
//              [--rate R] [--stream-n N] [--drain-timeout S]
//              [--system NAME] [--round I] [--watch NAME=PID]...
//
// Scenarios (every caller is one WebSocket; ids are per caller):
//   echo    closed loop: each caller keeps K runAction(/flow/echo) in flight
//   open    open loop: R calls/s in total, spread over the callers, latency
//           measured from the send time; in flight is capped (--max-inflight)
//   stream  each caller keeps K runAction(/flow/streamCount, {n}, stream)
//           in flight; rate = chunks/s; latency = time to first chunk;
//           streams still running when the window ends are cancelled
//           (cancelAction{traceId}, as the cancel scenario does)
//   bidi    each caller keeps K bidi sessions (/flow/bidiEcho, streamInput)
//           and ping-pongs one input chunk per session; rate = echoes/s;
//           latency = input chunk -> echoed output chunk
//   cancel  each caller loops K runs of /flow/slow: on runActionState send
//           cancelAction{traceId}; latency = cancel sent -> run ended with
//           the cancellation error (ack latency reported too)
//   burst   each caller sends K echo calls at once, nothing more: N x K in
//           flight together (`bench_fake_runtime --hold` holds the replies);
//           done when all are answered or after S seconds; no warm-up
// --runtime-id ID [--runtimes M]: calls go to ID, or round robin to ID-0..M-1.
//
// Runs W seconds of warm-up, then S measured seconds, then drains what is in
// flight (bounded by --drain-timeout, default 10 s). Prints one JSON line:
// rate, latency percentiles, and the CPU (from /proc) of every --watch
// process and of itself ("caller") per operation, their RSS, and the
// machine-wide busy time.
//
// --url http://HOST:PORT drives the Genkit tools server's HTTP routes instead
// (POST /api/runAction, /api/streamAction; echo and stream only): see
// loadgen_http.hpp.
#include "bench/loadgen_frames.hpp"
#include "bench/loadgen_http.hpp"
#include "bench/loadgen_options.hpp"
#include "bench/loadgen_result.hpp"
#include "bench/measure.hpp"
#include "bench/wsraw.hpp"
#include "registry/runtime_info.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

using bench::load_options;
using namespace std::chrono_literals;
using bench::clock;
using bench::us_since;

// ---- the generator ----------------------------------------------------------------

using phase = bench::load_phase;
enum class op_kind { echo, stream, bidi, slow, cancel_ack, stream_cancel };

struct op {
  op_kind kind = op_kind::echo;
  clock::time_point t0;       // sent (echo/open), last input (bidi), cancel sent (slow)
  long got = 0;               // stream chunks seen / bidi sequence
  bool ended_input = false;   // bidi
  bool cancel_sent = false;   // slow, stream
  std::uint64_t parent = 0;   // cancel_ack, stream_cancel -> run id
  std::string trace;          // stream: its trace id (runActionState), to cancel it by
};

struct loadgen;

struct caller {
  loadgen* g = nullptr;
  int index = 0;
  std::shared_ptr<bench::ws_conn> ws;
  bool open = false;
  std::uint64_t next_id = 1;
  std::unordered_map<std::uint64_t, op> ops;
};

struct process_snapshot {
  double cpu_ms = 0;
};

struct loadgen : bench::load_run {
  load_options o;
  bench::loop loop;
  std::vector<std::unique_ptr<caller>> callers;
  int opened = 0;
  int closed_early = 0;
  clock::time_point t_begin;
  long total_inflight = 0;
  // open loop
  std::uint64_t open_sent = 0;
  std::size_t rr = 0;

  std::uint64_t spread_seq = 0; // --runtimes: the round robin

  std::string rt_param() const {
    return bench::runtime_id_param(o, 0);
  }

  // -- issuing ------------------------------------------------------------------
  std::uint64_t new_op(caller& c, op_kind k) {
    auto id = c.next_id++;
    auto& x = c.ops[id];
    x.kind = k;
    x.t0 = clock::now();
    ++total_inflight;
    if (ph == phase::measure)
      ++w.sent_measure;
    return id;
  }

  void end_op(caller& c, std::uint64_t id) {
    if (c.ops.erase(id))
      --total_inflight;
  }

  void send_echo(caller& c) {
    auto id = new_op(c, op_kind::echo);
    char num[24];
    auto r = std::to_chars(num, num + sizeof(num), id);
    std::string_view ids{num, static_cast<std::size_t>(r.ptr - num)};
    static const std::string fixed = rt_param();
    const std::string spread = o.runtimes > 0 ? bench::runtime_id_param(o, spread_seq++) : "";
    c.ws->send_parts({R"({"jsonrpc":"2.0","id":)", ids,
                      R"(,"method":"runAction","params":{"key":"/flow/echo","input":{"i":)", ids,
                      R"(,"s":"hello"})", o.runtimes > 0 ? spread : fixed, "}}"});
  }

  void send_stream(caller& c) {
    auto id = new_op(c, op_kind::stream);
    auto ids = std::to_string(id);
    auto n = std::to_string(o.stream_n);
    c.ws->send_parts({R"({"jsonrpc":"2.0","id":)", ids,
                      R"(,"method":"runAction","params":{"key":"/flow/streamCount","input":{"n":)", n,
                      "}", rt_param(), R"(,"stream":true}})"});
  }

  void send_bidi_open(caller& c) {
    auto id = new_op(c, op_kind::bidi);
    auto ids = std::to_string(id);
    c.ws->send_parts({R"({"jsonrpc":"2.0","id":)", ids,
                      R"(,"method":"runAction","params":{"key":"/flow/bidiEcho")", rt_param(),
                      R"(,"stream":true,"streamInput":true}})"});
    send_bidi_input(c, id, c.ops[id]);
  }

  void send_bidi_input(caller& c, std::uint64_t id, op& x) {
    x.t0 = clock::now();
    char a[24], b[24];
    auto ra = std::to_chars(a, a + sizeof(a), id);
    auto rb = std::to_chars(b, b + sizeof(b), x.got);
    c.ws->send_parts({R"({"jsonrpc":"2.0","method":"sendInputStreamChunk","params":{"requestId":)",
                      std::string_view{a, static_cast<std::size_t>(ra.ptr - a)}, R"(,"chunk":{"q":)",
                      std::string_view{b, static_cast<std::size_t>(rb.ptr - b)}, "}}}"});
  }

  void send_bidi_end(caller& c, std::uint64_t id, op& x) {
    x.ended_input = true;
    auto ids = std::to_string(id);
    c.ws->send_parts({R"({"jsonrpc":"2.0","method":"endInputStream","params":{"requestId":)", ids,
                      "}}"});
  }

  void send_slow(caller& c) {
    auto id = new_op(c, op_kind::slow);
    auto ids = std::to_string(id);
    c.ws->send_parts({R"({"jsonrpc":"2.0","id":)", ids,
                      R"(,"method":"runAction","params":{"key":"/flow/slow","input":{})", rt_param(),
                      "}}"});
  }

  void start_one(caller& c) {
    if (o.scenario == "echo" || o.scenario == "burst")
      send_echo(c);
    else if (o.scenario == "stream")
      send_stream(c);
    else if (o.scenario == "bidi")
      send_bidi_open(c);
    else if (o.scenario == "cancel")
      send_slow(c);
  }

  void record(double us) {
    if (ph == phase::measure) {
      ++w.done_ops;
      w.lat.add(us);
    }
  }

  // -- receiving ----------------------------------------------------------------
  void on_frame(caller& c, std::string_view f) {
    bench::inbound m;
    if (!bench::fast_parse(f, m)) {
      // runActionState is only needed to cancel by (one per call).
      if (o.scenario != "cancel" && o.scenario != "stream" && bench::is_run_action_state(f))
        return;
      m = bench::inbound{};
      if (!bench::slow_parse(f, m))
        return error("unparsable frame: " + std::string{f.substr(0, 200)});
    }
    if (!m.has_id) {
      if (m.response)
        error("error without id: " + std::string{f.substr(0, 300)});
      return;
    }
    auto it = c.ops.find(m.id);
    if (it == c.ops.end())
      return; // e.g. late notifications
    auto id = it->first;
    auto& x = it->second;
    if (!m.response) {
      if (m.method == "streamChunk")
        return on_chunk(c, id, x, m);
      if (m.method == "runActionState" && x.kind == op_kind::slow && !x.cancel_sent)
        return send_cancel(c, id, x, m.trace_id);
      if (m.method == "runActionState" && x.kind == op_kind::stream) {
        x.trace = m.trace_id;
        if (ph == phase::drain) // sent just before the window ended
          send_cancel(c, id, x, x.trace);
      }
      return;
    }
    // The answer to a call: judged by its kind, then the call is over.
    switch (x.kind) {
      case op_kind::echo: {
        if (m.error) {
          error("echo failed: " + std::string{m.result.substr(0, 300)});
        } else {
          char pat[32];
          int n = std::snprintf(pat, sizeof(pat), "\"i\":%llu,", static_cast<unsigned long long>(id));
          if (m.result.find(std::string_view{pat, static_cast<std::size_t>(n)}) == std::string_view::npos)
            error("echo mismatch: " + std::string{m.result.substr(0, 200)});
          else
            record(us_since(x.t0));
        }
        break;
      }
      case op_kind::stream: {
        // Cancelled at the end of the window: its chunks so far were counted.
        if (x.cancel_sent && m.error && m.result.find("cancel") != std::string_view::npos)
          break;
        char pat[32];
        int n = std::snprintf(pat, sizeof(pat), "\"count\":%ld,", o.stream_n);
        if (m.error || m.result.find(std::string_view{pat, static_cast<std::size_t>(n)}) == std::string_view::npos)
          error("stream failed: " + std::string{m.result.substr(0, 200)});
        else if (x.got != o.stream_n)
          error("stream ended after " + std::to_string(x.got) + " chunks");
        break;
      }
      case op_kind::bidi:
        if (m.error)
          error("bidi failed: " + std::string{m.result.substr(0, 200)});
        break;
      case op_kind::slow:
        if (!m.error || m.result.find("cancel") == std::string_view::npos)
          error("slow run did not end cancelled: " + std::string{m.result.substr(0, 200)});
        else if (x.cancel_sent)
          record(us_since(x.t0));
        break;
      case op_kind::cancel_ack:
        // Not a call of its own: the slow run it cancelled carries on the loop.
        if (m.error)
          error("cancel failed: " + std::string{m.result.substr(0, 200)});
        else if (ph == phase::measure)
          w.lat_ack.add(us_since(x.t0));
        end_op(c, id);
        return;
      case op_kind::stream_cancel:
        // Refused only if the stream ended first (its own answer says how);
        // the drain waits for the stream either way.
        if (m.error && m.result.find("already completed") == std::string_view::npos)
          error("stream cancel failed: " + std::string{m.result.substr(0, 200)});
        end_op(c, id);
        return;
    }
    end_op(c, id);
    // Closed loop: the caller's next call of the scenario; the open loop and
    // the burst send on their own schedule.
    if (issuing() && o.scenario != "open" && o.scenario != "burst")
      start_one(c);
    if (o.scenario == "burst" && ph == phase::measure && total_inflight == 0)
      end_measure(); // every call answered
  }

  void on_chunk(caller& c, std::uint64_t id, op& x, const bench::inbound& m) {
    if (x.kind == op_kind::stream)
      return count_chunk(m.chunk_num, x.got, x.t0);
    if (x.kind == op_kind::bidi) {
      if (m.chunk_num != x.got) {
        ++w.order_errors;
        return;
      }
      record(us_since(x.t0));
      ++x.got;
      if (issuing())
        send_bidi_input(c, id, x);
      else if (!x.ended_input)
        send_bidi_end(c, id, x);
    }
  }

  void send_cancel(caller& c, std::uint64_t run_id, op& run, std::string_view trace) {
    // The system under test's text goes into our frame: only an id's characters.
    if (!actor_host::registry::valid_trace_id(trace))
      return;
    run.cancel_sent = true;
    if (run.kind == op_kind::slow)
      run.t0 = clock::now();
    std::string t{trace};
    auto cid = new_op(c, run.kind == op_kind::stream ? op_kind::stream_cancel : op_kind::cancel_ack);
    c.ops[cid].parent = run_id;
    auto ids = std::to_string(cid);
    c.ws->send_parts({R"({"jsonrpc":"2.0","id":)", ids,
                      R"(,"method":"cancelAction","params":{"traceId":")", t, "\"", rt_param(), "}}"});
  }

  // -- open loop ------------------------------------------------------------------
  void open_tick() {
    if (!issuing())
      return;
    auto elapsed = std::chrono::duration<double>(clock::now() - t_begin).count();
    auto due = static_cast<std::uint64_t>(elapsed * o.rate);
    while (open_sent < due) {
      ++open_sent;
      if (total_inflight >= o.max_inflight) {
        if (ph == phase::measure)
          ++w.late_skipped;
        continue;
      }
      auto& c = *callers[rr++ % callers.size()];
      if (c.open)
        send_echo(c);
    }
    loop.after(1ms, [this] { open_tick(); }); // same tick as the Node driver
  }

  // -- phases ----------------------------------------------------------------------
  void begin() {
    if (o.scenario == "burst")
      o.warmup = 0; // the burst is the measurement
    ph = o.warmup > 0 ? phase::warmup : phase::measure;
    t_begin = clock::now();
    if (ph == phase::measure)
      snapshot_start();
    if (o.scenario == "open") {
      open_tick();
    } else {
      for (auto& c : callers)
        for (int k = 0; k < o.inflight; ++k)
          start_one(*c);
    }
    // The measured window lasts `seconds` from when it actually starts.
    auto measure_for = [this] {
      loop.after(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::duration<double>(o.seconds)),
                 [this] { end_measure(); });
    };
    if (o.warmup > 0)
      loop.after(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::duration<double>(o.warmup)),
                 [this, measure_for] {
                   ph = phase::measure;
                   snapshot_start();
                   measure_for();
                 });
    else
      measure_for();
  }

  void snapshot_start() {
    w.t_measure = clock::now();
    read_cpu(o, true);
    w.lat.reserve(1 << 20);
  }

  void end_measure() {
    w.t_end = clock::now();
    read_cpu(o, false);
    ph = phase::drain;
    cancel_streams();
    // Bidi sessions idle between echoes get their end now; the others on
    // their next echo.
    check_drained();
    loop.after(std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::duration<double>(o.drain_timeout)),
               [this] { loop.stop(); });
  }

  // Streams still running are cancelled the way the protocol lets a caller
  // end a call (cancelAction by its trace id; one whose trace id has not
  // come yet, when it comes), so the drain waits for the cancels, not for
  // the rest of --stream-n chunks: a slow system needs longer than any fixed
  // drain timeout for that (the TS door streams 4 x 200,000 chunks in ~15
  // s), and a stream left running would load the system into the next
  // phase. Nothing after the window is counted, so what is measured stays
  // the chunks received inside it.
  void cancel_streams() {
    if (o.scenario != "stream")
      return;
    for (auto& c : callers) {
      // send_cancel adds to c->ops: collect first.
      std::vector<std::uint64_t> running;
      for (auto& [id, x] : c->ops)
        if (x.kind == op_kind::stream && !x.cancel_sent)
          running.push_back(id);
      for (auto id : running) {
        auto& x = c->ops[id];
        send_cancel(*c, id, x, x.trace);
      }
    }
  }

  void check_drained() {
    if (ph == phase::drain && total_inflight == 0) {
      ph = phase::done;
      loop.stop();
    } else if (ph == phase::drain) {
      loop.after(5ms, [this] { check_drained(); });
    }
  }

  // -- setup ---------------------------------------------------------------------
  void connect_all() {
    for (int i = 0; i < o.callers; ++i) {
      auto c = std::make_unique<caller>();
      auto* p = c.get();
      p->g = this;
      p->index = i;
      callers.push_back(std::move(c));
      bench::ws_conn::handlers h;
      h.on_open = [this, p] {
        p->open = true;
        if (++opened == o.callers)
          begin();
      };
      h.on_text = [this, p](std::string_view f) { on_frame(*p, f); };
      h.on_close = [this, p](const std::string& why) {
        p->open = false;
        ++closed_early;
        if (close_reason.empty())
          close_reason = "caller " + std::to_string(p->index) + ": " + why;
        // Its calls will not complete.
        total_inflight -= static_cast<long>(p->ops.size());
        p->ops.clear();
        if (ph == phase::connecting)
          loop.stop();
      };
      p->ws = bench::ws_conn::connect(loop, o.host, o.port, o.path, std::move(h));
    }
  }
};

} // namespace

int main(int argc, char** argv) {
  loadgen g;
  auto& o = g.o;
  if (!bench::parse_load_options(argc, argv, o))
    return 2;
  if (o.http)
    return bench::run_http_load(o);
  g.connect_all();
  g.loop.run_for(bench::run_time_bound(o));
  if (g.ph == phase::measure)
    g.end_measure(); // run_for ran out (should not happen)
  return g.print_result(o, g.closed_early == 0, g.total_inflight);
}
