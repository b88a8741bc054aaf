// bench_trace_store: what the trace store costs per stored route span, by
// the shape of the trace ids, on a fresh file.
//
//   bench_trace_store --file PATH --spans N [--ids random|counted] [--batch 1024]
//
// Stores N route spans, each the root of a trace of its own (what the
// keeper does with the fake runtime's runs: none of them has a root span
// from the runtime), `--batch` to a save_spans call as the keeper batches
// them, and prints one JSON line: the process's CPU per span, wall time,
// the file's size. Spans are made before the clock starts (as the keeper
// makes them from a route_batch: route_span_queue.cpp).
// `--ids random`: 32 random hex digits, as Genkit runtimes (OpenTelemetry's
// id generator) make them; `counted`: the fake runtime's default, a prefix
// and a counter, so every new trace sorts last. PATH must not exist (the
// tool never deletes files it did not make).

#include "actors/tracing/route_span_queue.hpp"
#include "bench/flags.hpp"
#include "traces/trace_store.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <time.h>

namespace {

using namespace actor_host;

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

// Trace ids of either shape.
class trace_ids {
public:
  explicit trace_ids(bool random) : random_(random), rng_(std::random_device{}()) {
  }
  std::string next() {
    char b[40];
    if (random_)
      std::snprintf(b, sizeof b, "%016llx%016llx", static_cast<unsigned long long>(rng_()),
                    static_cast<unsigned long long>(rng_()));
    else
      std::snprintf(b, sizeof b, "%08x%024llx", 0x1650u, static_cast<unsigned long long>(++seq_));
    return b;
  }

private:
  bool random_;
  std::mt19937_64 rng_;
  std::uint64_t seq_ = 0;
};

// `n` route spans as the keeper makes them from the call path's records.
std::vector<traces::run_span> route_spans(trace_ids& ids, std::size_t n) {
  route_batch batch;
  for (std::size_t i = 0; i < n; ++i) {
    auto id = ids.next();
    batch.add(id, "bench-rt-0", "", "/flow/echo", true, "", "", 1765000000000 + i,
              1765000000001 + i);
  }
  std::vector<traces::run_span> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(batch.span(i));
  return out;
}

std::uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

int store_spans(const std::string& path, long spans, bool random, long batch_size) {
  std::string error;
  auto store = traces::trace_store::open(path, {}, error);
  if (!store) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  trace_ids ids{random};
  auto all = route_spans(ids, static_cast<std::size_t>(spans));
  std::vector<traces::run_span> batch;
  auto c0 = cpu_s();
  auto w0 = wall_s();
  for (std::size_t at = 0; at < all.size(); at += static_cast<std::size_t>(batch_size)) {
    auto end = std::min(all.size(), at + static_cast<std::size_t>(batch_size));
    batch.assign(std::make_move_iterator(all.begin() + static_cast<long>(at)),
                 std::make_move_iterator(all.begin() + static_cast<long>(end)));
    if (auto err = store->save_spans(batch, 1765000000000); !err.empty()) {
      std::fprintf(stderr, "save_spans: %s\n", err.c_str());
      return 1;
    }
  }
  auto cpu = cpu_s() - c0;
  auto wall = wall_s() - w0;
  auto count = store->trace_count();
  store.reset(); // the last checkpoint is part of the file's size
  std::printf("{\"ids\":\"%s\",\"spans\":%ld,\"batch\":%ld,\"cpu_us_per_span\":%.2f,"
              "\"wall_us_per_span\":%.2f,\"traces\":%zu,\"file_mib\":%.1f}\n",
              random ? "random" : "counted", spans, batch_size, cpu * 1e6 / spans,
              wall * 1e6 / spans, count, file_bytes(path) / 1048576.0);
  return count == static_cast<std::size_t>(spans) ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  std::string path, ids = "random";
  long spans = 0, batch = 1024;
  if (!bench::read_flags(argc, argv,
                         {{"--file", &path}, {"--spans", &spans}, {"--ids", &ids}, {"--batch", &batch}}))
    return 2;
  if (path.empty() || spans <= 0 || batch <= 0 || (ids != "random" && ids != "counted")) {
    std::fprintf(stderr, "usage: bench_trace_store --file PATH --spans N [--batch 1024] "
                         "[--ids random|counted]\n");
    return 2;
  }
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::fprintf(stderr, "%s exists: give a path that does not (a fresh store)\n", path.c_str());
    return 2;
  }
  return store_spans(path, spans, ids == "random", batch);
}
