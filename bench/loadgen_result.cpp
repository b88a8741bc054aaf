#include "bench/loadgen_result.hpp"

#include <algorithm>
#include <cstdio>
#include <unistd.h>
#include <utility>

namespace bench {

void load_run::error(const std::string& what) {
  if (ph == load_phase::measure)
    ++w.errors;
  if (first_error.empty())
    first_error = what;
}

void load_run::count_chunk(long k, long& got, clock::time_point t0) {
  if (k != got)
    ++w.order_errors;
  if (got == 0 && ph == load_phase::measure)
    w.lat.add(us_since(t0));
  ++got;
  if (ph == load_phase::measure)
    ++w.done_ops;
}

void load_run::read_cpu(const load_options& o, bool start) {
  auto& cpu = start ? w.cpu0 : w.cpu1;
  cpu.clear();
  for (auto& [name, pid] : o.watch)
    cpu.push_back(proc_cpu_ms(pid));
  (start ? w.self_cpu0 : w.self_cpu1) = proc_cpu_ms(getpid());
  (start ? w.busy0 : w.busy1) = machine_busy_ms();
}

int load_run::print_result(const load_options& o, bool connections_kept, long in_flight) {
  if (ph == load_phase::connecting || ph == load_phase::warmup) {
    std::fprintf(stderr, "bench_load: %s\n",
                 close_reason.empty() ? "could not start (connect timeout)" : close_reason.c_str());
    std::printf("{\"system\":\"%s\",\"scenario\":\"%s\",\"round\":%d,\"ok\":false,\"note\":\"could not start\"}\n",
                o.system.c_str(), o.scenario.c_str(), o.round);
    return 1;
  }
  bool ok = ph == load_phase::done && connections_kept && w.errors == 0 && w.order_errors == 0
            && w.done_ops > 0;
  std::string note = !close_reason.empty() ? close_reason
                     : !first_error.empty() ? first_error
                     : ph != load_phase::done
                       ? "drain timed out with " + std::to_string(in_flight) + " in flight"
                       : "";
  std::printf("%s\n", result_json(o, w, ok, std::move(note)).c_str());
  return ph == load_phase::done ? 0 : 1;
}

std::chrono::nanoseconds run_time_bound(const load_options& o) {
  auto limit = std::chrono::duration<double>(10 + o.warmup + o.seconds + o.drain_timeout + 1);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(limit);
}

std::string result_json(const load_options& o, load_window& w, bool ok, std::string note) {
  double wall_ms = std::chrono::duration<double, std::milli>(w.t_end - w.t_measure).count();
  const char* unit = o.scenario == "stream" ? "chunks"
                     : o.scenario == "bidi" ? "echoes"
                     : o.scenario == "cancel" ? "cancels" : "calls";
  auto ops = static_cast<double>(w.done_ops);
  std::string s;
  char b[512];
  auto add = [&](const char* fmt, auto... xs) {
    std::snprintf(b, sizeof(b), fmt, xs...);
    s += b;
  };
  add(R"({"system":"%s","scenario":"%s","round":%d,"callers":%d,"inflight":%d,)", o.system.c_str(),
      o.scenario.c_str(), o.round, o.callers, o.inflight);
  if (o.scenario == "open")
    add(R"("rate_target":%.0f,"late_skipped":%llu,"sent":%llu,)", o.rate,
        static_cast<unsigned long long>(w.late_skipped),
        static_cast<unsigned long long>(w.sent_measure));
  if (o.scenario == "stream")
    add(R"("stream_n":%ld,)", o.stream_n);
  add(R"("wall_ms":%.1f,"ops":%llu,"unit":"%s","rate":%.1f,"errors":%llu,"order_errors":%llu,)",
      wall_ms, static_cast<unsigned long long>(w.done_ops), unit,
      wall_ms > 0 ? ops * 1000.0 / wall_ms : 0.0, static_cast<unsigned long long>(w.errors),
      static_cast<unsigned long long>(w.order_errors));
  add(R"("lat_us":{"n":%zu,"p50":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f,"max":%.1f},)", w.lat.size(),
      w.lat.pct(50), w.lat.pct(90), w.lat.pct(99), w.lat.pct(99.9), w.lat.pct(100));
  if (o.scenario == "cancel")
    add(R"("ack_us":{"n":%zu,"p50":%.1f,"p99":%.1f},)", w.lat_ack.size(), w.lat_ack.pct(50),
        w.lat_ack.pct(99));
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
    proc(o.watch[i].first, o.watch[i].second, w.cpu0[i], w.cpu1[i], i == 0);
  proc("caller", getpid(), w.self_cpu0, w.self_cpu1, o.watch.empty());
  double busy = w.busy1 - w.busy0;
  add(R"(},"machine_busy_pct":%.1f,"foreign_pct":%.1f,"ok":%s)",
      wall_ms > 0 ? busy * 100.0 / wall_ms : 0.0,
      wall_ms > 0 ? std::max(0.0, (busy - ours) * 100.0 / wall_ms) : 0.0, ok ? "true" : "false");
  if (!note.empty()) {
    for (auto& ch : note)
      if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20)
        ch = '\'';
    s += R"(,"note":")" + note + "\"";
  }
  s += "}";
  return s;
}

} // namespace bench
