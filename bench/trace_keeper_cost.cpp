// bench_trace_keeper: what the trace keeper's thread spends per route span,
// the whole of its path (the batch taken in, the wait list, the rows
// written), on a fresh store file, without the rest of a manager.
//
//   bench_trace_keeper --file PATH [--spans 200000] [--ids counted|random]
//                      [--max-bytes N] [--prune-every SPANS]
//
// Sends the keeper (spawned detached, as the manager spawns it) route
// batches of route_span_queue::batch_max records as the call path fills
// them, made before the clock starts, each span its trace's root (the fake
// runtime's runs: no root span comes from the runtime, so every span waits
// and is pushed out of the full wait list to be stored). Prints one JSON
// line: the keeper thread's CPU per span taken (the busiest thread of the
// process over the run; the last max_route_spans_waiting spans are still
// waiting at the end, counted as taken), the process's, and the traces the
// file holds after. PATH must not exist.
//
// A full store: --max-bytes N makes the store's size limit N (default: the
// retention default, 256 MiB, which 200,000 route spans do not reach), and
// --prune-every S sends the keeper its minute prune after every S spans
// (0: only the one it makes at start), as a stand-in for the minute that a
// run of a few seconds never reaches (at 40,000 runs/s a minute is 2.4M
// spans). The line also says the store's size at the end (its stored
// bytes, as retention counts them): how far past its limit it went since
// its last prune.
//
// Runs under `valgrind --tool=callgrind` too (instruction counts where the
// VM has no hardware counters): --spans 30000 is enough.

#include "actors/tracing/trace_keeper.hpp"
#include "bench/flags.hpp"
#include "obs/metrics.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>
#include <unistd.h>

namespace {

using namespace actor_host;

double cpu_s(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU seconds (user + system) of each thread of this process, by tid.
std::map<long, double> thread_cpu() {
  std::map<long, double> out;
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (auto& e : std::filesystem::directory_iterator{"/proc/self/task"}) {
    std::ifstream f{e.path() / "stat"};
    std::string line;
    std::getline(f, line);
    // Fields after the name (which may hold spaces) from ") ": state is 3rd.
    auto at = line.rfind(") ");
    if (at == std::string::npos)
      continue;
    std::istringstream rest{line.substr(at + 2)};
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14)
        utime = std::stod(field);
      if (i == 15)
        stime = std::stod(field);
    }
    out[std::stol(e.path().filename().string())] = (utime + stime) / tick;
  }
  return out;
}

std::string trace_id(bool random, std::mt19937_64& rng, std::uint64_t seq) {
  char b[40];
  if (random)
    std::snprintf(b, sizeof b, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
  else
    std::snprintf(b, sizeof b, "%08x%024llx", 0x1650u, static_cast<unsigned long long>(seq));
  return b;
}

} // namespace

int main(int argc, char** argv) {
  std::string path, ids = "counted";
  long spans = 200000, max_bytes = -1, prune_every = 0;
  if (!bench::read_flags(argc, argv,
                         {{"--file", &path}, {"--spans", &spans}, {"--ids", &ids},
                          {"--max-bytes", &max_bytes}, {"--prune-every", &prune_every}}))
    return 2;
  if (path.empty() || spans <= 0 || (ids != "random" && ids != "counted") || max_bytes == 0
      || prune_every < 0) {
    std::fprintf(stderr, "usage: bench_trace_keeper --file PATH [--spans N] "
                         "[--ids counted|random] [--max-bytes N] [--prune-every SPANS]\n");
    return 2;
  }
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::fprintf(stderr, "%s exists: give a path that does not (a fresh store)\n", path.c_str());
    return 2;
  }
  const bool random = ids == "random";
  std::vector<route_batch> batches;
  {
    std::mt19937_64 rng{std::random_device{}()};
    route_batch b;
    for (long i = 0; i < spans; ++i) {
      b.add(trace_id(random, rng, static_cast<std::uint64_t>(i + 1)), "bench-rt-0", "",
            "/flow/echo", true, "", "", 1765000000000 + i, 1765000000001 + i);
      if (b.size() == route_span_queue::batch_max || i + 1 == spans)
        batches.push_back(std::exchange(b, {}));
    }
  }
  traces::retention kept;
  if (max_bytes > 0)
    kept.max_bytes = static_cast<std::uint64_t>(max_bytes);
  std::string error;
  std::shared_ptr<traces::trace_store> store = traces::trace_store::open(path, kept, error);
  if (!store) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  double keeper_s = 0, process_s = 0;
  {
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    auto keeper = sys.spawn<caf::detached>(trace_keeper, std::move(store), caf::actor{});
    caf::scoped_actor self{sys};
    // The keeper's first message (its prune) is handled before the clock starts.
    self->request(keeper, caf::infinite, trace_get_atom_v, std::string{"-"})
      .receive([](bool, std::string&) {}, [](caf::error&) {});
    auto before = thread_cpu();
    auto p0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
    long sent = 0, since_prune = 0;
    for (auto& b : batches) {
      obs::global().route_spans_queued.fetch_add(static_cast<std::int64_t>(b.size()));
      sent += static_cast<long>(b.size());
      since_prune += static_cast<long>(b.size());
      self->send(keeper, route_spans_atom_v, std::move(b));
      if (prune_every > 0 && since_prune >= prune_every) {
        since_prune = 0;
        self->send(keeper, trace_prune_atom_v);
      }
    }
    // Answered once every batch before it is taken (one mailbox, in order).
    self->request(keeper, caf::infinite, trace_get_atom_v, std::string{"-"})
      .receive([](bool, std::string&) {}, [](caf::error&) {});
    process_s = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - p0;
    for (auto& [tid, s] : thread_cpu())
      keeper_s = std::max(keeper_s, s - before[tid]);
    self->send_exit(keeper, caf::exit_reason::user_shutdown);
  }
  store = traces::trace_store::open(path, kept, error);
  auto traces = store ? store->trace_count() : 0;
  auto bytes = store ? store->stored_bytes() : 0;
  std::printf("{\"bench\":\"trace_keeper\",\"ids\":\"%s\",\"spans\":%ld,"
              "\"max_bytes\":%llu,\"prune_every\":%ld,"
              "\"keeper_cpu_us_per_span\":%.2f,\"process_cpu_us_per_span\":%.2f,"
              "\"traces\":%zu,\"stored_bytes\":%llu}\n",
              ids.c_str(), spans, static_cast<unsigned long long>(kept.max_bytes), prune_every,
              keeper_s * 1e6 / spans, process_s * 1e6 / spans, traces,
              static_cast<unsigned long long>(bytes));
  return 0;
}
