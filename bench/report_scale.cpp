#include "bench/report_scale.hpp"

#include "bench/report_format.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

namespace bench::report {

namespace {

const json::object* last_of(const std::vector<json::object>& lines, const std::string& test) {
  const json::object* r = nullptr;
  for (auto& l : lines)
    if (str(l.if_contains("test")) == test)
      r = &l;
  return r;
}

bool ok_of(const json::object& o) {
  auto* v = o.if_contains("ok");
  return v && v->is_bool() && v->as_bool();
}

// Walks nested objects from `o` (report_format's `at` takes a value).
const json::value* path_of(const json::object& o, std::initializer_list<const char*> path) {
  const json::object* cur = &o;
  const json::value* v = nullptr;
  for (auto* k : path) {
    if (!cur)
      return nullptr;
    v = cur->if_contains(k);
    if (!v)
      return nullptr;
    cur = v->if_object();
  }
  return v;
}

double field(const json::object& o, std::initializer_list<const char*> path) {
  return num(path_of(o, path));
}

std::string verdict(bool ran, bool met) {
  return !ran ? "not run" : met ? "**met**" : "**missed**";
}

std::string mib(double kb) {
  return fmt(kb / 1024, 1) + " MiB";
}

} // namespace

void write_scale_section(std::ostream& md, const std::vector<json::object>& lines) {
  bool any_scale = false, any_idle = false;
  for (auto& l : lines) {
    any_scale |= str(l.if_contains("kind")) == "scale";
    any_idle |= str(l.if_contains("test")) == "idle";
  }
  if (!any_scale)
    return;
  md << "## Scale (issue 13)\n\n";
  md << "`bench/run_scale.sh`, each test in fresh processes: **in flight**: callers on `/api/ws` "
        "send every call at once to one fake runtime that holds the replies (`bench_fake_runtime "
        "--hold`) until all are pending in the manager; bytes per pending request = (manager RSS "
        "then − RSS before) / calls; then the replies are released and every call must complete. "
        "**spread**: N fake runtimes connected, an open loop at the target rate with the "
        "`runtimeId` round robin over them. **idle**: RSS with 1 and N idle runtimes; per "
        "connection = (RSS(N) − RSS(1)) / (N − 1).\n\n";
  md << "| target | measured | verdict |\n|---|---|---|\n";
  if (auto* o = last_of(lines, "inflight")) {
    double calls = field(*o, {"calls"}), done = field(*o, {"load", "ops"});
    double errors = field(*o, {"load", "errors"}), wall = field(*o, {"load", "wall_ms"});
    double bpp = field(*o, {"bytes_per_pending"});
    md << "| " << fmt_int(calls) << " requests in flight: completes, no error; ≤ 2 KiB per "
       << "pending request | " << fmt_int(done) << " of " << fmt_int(calls) << " answered, "
       << fmt_int(errors) << " errors, "
       << (done == calls ? fmt(wall / 1000, 1) + " s from the first send to the last answer"
                         : "in the bench's " + fmt(wall / 1000, 0) + " s window")
       << "; manager RSS " << mib(field(*o, {"rss_before_kb"})) << " → "
       << mib(field(*o, {"rss_held_kb"})) << " with all pending: **" << fmt_int(bpp)
       << " bytes per pending request**";
    if (auto n = str(o->if_contains("note")); !n.empty())
      md << " (" << n << ")";
    md << " | " << verdict(true, ok_of(*o) && done == calls && errors == 0 && bpp >= 0 && bpp <= 2048)
       << " |\n";
  }
  if (auto* o = last_of(lines, "spread")) {
    double n = field(*o, {"runtimes"}), rss = field(*o, {"rss_kb"});
    md << "| " << fmt_int(n) << " runtimes connected, " << fmt_int(field(*o, {"rate_target"}))
       << " calls/s spread over them: p99 reported; RSS ≤ 200 MiB | ";
    if (path_of(*o, {"load", "lat_us"})) {
      md << fmt_int(field(*o, {"load", "ops"})) << " calls at " << fmt_int(field(*o, {"load", "rate"}))
         << "/s, " << fmt_int(field(*o, {"load", "errors"})) << " errors; p50 "
         << fmt_lat(field(*o, {"load", "lat_us", "p50"})) << ", **p99 "
         << fmt_lat(field(*o, {"load", "lat_us", "p99"})) << "**, p99.9 "
         << fmt_lat(field(*o, {"load", "lat_us", "p999"})) << "; manager RSS "
         << mib(field(*o, {"rss_idle_kb"})) << " connected, **" << mib(rss)
         << "** after the calls; manager CPU " << fmt(field(*o, {"load", "procs", "sut", "cpu_us_per_op"}), 1)
         << " µs per call; all runtimes registered in " << fmt_int(field(*o, {"connect_s"})) << " s";
    }
    if (auto note = str(o->if_contains("note")); !note.empty())
      md << " (" << note << ")";
    md << " | " << verdict(true, ok_of(*o) && rss <= 200 * 1024) << " |\n";
  }
  // idle: system -> runtimes -> rss
  std::map<std::string, std::map<long, double>> idle;
  std::map<std::string, std::string> idle_notes;
  // Idle connections: run_scale.sh's own lines, else the memory pass of
  // bench/run.sh ({"kind":"memory"}, the same measurement).
  for (auto& l : lines)
    if (any_idle ? str(l.if_contains("test")) == "idle" : str(l.if_contains("kind")) == "memory") {
      auto sys = str(l.if_contains("system"));
      auto n = static_cast<long>(field(l, {"runtimes"}));
      idle[sys][n] = ok_of(l) ? field(l, {"rss_kb"}) : NAN;
      if (!ok_of(l))
        idle_notes[sys] += " " + fmt_int(static_cast<double>(n)) + ": " + str(l.if_contains("note")) + ";";
    }
  auto per_conn = [&](const std::string& sys, long n) {
    auto& m = idle[sys];
    if (!m.count(1) || !m.count(n) || n <= 1)
      return static_cast<double>(NAN);
    return (m[n] - m[1]) / static_cast<double>(n - 1);
  };
  auto nmax = [&](const std::string& sys) {
    long best = 0;
    for (auto& [n, rss] : idle[sys])
      if (!std::isnan(rss) && n > best)
        best = n;
    return best;
  };
  if (idle.count("ours")) {
    long n = nmax("ours");
    double kib = per_conn("ours", n);
    md << "| idle runtime connections (1 to " << fmt_int(static_cast<double>(n))
       << "): ≤ 6 KiB each, aim for 4 | **" << fmt(kib, 2) << " KiB** per connection";
    for (auto& s : {"relay", "ts"})
      if (idle.count(s) && nmax(s) > 1)
        md << "; " << system_name(s) << " " << fmt(per_conn(s, nmax(s)), 2) << " KiB (1 to "
           << fmt_int(static_cast<double>(nmax(s))) << ")";
    md << " | " << verdict(n > 1, kib <= 6) << " |\n";
  }
  md << "\n";
  if (!idle.empty()) {
    std::vector<long> ns;
    for (auto& [sys, m] : idle)
      for (auto& [n, rss] : m)
        if (std::find(ns.begin(), ns.end(), n) == ns.end())
          ns.push_back(n);
    std::sort(ns.begin(), ns.end());
    md << "| system (idle) |";
    for (auto n : ns)
      md << " " << fmt_int(static_cast<double>(n)) << (n == 1 ? " runtime |" : " runtimes |");
    md << " per connection, 1 to 1,000 | per connection, 1 to the most |\n|---|";
    for (std::size_t i = 0; i < ns.size() + 2; ++i)
      md << "---|";
    md << "\n";
    for (auto& s : {"ours", "relay", "ts"}) {
      if (!idle.count(s))
        continue;
      md << "| " << system_name(s) << " |";
      for (auto n : ns) {
        auto it = idle[s].find(n);
        md << " "
           << (it == idle[s].end() ? std::string{"–"}
               : std::isnan(it->second) ? std::string{"failed"}
                                        : mib(it->second))
           << " |";
      }
      md << " " << fmt(per_conn(s, 1000), 2) << " KiB | " << fmt(per_conn(s, nmax(s)), 2)
         << " KiB |\n";
    }
    md << "\n";
    for (auto& [s, note] : idle_notes)
      md << "* " << system_name(s) << " failed at" << note << "\n";
    md << "\n";
  }
}

} // namespace bench::report
