// bench_report: turns the JSON lines bench/run.sh collected into the
// markdown report (medians over rounds, paired ratios, targets).
//
//   bench_report --results results.jsonl --out REPORT.md [--notes ANALYSIS.md]
//
// Line kinds: {"kind":"meta",...} (machine, settings), phase lines from
// bench_load / ts_driver.mjs (no "kind"), {"kind":"memory",...},
// {"kind":"syscalls",...}, {"kind":"scale",...} (bench/run_scale.sh).
#include "bench/report_format.hpp"
#include "bench/report_scale.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace json = boost::json;

namespace {

using namespace bench::report;

struct phase_row {
  std::string system;
  std::string label;
  std::string scenario;
  std::string unit;
  int round = 0;
  bool ok = false;
  double rate = NAN, p50 = NAN, p99 = NAN, p999 = NAN;
  double ack50 = NAN, ack99 = NAN;
  double sut_us = NAN, rt_us = NAN, caller_us = NAN;
  double sut_pct = NAN, rt_pct = NAN, caller_pct = NAN;
  double sut_rss = NAN;
  double foreign = NAN;
  bool caller_in_sut = false;
  std::string note;
};

const std::vector<std::string> system_order = {"ours", "relay", "ts", "tsws", "ours-http", "tools"};

struct memory_row {
  std::string system;
  long runtimes = 0;
  double rss_kb = NAN;
  bool ok = false;
  std::string note;
};

struct syscall_row {
  std::string system;
  std::string label;
  double ops = NAN, syscalls = NAN, ctx = NAN, cpu_ms = NAN;
};

} // namespace

int main(int argc, char** argv) {
  std::string results, out, notes;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--results")
      results = argv[i + 1];
    else if (k == "--out")
      out = argv[i + 1];
    else if (k == "--notes")
      notes = argv[i + 1];
  }
  if (results.empty() || out.empty()) {
    std::fprintf(stderr, "usage: bench_report --results FILE.jsonl --out REPORT.md [--notes FILE]\n");
    return 2;
  }
  std::ifstream in(results);
  if (!in) {
    std::fprintf(stderr, "bench_report: cannot read %s\n", results.c_str());
    return 1;
  }
  json::object meta;
  std::vector<phase_row> phases;
  std::vector<std::string> labels; // first-seen order
  std::vector<memory_row> memory;
  std::vector<syscall_row> sys;
  std::vector<json::object> scale;
  std::string line;
  int bad = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '{')
      continue;
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object()) {
      ++bad;
      continue;
    }
    auto kind = str(at(v, {"kind"}), "phase");
    if (kind == "meta") {
      meta = v.as_object();
    } else if (kind == "memory") {
      scale.push_back(v.as_object()); // idle connections, when run_scale.sh did not measure them
      memory.push_back({str(at(v, {"system"})), static_cast<long>(num(at(v, {"runtimes"}), 0)),
                        num(at(v, {"rss_kb"})), at(v, {"ok"}) && at(v, {"ok"})->is_bool()
                                                  && at(v, {"ok"})->as_bool(),
                        str(at(v, {"note"}))});
    } else if (kind == "scale") {
      scale.push_back(v.as_object());
    } else if (kind == "syscalls") {
      sys.push_back({str(at(v, {"system"})), str(at(v, {"label"})), num(at(v, {"ops"})),
                     num(at(v, {"syscalls"})), num(at(v, {"ctx_switches"})),
                     num(at(v, {"cpu_ms"}))});
    } else if (at(v, {"scenario"})) {
      phase_row r;
      r.system = str(at(v, {"system"}));
      r.scenario = str(at(v, {"scenario"}));
      r.label = label_of(v);
      r.unit = str(at(v, {"unit"}), "ops");
      r.round = static_cast<int>(num(at(v, {"round"}), 0));
      r.ok = at(v, {"ok"}) && at(v, {"ok"})->is_bool() && at(v, {"ok"})->as_bool();
      r.rate = num(at(v, {"rate"}));
      r.p50 = num(at(v, {"lat_us", "p50"}));
      r.p99 = num(at(v, {"lat_us", "p99"}));
      r.p999 = num(at(v, {"lat_us", "p999"}));
      r.ack50 = num(at(v, {"ack_us", "p50"}));
      r.ack99 = num(at(v, {"ack_us", "p99"}));
      r.sut_us = num(at(v, {"procs", "sut", "cpu_us_per_op"}));
      r.rt_us = num(at(v, {"procs", "runtime", "cpu_us_per_op"}));
      r.caller_us = num(at(v, {"procs", "caller", "cpu_us_per_op"}));
      r.sut_pct = num(at(v, {"procs", "sut", "cpu_pct"}));
      r.rt_pct = num(at(v, {"procs", "runtime", "cpu_pct"}));
      r.caller_pct = num(at(v, {"procs", "caller", "cpu_pct"}));
      r.sut_rss = num(at(v, {"procs", "sut", "rss_kb"}));
      r.foreign = num(at(v, {"foreign_pct"}));
      r.caller_in_sut = at(v, {"caller_in_sut"}) != nullptr;
      r.note = str(at(v, {"note"}));
      if (std::find(labels.begin(), labels.end(), r.label) == labels.end())
        labels.push_back(r.label);
      phases.push_back(std::move(r));
    }
  }

  auto rows = [&](const std::string& label, const std::string& system, bool ok_only) {
    std::vector<const phase_row*> v;
    for (auto& p : phases)
      if (p.label == label && p.system == system && (!ok_only || p.ok))
        v.push_back(&p);
    return v;
  };
  auto med = [&](const std::vector<const phase_row*>& v, double phase_row::*m) {
    std::vector<double> xs;
    for (auto* p : v)
      xs.push_back(p->*m);
    return median(xs);
  };
  // Median over rounds of ours/other, both measured in the same round.
  auto paired = [&](const std::string& label, const std::string& a, const std::string& b,
                    double phase_row::*m) {
    std::vector<double> xs;
    for (auto* pa : rows(label, a, true))
      for (auto* pb : rows(label, b, true))
        if (pa->round == pb->round && pb->*m > 0)
          xs.push_back(pa->*m / (pb->*m));
    return median(xs);
  };
  auto systems_present = [&](const std::string& label) {
    std::vector<std::string> s;
    for (auto& sy : system_order)
      if (!rows(label, sy, false).empty())
        s.push_back(sy);
    return s;
  };

  std::ostringstream md;
  auto m = [&](const char* k) { return str(meta.if_contains(k), "?"); };
  md << "# actor-host benchmark report\n\n";
  md << "Generated by `bench/run.sh" << (m("mode") == "smoke" ? " --smoke" : "") << "` on "
     << m("date") << ". Raw data: `" << m("results_name") << "` (one JSON line per phase).\n\n";
  md << "## Machine and settings\n\n";
  md << "| | |\n|---|---|\n";
  md << "| CPU | " << m("cpu_model") << ", " << m("cpus") << " vCPU |\n";
  md << "| memory | " << m("mem_total") << " |\n";
  md << "| OS | " << m("os") << ", kernel " << m("kernel") << " |\n";
  md << "| compiler / build | " << m("compiler") << ", CMake build type " << m("build_type") << " |\n";
  md << "| Node / tools-common | " << m("node") << " / @genkit-ai/tools-common " << m("tools_common")
     << " |\n";
  md << "| fd limit | soft " << m("fd_soft") << ", hard " << m("fd_hard") << " |\n";
  md << "| load average before the run | " << m("loadavg") << " |\n";
  if (auto* pf = meta.if_contains("platform"); pf && pf->is_object() && !pf->as_object().empty()) {
    auto& p = *pf;
    md << "| platform costs (`bench_syscost`) | getppid() " << fmt(num(at(p, {"getppid_ns"})) / 1000, 2)
       << " µs; 100-byte write+read on a UNIX socketpair "
       << fmt(num(at(p, {"socketpair_write_read_ns"})) / 1000, 2)
       << " µs; thread ping-pong (2 wake-ups + 2 context switches) "
       << fmt(num(at(p, {"thread_pingpong_ns"})) / 1000, 1) << " µs |\n";
  }
  md << "| rounds × phase | " << m("rounds") << " rounds; each phase " << m("warmup")
     << " s warm-up + " << m("seconds") << " s measured; systems interleaved per scenario, order "
        "rotated every round |\n";
  md << "| actor-host flags | `" << m("ours_flags") << "` |\n\n";

  md << "### How each system is driven\n\n"
        "* **actor-host** (`ours`): `actor-host --role manager`, called by the C++ load generator "
        "`bench_load` over its front door `ws://…/api/ws` (JSON-RPC: `runAction`, "
        "`sendInputStreamChunk`, `endInputStream`, `cancelAction`; streamed chunks and "
        "`runActionState` come back as notifications). Manager, load generator and fake runtime "
        "are three processes.\n"
        "* **bare relay** (`relay`): `bench_relay`, the same Beast transport as actor-host "
        "(`net::server`, the same WebSocket sessions) but no actors and no JSON beyond locating "
        "the ids (ids are spliced, frames never re-serialised); one I/O thread. Called by the same "
        "`bench_load` with the same frames.\n"
        "* **Genkit TS** (`ts`): `RuntimeManagerV2` from @genkit-ai/tools-common, hosted in a Node "
        "process (`bench/ts_driver.mjs`) and called through its in-process API "
        "(`manager.runAction(…)`, `cancelAction`), as the Genkit CLI and Dev UI server use it; it "
        "has no caller socket. Its CPU figure therefore **includes its callers** (the driver's "
        "async workers), while actor-host's and the relay's do not include `bench_load` (shown "
        "separately as *caller*).\n"
        "* **Genkit TS + WS door** (`tsws`): the same `RuntimeManagerV2` in the same driver "
        "process, plus a thin WebSocket front door (`ts_driver.mjs --front-door`, the `ws` package) "
        "that speaks actor-host's `/api/ws` protocol over the same in-process API; driven by "
        "`bench_load` exactly like actor-host. Not a Genkit product: it isolates what the caller "
        "socket costs, so `ours/TS-ws` compares like with like.\n"
        "* **actor-host (HTTP)** (`ours-http`) and **Genkit tools server (HTTP)** (`tools`): "
        "actor-host's HTTP front door, and the real tools server (`startServer` of "
        "@genkit-ai/tools-common, what `genkit start` serves: express over `RuntimeManagerV2`, "
        "hosted by `bench/tools_server.mjs`), both called by `bench_load --url http://…` with "
        "`POST /api/runAction` (echo) and `POST /api/streamAction` (stream: newline-delimited "
        "chunks); one keep-alive HTTP/1.1 connection per call in flight.\n"
        "* All of them talk to the same fake runtime, `bench_fake_runtime` (C++, one process, "
        "replies assembled from pre-built pieces, chunks produced as the socket drains).\n"
        "* CPU is utime+stime from `/proc/<pid>/stat` over the measured window, divided by the "
        "operations completed in it (calls, chunks, echoes or cancels). *foreign* = machine-wide "
        "busy time minus the watched processes (other tenants), in % of one core.\n\n";

  // ---- targets -----------------------------------------------------------------
  auto find_label = [&](const std::string& prefix) -> std::string {
    for (auto& l : labels)
      if (l.rfind(prefix, 0) == 0)
        return l;
    return {};
  };
  md << "## Targets\n\n";
  md << "Reported as measured (medians over rounds; ratios paired within a round). Never asserted "
        "in tests.\n\n";
  md << "| target | measured | verdict |\n|---|---|---|\n";
  auto verdict_le = [](double x, double limit) {
    if (std::isnan(x))
      return std::string{"not measured"};
    if (x <= limit)
      return std::string{"**met**"};
    return "**missed**: " + fmt_ratio(x / limit) + " the limit";
  };
  auto verdict_ge = [](double x, double goal) {
    if (std::isnan(x))
      return std::string{"not measured"};
    if (x >= goal)
      return std::string{"**met**"};
    return "**missed**: " + fmt(100 * x / goal, 1) + " % of the target";
  };
  auto l64 = find_label("echo 64×1");
  {
    double cpu = paired(l64, "ours", "ts", &phase_row::sut_us);
    // Same comparison with our caller's CPU added (the TS figure includes its callers).
    std::vector<double> xs;
    for (auto* pa : rows(l64, "ours", true))
      for (auto* pb : rows(l64, "ts", true))
        if (pa->round == pb->round && pb->sut_us > 0)
          xs.push_back((pa->sut_us + pa->caller_us) / pb->sut_us);
    double cpu_with_caller = median(xs);
    md << "| manager CPU per routed call ≤ 1/10 of the TS manager's (`" << l64 << "`) | "
       << fmt(med(rows(l64, "ours", true), &phase_row::sut_us)) << " µs vs "
       << fmt(med(rows(l64, "ts", true), &phase_row::sut_us)) << " µs = " << fmt_ratio(cpu)
       << " (with our caller process added: " << fmt_ratio(cpu_with_caller)
       << "; vs the TS manager behind a WS door: "
       << fmt_ratio(paired(l64, "ours", "tsws", &phase_row::sut_us)) << ") | "
       << verdict_le(cpu, 0.1) << " |\n";
    double thr = paired(l64, "ours", "ts", &phase_row::rate);
    md << "| throughput at 64 in flight ≥ 10× the TS manager's | "
       << fmt_int(med(rows(l64, "ours", true), &phase_row::rate)) << " vs "
       << fmt_int(med(rows(l64, "ts", true), &phase_row::rate)) << " calls/s = " << fmt_ratio(thr)
       << " (vs the TS manager behind a WS door: "
       << fmt_ratio(paired(l64, "ours", "tsws", &phase_row::rate)) << ") | " << verdict_ge(thr, 10)
       << " |\n";
    double rel = paired(l64, "ours", "relay", &phase_row::rate);
    md << "| routed throughput ≥ 0.7× the bare relay (`" << l64 << "`) | "
       << fmt_int(med(rows(l64, "ours", true), &phase_row::rate)) << " vs "
       << fmt_int(med(rows(l64, "relay", true), &phase_row::rate)) << " calls/s = "
       << fmt_ratio(rel) << " | " << verdict_ge(rel, 0.7) << " |\n";
  }
  {
    double r = paired(l64, "ours-http", "tools", &phase_row::rate);
    md << "| over HTTP: throughput ≥ 4× the Genkit tools server's (`" << l64 << "`) | "
       << fmt_int(med(rows(l64, "ours-http", true), &phase_row::rate)) << " vs "
       << fmt_int(med(rows(l64, "tools", true), &phase_row::rate)) << " calls/s = " << fmt_ratio(r)
       << " | " << verdict_ge(r, 4) << " |\n";
    double c = paired(l64, "ours-http", "tools", &phase_row::sut_us);
    md << "| over HTTP: manager CPU per call ≤ 0.2× the tools server's | "
       << fmt(med(rows(l64, "ours-http", true), &phase_row::sut_us)) << " µs vs "
       << fmt(med(rows(l64, "tools", true), &phase_row::sut_us)) << " µs = " << fmt_ratio(c)
       << " | " << verdict_le(c, 0.2) << " |\n";
  }
  {
    double best = NAN;
    std::string best_label;
    for (auto& l : labels)
      if (l.rfind("stream", 0) == 0) {
        auto x = med(rows(l, "ours", true), &phase_row::rate);
        if (!std::isnan(x) && (std::isnan(best) || x > best)) {
          best = x;
          best_label = l;
        }
      }
    md << "| ≥ 1,000,000 stream chunks/s through the manager | " << fmt_int(best)
       << " chunks/s (best: `" << best_label << "`) | " << verdict_ge(best, 1e6) << " |\n";
  }
  // per-connection memory
  auto mem_of = [&](const std::string& s, long n) {
    std::vector<double> xs;
    for (auto& r : memory)
      if (r.system == s && r.runtimes == n && r.ok)
        xs.push_back(r.rss_kb);
    return median(xs);
  };
  auto per_conn = [&](const std::string& s) -> std::pair<double, long> {
    long nmax = 0;
    for (auto& r : memory)
      if (r.system == s && r.ok && r.runtimes > nmax)
        nmax = r.runtimes;
    if (nmax <= 1)
      return {NAN, 0};
    return {(mem_of(s, nmax) - mem_of(s, 1)) / static_cast<double>(nmax - 1), nmax};
  };
  {
    auto [kib, n] = per_conn("ours");
    md << "| ≤ 16 KiB RSS per idle runtime connection | " << fmt(kib, 1) << " KiB (from 1 to "
       << fmt_int(static_cast<double>(n)) << " runtimes) | " << verdict_le(kib, 16) << " |\n\n";
  }

  // ---- per scenario -----------------------------------------------------------------
  md << "## Results per scenario\n\n";
  md << "Medians over the rounds that completed without errors (*ok* = rounds without errors / "
        "rounds run). Latency: per call for echo/open; time to first chunk for stream; input "
        "chunk → echoed chunk for bidi; cancelAction sent → run ended with the cancellation "
        "error for cancel. With several streams in flight, time to first chunk includes waiting "
        "behind the other streams' chunks.\n\n";
  for (auto& l : labels) {
    auto present = systems_present(l);
    std::string unit;
    for (auto& p : phases)
      if (p.label == l) {
        unit = p.unit;
        break;
      }
    md << "### " << l << "\n\n";
    md << "| system | ok | " << unit << "/s median (min–max) | p50 | p99 | p99.9 | CPU µs/" << singular(unit)
       << " manager | runtime | caller | manager RSS MiB | foreign CPU % |\n";
    md << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (auto& s : present) {
      auto all = rows(l, s, false);
      auto ok = rows(l, s, true);
      double lo = NAN, hi = NAN;
      for (auto* p : ok) {
        lo = std::isnan(lo) ? p->rate : std::min(lo, p->rate);
        hi = std::isnan(hi) ? p->rate : std::max(hi, p->rate);
      }
      md << "| " << system_name(s) << " | " << ok.size() << "/" << all.size() << " | "
         << fmt_int(med(ok, &phase_row::rate)) << " (" << fmt_int(lo) << "–" << fmt_int(hi) << ") | "
         << fmt_lat(med(ok, &phase_row::p50)) << " | " << fmt_lat(med(ok, &phase_row::p99)) << " | "
         << fmt_lat(med(ok, &phase_row::p999)) << " | " << fmt(med(ok, &phase_row::sut_us), 2)
         << " | " << fmt(med(ok, &phase_row::rt_us), 2) << " | "
         << (s == "ts" ? std::string{"(in manager)"} : fmt(med(ok, &phase_row::caller_us), 2))
         << " | " << fmt(med(ok, &phase_row::sut_rss) / 1024, 1) << " | "
         << fmt(med(ok, &phase_row::foreign), 0) << " |\n";
    }
    md << "\n";
    std::vector<std::string> ratios;
    auto has = [&](const std::string& s) {
      return std::find(present.begin(), present.end(), s) != present.end();
    };
    // Each system against its counterpart, in this order: the label, then
    // the paired ratios of rate, manager CPU per op and p50.
    struct counterpart {
      const char* system;
      const char* other;
      const char* label;
    };
    for (const auto& [a, b, label] : {counterpart{"ours", "ts", "ours/TS"},
                                      counterpart{"ours", "tsws", "ours/TS-ws"},
                                      counterpart{"ours-http", "tools", "ours-http/tools"},
                                      counterpart{"ours", "relay", "ours/relay"}})
      if (has(a) && has(b))
        ratios.push_back(std::string{label} + ": rate " + fmt_ratio(paired(l, a, b, &phase_row::rate))
                         + ", manager CPU per op " + fmt_ratio(paired(l, a, b, &phase_row::sut_us))
                         + ", p50 " + fmt_ratio(paired(l, a, b, &phase_row::p50)));
    if (l.rfind("cancel", 0) == 0) {
      std::string acks = "cancelAction acknowledged (p50/p99):";
      for (auto& s : present) {
        auto ok = rows(l, s, true);
        acks += " " + system_name(s) + " " + fmt_lat(med(ok, &phase_row::ack50)) + "/"
                + fmt_lat(med(ok, &phase_row::ack99)) + ";";
      }
      ratios.push_back(acks);
    }
    for (auto& r : ratios)
      md << "* " << r << "\n";
    std::vector<std::string> notes_seen;
    for (auto& p : phases)
      if (p.label == l && !p.ok && !p.note.empty()
          && std::find(notes_seen.begin(), notes_seen.end(), p.note) == notes_seen.end()) {
        notes_seen.push_back(p.note);
        md << "* failed round " << p.round << " (" << system_name(p.system) << "): " << p.note << "\n";
      }
    md << "\n";
  }

  // ---- memory ---------------------------------------------------------------------
  if (!memory.empty()) {
    md << "## Memory at scale\n\n";
    md << "VmRSS of a fresh manager process once N idle fake runtimes (one WebSocket each, all in "
          "one `bench_fake_runtime` process) have registered, read 1 s later (the TS manager after "
          "two `gc()` calls). Per connection = (RSS(N) − RSS(1)) / (N − 1).\n\n";
    std::vector<long> ns;
    for (auto& r : memory)
      if (std::find(ns.begin(), ns.end(), r.runtimes) == ns.end())
        ns.push_back(r.runtimes);
    std::sort(ns.begin(), ns.end());
    md << "| system |";
    for (auto n : ns)
      md << " " << fmt_int(static_cast<double>(n)) << (n == 1 ? " runtime |" : " runtimes |");
    md << " per connection |\n|---|";
    for (std::size_t i = 0; i < ns.size(); ++i)
      md << "---|";
    md << "---|\n";
    for (auto& s : system_order) {
      bool any = false;
      for (auto& r : memory)
        any |= r.system == s;
      if (!any)
        continue;
      md << "| " << system_name(s) << " |";
      for (auto n : ns) {
        auto x = mem_of(s, n);
        md << " " << (std::isnan(x) ? std::string{"failed"} : fmt(x / 1024, 1) + " MiB") << " |";
      }
      auto [kib, nmax] = per_conn(s);
      md << " " << fmt(kib, 1) << " KiB |\n";
    }
    md << "\n";
    for (auto& r : memory)
      if (!r.ok && !r.note.empty())
        md << "* " << system_name(r.system) << " with " << r.runtimes << " runtimes: " << r.note << "\n";
    md << "\n";
  }

  write_scale_section(md, scale);

  // ---- syscalls ---------------------------------------------------------------------
  if (!sys.empty()) {
    md << "## Kernel crossings per operation\n\n";
    md << "`perf stat -e raw_syscalls:sys_enter,context-switches` attached to the manager process "
          "for one extra phase of each system after the rounds (so it does not disturb them).\n\n";
    md << "| system | phase | ops | syscalls/op | context switches/op | CPU µs/op |\n";
    md << "|---|---|---|---|---|---|\n";
    for (auto& r : sys)
      md << "| " << system_name(r.system) << " | " << r.label << " | " << fmt_int(r.ops) << " | "
         << fmt(r.syscalls / r.ops, 2) << " | " << fmt(r.ctx / r.ops, 2) << " | "
         << fmt(r.cpu_ms * 1000 / r.ops, 1) << " |\n";
    md << "\n";
  }

  if (!notes.empty()) {
    std::ifstream nf(notes);
    if (nf) {
      md << nf.rdbuf();
      md << "\n";
    }
  }
  if (bad)
    md << "\n(" << bad << " unparsable result lines ignored.)\n";

  std::ofstream of(out);
  of << md.str();
  if (!of) {
    std::fprintf(stderr, "bench_report: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(stderr, "bench_report: wrote %s (%zu phases, %zu memory points)\n", out.c_str(),
               phases.size(), memory.size());
  return 0;
}
