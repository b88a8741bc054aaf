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
//           in flight; rate = chunks/s; latency = time to first chunk
//   bidi    each caller keeps K bidi sessions (/flow/bidiEcho, streamInput)
//           and ping-pongs one input chunk per session; rate = echoes/s;
//           latency = input chunk -> echoed output chunk
//   cancel  each caller loops K runs of /flow/slow: on runActionState send
//           cancelAction{traceId}; latency = cancel sent -> run ended with
//           the cancellation error (ack latency reported too)
//
// Runs W seconds of warm-up, then S measured seconds, then drains what is in
// flight (bounded). Prints one JSON line: rate, latency percentiles, and the
// CPU (from /proc) of every --watch process and of itself ("caller") per
// operation, their RSS, and the machine-wide busy time.
#include "bench/measure.hpp"
#include "bench/wsraw.hpp"

#include "net/json_raw.hpp"

#include <simdjson.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

namespace od = simdjson::ondemand;
using namespace std::chrono_literals;
using bench::clock;

struct options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string path = "/api/ws";
  std::string scenario = "echo";
  int callers = 1;
  int inflight = 1;
  double seconds = 3;
  double warmup = 1;
  double rate = 1000;
  long stream_n = 10000;
  double drain_timeout = 10;
  long max_inflight = 20000;
  std::string system = "?";
  int round = 0;
  std::string runtime_id; // optional runtimeId param
  std::vector<std::pair<std::string, int>> watch;
};

bool parse_url(const std::string& url, options& o) {
  return bench::split_ws_url(url, o.host, o.port, o.path);
}

// ---- inbound frames -------------------------------------------------------------

struct inbound {
  bool response = false;
  bool error = false;
  std::uint64_t id = 0;       // response id / notification requestId
  bool has_id = false;
  std::string_view method;    // notifications
  std::string_view result;    // raw
  std::string_view trace_id;  // runActionState
  long chunk_num = -1;        // {"i":k} / {"q":k} chunks
};

bool to_u64(std::string_view s, std::uint64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr != s.data();
}

constexpr std::string_view k_chunk_prefix =
  R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)";
constexpr std::string_view k_state_prefix =
  R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)";
constexpr std::string_view k_result_prefix = R"({"jsonrpc":"2.0","result":)";
constexpr std::string_view k_error_prefix = R"({"jsonrpc":"2.0","error":)";

// Parses a leading integer; advances `s`.
bool eat_number(std::string_view& s, long& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  if (r.ec != std::errc{})
    return false;
  s.remove_prefix(static_cast<std::size_t>(r.ptr - s.data()));
  return true;
}

// Fast paths for the frame shapes actor-host and the relay produce; anything
// else goes through simdjson.
bool fast_parse(std::string_view f, inbound& m) {
  if (f.substr(0, k_chunk_prefix.size()) == k_chunk_prefix) {
    auto s = f.substr(k_chunk_prefix.size());
    long id;
    if (!eat_number(s, id))
      return false;
    // ,"chunk":{"i":123}}}
    constexpr std::string_view ck = R"(,"chunk":{")";
    if (s.substr(0, ck.size()) != ck || s.size() < ck.size() + 3)
      return false;
    s.remove_prefix(ck.size() + 1); // the key letter
    if (s.substr(0, 2) != "\":")
      return false;
    s.remove_prefix(2);
    long k;
    if (!eat_number(s, k))
      return false;
    m.method = "streamChunk";
    m.id = static_cast<std::uint64_t>(id);
    m.has_id = true;
    m.chunk_num = k;
    return true;
  }
  bool res = f.substr(0, k_result_prefix.size()) == k_result_prefix;
  bool err = !res && f.substr(0, k_error_prefix.size()) == k_error_prefix;
  if (res || err) {
    auto p = f.rfind(R"(,"id":)");
    if (p == std::string_view::npos || f.back() != '}')
      return false;
    if (!to_u64(f.substr(p + 6, f.size() - p - 7), m.id))
      return false;
    m.response = true;
    m.has_id = true;
    m.error = err;
    auto start = (res ? k_result_prefix : k_error_prefix).size();
    m.result = f.substr(start, p - start);
    return true;
  }
  return false;
}

bool slow_parse(std::string_view f, inbound& m) {
  thread_local od::parser parser;
  od::document doc;
  if (parser.iterate(f.data(), f.size(), f.size() + bench::read_padding).get(doc))
    return false;
  od::object obj;
  if (doc.get_object().get(obj))
    return false;
  for (auto field : obj) {
    std::string_view k;
    if (field.unescaped_key().get(k))
      return false;
    od::value v;
    if (field.value().get(v))
      return false;
    if (k == "method") {
      if (v.get_string().get(m.method))
        return false;
    } else if (k == "id") {
      std::uint64_t id;
      if (!v.get_uint64().get(id)) {
        m.id = id;
        m.has_id = true;
      }
    } else if (k == "result" || k == "error") {
      m.response = true;
      m.error = k == "error";
      if (actor_host::net::json_raw::raw_of(v, m.result))
        return false;
    } else if (k == "params") {
      od::object p;
      if (v.get_object().get(p))
        continue;
      for (auto pf : p) {
        std::string_view pk;
        if (pf.unescaped_key().get(pk))
          return false;
        od::value pv;
        if (pf.value().get(pv))
          return false;
        if (pk == "requestId") {
          std::uint64_t id;
          if (!pv.get_uint64().get(id)) {
            m.id = id;
            m.has_id = true;
          }
        } else if (pk == "state") {
          od::object st;
          if (pv.get_object().get(st))
            continue;
          for (auto sf : st) {
            std::string_view sk;
            if (sf.unescaped_key().get(sk))
              return false;
            if (sk == "traceId") {
              od::value tv;
              if (sf.value().get(tv) || tv.get_string().get(m.trace_id))
                return false;
            }
          }
        } else if (pk == "chunk") {
          std::string_view raw;
          if (actor_host::net::json_raw::raw_of(pv, raw))
            return false;
          // {"i":k} or {"q":k}
          auto c = raw.find("\":");
          if (c != std::string_view::npos) {
            auto s = raw.substr(c + 2);
            long k;
            if (eat_number(s, k))
              m.chunk_num = k;
          }
        }
      }
    }
  }
  return true;
}

// ---- the generator ----------------------------------------------------------------

enum class phase { connecting, warmup, measure, drain, done };
enum class op_kind { echo, stream, bidi, slow, cancel_ack };

struct op {
  op_kind kind = op_kind::echo;
  clock::time_point t0;       // sent (echo/open), last input (bidi), cancel sent (slow)
  long got = 0;               // stream chunks seen / bidi sequence
  bool ended_input = false;   // bidi
  bool cancel_sent = false;   // slow
  std::uint64_t parent = 0;   // cancel_ack -> run id
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

struct loadgen {
  options o;
  bench::loop loop;
  std::vector<std::unique_ptr<caller>> callers;
  phase ph = phase::connecting;
  int opened = 0;
  int closed_early = 0;
  std::string close_reason;
  clock::time_point t_begin, t_measure, t_end;
  // measured window
  std::uint64_t done_ops = 0;
  std::uint64_t errors = 0;
  std::uint64_t order_errors = 0;
  std::uint64_t late_skipped = 0; // open loop: calls not sent (in-flight cap)
  std::uint64_t sent_measure = 0;
  std::string first_error;
  bench::latencies lat;
  bench::latencies lat_ack;
  long total_inflight = 0;
  // open loop
  std::uint64_t open_sent = 0;
  std::size_t rr = 0;
  // /proc snapshots
  std::vector<double> cpu0, cpu1;
  double self_cpu0 = 0, self_cpu1 = 0, busy0 = 0, busy1 = 0;

  std::string rt_param() const {
    return o.runtime_id.empty() ? std::string{} : R"(,"runtimeId":")" + o.runtime_id + '"';
  }

  bool issuing() const { return ph == phase::warmup || ph == phase::measure; }

  void error(const std::string& what) {
    if (ph == phase::measure)
      ++errors;
    if (first_error.empty())
      first_error = what;
  }

  // -- issuing ------------------------------------------------------------------
  std::uint64_t new_op(caller& c, op_kind k) {
    auto id = c.next_id++;
    auto& x = c.ops[id];
    x.kind = k;
    x.t0 = clock::now();
    ++total_inflight;
    if (ph == phase::measure)
      ++sent_measure;
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
    static const std::string rt = rt_param();
    c.ws->send_parts({R"({"jsonrpc":"2.0","id":)", ids,
                      R"(,"method":"runAction","params":{"key":"/flow/echo","input":{"i":)", ids,
                      R"(,"s":"hello"})", rt, "}}"});
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
    if (o.scenario == "echo")
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
      ++done_ops;
      lat.add(us);
    }
  }

  static double us_since(clock::time_point t) {
    return std::chrono::duration<double, std::micro>(clock::now() - t).count();
  }

  // -- receiving ----------------------------------------------------------------
  void on_frame(caller& c, std::string_view f) {
    inbound m;
    if (!fast_parse(f, m)) {
      // runActionState is only needed by the cancel scenario.
      if (o.scenario != "cancel" && f.substr(0, k_state_prefix.size()) == k_state_prefix)
        return;
      m = inbound{};
      if (!slow_parse(f, m))
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
      return;
    }
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
        end_op(c, id);
        if (issuing() && o.scenario == "echo")
          send_echo(c);
        return;
      }
      case op_kind::stream: {
        char pat[32];
        int n = std::snprintf(pat, sizeof(pat), "\"count\":%ld,", o.stream_n);
        if (m.error || m.result.find(std::string_view{pat, static_cast<std::size_t>(n)}) == std::string_view::npos)
          error("stream failed: " + std::string{m.result.substr(0, 200)});
        else if (x.got != o.stream_n)
          error("stream ended after " + std::to_string(x.got) + " chunks");
        end_op(c, id);
        if (issuing())
          send_stream(c);
        return;
      }
      case op_kind::bidi: {
        if (m.error)
          error("bidi failed: " + std::string{m.result.substr(0, 200)});
        end_op(c, id);
        if (issuing())
          send_bidi_open(c);
        return;
      }
      case op_kind::slow: {
        if (!m.error || m.result.find("cancel") == std::string_view::npos)
          error("slow run did not end cancelled: " + std::string{m.result.substr(0, 200)});
        else if (x.cancel_sent)
          record(us_since(x.t0));
        end_op(c, id);
        if (issuing())
          send_slow(c);
        return;
      }
      case op_kind::cancel_ack: {
        if (m.error)
          error("cancel failed: " + std::string{m.result.substr(0, 200)});
        else if (ph == phase::measure)
          lat_ack.add(us_since(x.t0));
        end_op(c, id);
        return;
      }
    }
  }

  void on_chunk(caller& c, std::uint64_t id, op& x, const inbound& m) {
    if (x.kind == op_kind::stream) {
      if (m.chunk_num != x.got)
        ++order_errors;
      if (x.got == 0 && ph == phase::measure)
        lat.add(us_since(x.t0)); // time to first chunk
      ++x.got;
      if (ph == phase::measure)
        ++done_ops;
      return;
    }
    if (x.kind == op_kind::bidi) {
      if (m.chunk_num != x.got) {
        ++order_errors;
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
    if (trace.empty())
      return;
    run.cancel_sent = true;
    run.t0 = clock::now();
    std::string t{trace};
    auto cid = new_op(c, op_kind::cancel_ack);
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
          ++late_skipped;
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
    t_measure = clock::now();
    cpu0.clear();
    for (auto& [name, pid] : o.watch)
      cpu0.push_back(bench::proc_cpu_ms(pid));
    self_cpu0 = bench::proc_cpu_ms(getpid());
    busy0 = bench::machine_busy_ms();
    lat.reserve(1 << 20);
  }

  void end_measure() {
    t_end = clock::now();
    cpu1.clear();
    for (auto& [name, pid] : o.watch)
      cpu1.push_back(bench::proc_cpu_ms(pid));
    self_cpu1 = bench::proc_cpu_ms(getpid());
    busy1 = bench::machine_busy_ms();
    ph = phase::drain;
    // Bidi sessions idle between echoes get their end now; the others on
    // their next echo.
    check_drained();
    loop.after(std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::duration<double>(o.drain_timeout)),
               [this] { loop.stop(); });
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

  // -- output --------------------------------------------------------------------
  std::string json() {
    double wall_ms = std::chrono::duration<double, std::milli>(t_end - t_measure).count();
    const char* unit = o.scenario == "stream" ? "chunks"
                       : o.scenario == "bidi" ? "echoes"
                       : o.scenario == "cancel" ? "cancels" : "calls";
    auto ops = static_cast<double>(done_ops);
    std::string s;
    char b[512];
    auto add = [&](const char* fmt, auto... xs) {
      std::snprintf(b, sizeof(b), fmt, xs...);
      s += b;
    };
    bool ok = ph == phase::done && closed_early == 0 && errors == 0 && order_errors == 0
              && done_ops > 0;
    add(R"({"system":"%s","scenario":"%s","round":%d,"callers":%d,"inflight":%d,)", o.system.c_str(),
        o.scenario.c_str(), o.round, o.callers, o.inflight);
    if (o.scenario == "open")
      add(R"("rate_target":%.0f,"late_skipped":%llu,"sent":%llu,)", o.rate,
          static_cast<unsigned long long>(late_skipped),
          static_cast<unsigned long long>(sent_measure));
    if (o.scenario == "stream")
      add(R"("stream_n":%ld,)", o.stream_n);
    add(R"("wall_ms":%.1f,"ops":%llu,"unit":"%s","rate":%.1f,"errors":%llu,"order_errors":%llu,)",
        wall_ms, static_cast<unsigned long long>(done_ops), unit,
        wall_ms > 0 ? ops * 1000.0 / wall_ms : 0.0, static_cast<unsigned long long>(errors),
        static_cast<unsigned long long>(order_errors));
    add(R"("lat_us":{"n":%zu,"p50":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f,"max":%.1f},)", lat.size(),
        lat.pct(50), lat.pct(90), lat.pct(99), lat.pct(99.9), lat.pct(100));
    if (o.scenario == "cancel")
      add(R"("ack_us":{"n":%zu,"p50":%.1f,"p99":%.1f},)", lat_ack.size(), lat_ack.pct(50),
          lat_ack.pct(99));
    s += R"("procs":{)";
    double ours = 0;
    auto proc = [&](const std::string& name, int pid, double c0, double c1, bool first) {
      double cpu = c1 - c0;
      ours += cpu;
      add(R"(%s"%s":{"pid":%d,"cpu_pct":%.1f,"cpu_us_per_op":%.3f,"rss_kb":%ld})", first ? "" : ",",
          name.c_str(), pid, wall_ms > 0 ? cpu * 100.0 / wall_ms : 0.0,
          ops > 0 ? cpu * 1000.0 / ops : 0.0, bench::proc_rss_kb(pid));
    };
    for (std::size_t i = 0; i < o.watch.size(); ++i)
      proc(o.watch[i].first, o.watch[i].second, cpu0[i], cpu1[i], i == 0);
    proc("caller", getpid(), self_cpu0, self_cpu1, o.watch.empty());
    double busy = busy1 - busy0;
    add(R"(},"machine_busy_pct":%.1f,"foreign_pct":%.1f,"ok":%s)",
        wall_ms > 0 ? busy * 100.0 / wall_ms : 0.0,
        wall_ms > 0 ? std::max(0.0, (busy - ours) * 100.0 / wall_ms) : 0.0, ok ? "true" : "false");
    if (!first_error.empty() || !close_reason.empty() || ph != phase::done) {
      std::string why = !close_reason.empty() ? close_reason
                        : !first_error.empty() ? first_error
                                               : "drain timed out with " + std::to_string(total_inflight)
                                                   + " in flight";
      for (auto& ch : why)
        if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20)
          ch = '\'';
      s += R"(,"note":")" + why + "\"";
    }
    s += "}";
    return s;
  }
};

} // namespace

int main(int argc, char** argv) {
  loadgen g;
  auto& o = g.o;
  std::string url;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    std::string v = argv[i + 1];
    if (k == "--url")
      url = v;
    else if (k == "--scenario")
      o.scenario = v;
    else if (k == "--callers")
      o.callers = std::atoi(v.c_str());
    else if (k == "--inflight")
      o.inflight = std::atoi(v.c_str());
    else if (k == "--seconds")
      o.seconds = std::atof(v.c_str());
    else if (k == "--warmup")
      o.warmup = std::atof(v.c_str());
    else if (k == "--rate")
      o.rate = std::atof(v.c_str());
    else if (k == "--stream-n")
      o.stream_n = std::atol(v.c_str());
    else if (k == "--drain-timeout")
      o.drain_timeout = std::atof(v.c_str());
    else if (k == "--max-inflight")
      o.max_inflight = std::atol(v.c_str());
    else if (k == "--system")
      o.system = v;
    else if (k == "--round")
      o.round = std::atoi(v.c_str());
    else if (k == "--runtime-id")
      o.runtime_id = v;
    else if (k == "--watch") {
      auto eq = v.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "--watch NAME=PID\n");
        return 2;
      }
      o.watch.emplace_back(v.substr(0, eq), std::atoi(v.c_str() + eq + 1));
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  static const char* scenarios[] = {"echo", "open", "stream", "bidi", "cancel"};
  bool known = false;
  for (auto* s : scenarios)
    known |= o.scenario == s;
  if (url.empty() || !parse_url(url, o) || !known || o.callers < 1 || o.inflight < 1
      || o.seconds <= 0) {
    std::fprintf(stderr, "usage: bench_load --url ws://HOST:PORT/api/ws --scenario "
                         "echo|open|stream|bidi|cancel [--callers N] [--inflight K] "
                         "[--seconds S] [--warmup W] [--rate R] [--stream-n N] "
                         "[--system NAME] [--round I] [--watch NAME=PID]...\n");
    return 2;
  }
  g.connect_all();
  // Bounded: connect (10 s) + warm-up + measure + drain, whatever happens.
  auto limit = std::chrono::duration<double>(10 + o.warmup + o.seconds + o.drain_timeout + 1);
  g.loop.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(limit));
  if (g.ph == phase::connecting || g.ph == phase::warmup) {
    std::fprintf(stderr, "bench_load: %s\n",
                 g.close_reason.empty() ? "could not start (connect timeout)" : g.close_reason.c_str());
    std::printf("{\"system\":\"%s\",\"scenario\":\"%s\",\"round\":%d,\"ok\":false,\"note\":\"could not start\"}\n",
                o.system.c_str(), o.scenario.c_str(), o.round);
    return 1;
  }
  if (g.ph == phase::measure)
    g.end_measure(); // run_for ran out (should not happen)
  std::printf("%s\n", g.json().c_str());
  return g.ph == phase::done ? 0 : 1;
}
