// bench_trace_store: what the trace store costs per stored route span, by
// the shape of the trace ids, on a fresh file; and how long opening a store
// of the layout before takes (its migration).
//
//   bench_trace_store --file PATH --spans N [--ids random|counted] [--batch 1024]
//   bench_trace_store --file PATH --layout1-mib M [--ids random|counted] [--json-spans 2]
//                     [--open 0]
//
// The first stores N route spans, each the root of a trace of its own (what
// the keeper does with the fake runtime's runs: none of them has a root
// span from the runtime), `--batch` to a save_spans call as the keeper
// batches them, and prints one JSON line: the process's CPU per span, wall
// time, the file's size. Spans are made before the clock starts (as the
// keeper makes them from a route_batch: route_span_queue.cpp).
// `--ids random`: 32 random hex digits, as Genkit runtimes (OpenTelemetry's
// id generator) make them; `counted`: the fake runtime's default, a prefix
// and a counter, so every new trace sorts last.
//
// The second makes a layout 1 store (traces/detail/store_layout.hpp) of
// about M MiB: per trace, one packed route span and `--json-spans` spans as
// JSON (as an exporting runtime posts them), traces inserted in id order as
// they came; then times trace_store::open, which migrates it, and checks
// that every trace and span is still there (`--open 0`: makes the file and
// stops, for a migration timed by other means). PATH must not exist (the tool
// never deletes files it did not make).

#include "actors/tracing/route_span_queue.hpp"
#include "bench/flags.hpp"
#include "traces/detail/sqlite_statement.hpp"
#include "traces/detail/store_layout.hpp"
#include "traces/span_record.hpp"
#include "traces/trace_store.hpp"

#include <sqlite3.h>

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

// A layout 1 file as a manager before layout 2 wrote it: the rows those
// versions' statements made (route spans packed, documents' spans as JSON).
int make_layout_1(const std::string& path, long mib, bool random, long json_spans,
                  std::int64_t& traces_made, std::int64_t& spans_made) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr)
      != SQLITE_OK) {
    std::fprintf(stderr, "cannot make %s\n", path.c_str());
    return 1;
  }
  using traces::detail::exec;
  using traces::detail::statement;
  // Made in memory as far as it can be (a bench input, not a store in use).
  if (!exec(db, traces::detail::layout_1_sql) || !exec(db, "PRAGMA cache_size=-1048576")) {
    std::fprintf(stderr, "layout 1: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  {
    statement put_trace{db, "INSERT INTO traces(trace_id, display_name, start_time, end_time, "
                            "has_root, updated_ms, bytes) VALUES(?,?,?,?,1,?,?)"};
    statement put_span{db, "INSERT INTO spans(trace_id, span_id, ended, json) VALUES(?,?,1,?)"};
    statement size{db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size"};
    trace_ids ids{random};
    std::int64_t target = static_cast<std::int64_t>(mib) << 20;
    while (true) {
      exec(db, "BEGIN");
      for (auto& s : route_spans(ids, 10000)) {
        auto root = s;
        root.span_id = s.trace_id.substr(0, 16);
        root.kind = "action";
        root.action_type = "flow";
        root.name = "echo";
        root.input = R"({"text":"hello from the bench"})";
        root.output = root.input;
        s.parent_span_id = root.span_id;
        std::int64_t bytes = static_cast<std::int64_t>(traces::span_json_size(s));
        put_span.bind(1, s.trace_id).bind(2, s.span_id).bind(3, traces::pack_run_span(s));
        bool ok = put_span.step() == SQLITE_DONE;
        put_span.reset();
        for (long j = 0; ok && j < json_spans; ++j) {
          auto span = root;
          if (j > 0) {
            // Another id in the trace ('x' is no hex digit: no clash).
            span.span_id = "x" + std::to_string(j) + s.span_id.substr(2);
            span.parent_span_id = root.span_id;
          }
          auto json = traces::span_json(span);
          bytes += static_cast<std::int64_t>(json.size());
          put_span.bind(1, s.trace_id).bind(2, span.span_id).bind(3, json);
          ok = put_span.step() == SQLITE_DONE;
          put_span.reset();
        }
        ++spans_made;
        spans_made += json_spans;
        put_trace.bind(1, s.trace_id).bind(2, root.name).bind(3, std::to_string(root.start_ms))
          .bind(4, std::to_string(root.end_ms)).bind(5, root.end_ms).bind(6, bytes);
        ok = ok && put_trace.step() == SQLITE_DONE;
        put_trace.reset();
        if (!ok) {
          std::fprintf(stderr, "layout 1: %s\n", sqlite3_errmsg(db));
          return 1;
        }
        ++traces_made;
      }
      exec(db, "COMMIT");
      size.step();
      auto now = size.int64(0);
      size.reset();
      if (now >= target)
        break;
    }
  }
  sqlite3_close_v2(db);
  return 0;
}

int migrate(const std::string& path, long mib, bool random, long json_spans, bool open) {
  std::int64_t traces_made = 0, spans_made = 0;
  auto w0 = wall_s();
  if (make_layout_1(path, mib, random, json_spans, traces_made, spans_made) != 0)
    return 1;
  auto made_s = wall_s() - w0;
  if (!open) {
    std::printf("{\"ids\":\"%s\",\"layout1_mib\":%.1f,\"traces\":%lld,\"spans\":%lld}\n",
                random ? "random" : "counted", file_bytes(path) / 1048576.0,
                static_cast<long long>(traces_made), static_cast<long long>(spans_made));
    return 0;
  }
  auto before = file_bytes(path);
  std::string error;
  auto c0 = cpu_s();
  w0 = wall_s();
  auto store = traces::trace_store::open(path, {}, error, [](const std::string& text) {
    std::fprintf(stderr, "note: %s\n", text.c_str());
  });
  auto wall = wall_s() - w0;
  auto cpu = cpu_s() - c0;
  if (!store) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  auto traces = store->trace_count();
  store.reset();
  // Every span carried over, counted on a connection of its own.
  std::int64_t spans = -1;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    traces::detail::statement q{db, "SELECT COUNT(*) FROM spans"};
    if (q && q.step() == SQLITE_ROW)
      spans = q.int64(0);
  }
  sqlite3_close_v2(db);
  std::printf("{\"ids\":\"%s\",\"layout1_mib\":%.1f,\"traces\":%lld,\"spans\":%lld,"
              "\"made_s\":%.1f,\"migrate_wall_s\":%.2f,\"migrate_cpu_s\":%.2f,"
              "\"after_mib\":%.1f,\"traces_after\":%zu,\"spans_after\":%lld}\n",
              random ? "random" : "counted", before / 1048576.0,
              static_cast<long long>(traces_made), static_cast<long long>(spans_made), made_s,
              wall, cpu, file_bytes(path) / 1048576.0, traces, static_cast<long long>(spans));
  return traces == static_cast<std::size_t>(traces_made) && spans == spans_made ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  std::string path, ids = "random";
  long spans = 0, batch = 1024, layout1_mib = 0, json_spans = 2, open = 1;
  if (!bench::read_flags(argc, argv,
                         {{"--file", &path},
                          {"--spans", &spans},
                          {"--ids", &ids},
                          {"--batch", &batch},
                          {"--layout1-mib", &layout1_mib},
                          {"--json-spans", &json_spans},
                          {"--open", &open}}))
    return 2;
  if (path.empty() || (spans <= 0) == (layout1_mib <= 0) || batch <= 0 || json_spans < 0
      || (ids != "random" && ids != "counted")) {
    std::fprintf(stderr,
                 "usage: bench_trace_store --file PATH (--spans N [--batch 1024] | "
                 "--layout1-mib M [--json-spans 2]) [--ids random|counted]\n");
    return 2;
  }
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::fprintf(stderr, "%s exists: give a path that does not (a fresh store)\n", path.c_str());
    return 2;
  }
  return spans > 0 ? store_spans(path, spans, ids == "random", batch)
                   : migrate(path, layout1_mib, ids == "random", json_spans, open != 0);
}
