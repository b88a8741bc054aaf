#define CAF_SUITE trace_store_retention

#include "test_support.hpp"
#include "trace_test_spans.hpp"

#include "traces/detail/sqlite_statement.hpp"
#include "traces/run_span.hpp"
#include "traces/trace_store.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <random>
#include <unistd.h>

// The store's size limit kept as it writes (trace_retention.cpp): a running
// size that each write transaction changes, and the oldest traces dropped
// inside the transaction that pushed the store over its limit.

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;
using traces::detail::exec;
using traces::detail::statement;

namespace {

std::string counted_id(std::uint64_t n) {
  char b[40];
  std::snprintf(b, sizeof b, "%08x%024llx", 0xabcdu, static_cast<unsigned long long>(n));
  return b;
}

/// A document of one span as Genkit's exporter sends it, its name `name`.
std::string doc(const std::string& trace, const std::string& span_id, const std::string& parent,
                const std::string& name, std::int64_t end = 1700000000100) {
  std::string s = R"({"traceId":")" + trace + R"(","displayName":")" + name
                  + R"(","spans":{")" + span_id + R"(":{"spanId":")" + span_id
                  + R"(","traceId":")" + trace + "\"";
  if (!parent.empty())
    s += R"(,"parentSpanId":")" + parent + "\"";
  s += R"(,"startTime":1700000000000,"endTime":)" + std::to_string(end)
       + R"(,"attributes":{"genkit:name":")" + name + R"("},"displayName":")" + name
       + R"(","instrumentationLibrary":{"name":"genkit-tracer","version":"v1"},)"
         R"("spanKind":"INTERNAL"}}})";
  return s;
}

/// Route spans of new traces n..n+count-1, each its trace's ended root.
std::vector<traces::run_span> roots(std::uint64_t n, std::size_t count) {
  std::vector<traces::run_span> out;
  for (std::size_t i = 0; i < count; ++i)
    out.push_back(test_route_span(counted_id(n + i), "00000000000000" + std::to_string(10 + i % 80),
                                  ""));
  return out;
}

/// What one route span of roots() keeps, as retention counts it.
std::uint64_t one_root_bytes() {
  std::string error;
  auto s = traces::trace_store::open(":memory:", {}, error);
  s->save_spans(roots(1, 1), 1);
  return s->stored_bytes();
}

/// An in-memory store that keeps at most `max_bytes` (no age limit).
std::unique_ptr<traces::trace_store> store_of_size(std::uint64_t max_bytes) {
  traces::retention r;
  r.max_age = 0ms;
  r.max_bytes = max_bytes;
  std::string error;
  auto store = traces::trace_store::open(":memory:", r, error);
  CAF_REQUIRE(store != nullptr);
  return store;
}

struct temp_file {
  std::string path = (std::filesystem::temp_directory_path()
                      / ("actor-host-retention-" + std::to_string(::getpid()) + ".sqlite"))
                       .string();
  temp_file() {
    remove();
  }
  ~temp_file() {
    remove();
  }
  void remove() {
    for (auto suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path + suffix);
  }
};

} // namespace

// Under sustained writes the store stays within its limit and one batch
// (the minute prune let it grow by a minute of writes); the newest stay.
CAF_TEST(the store never holds more than its limit and one batch) {
  const auto one = one_root_bytes();
  constexpr std::size_t batch = 100;
  const std::uint64_t max_bytes = one * 250 + one / 2; // 2.5 batches
  auto store = store_of_size(max_bytes);
  std::uint64_t dropped = 0;
  for (std::uint64_t b = 0; b < 40; ++b) {
    CAF_REQUIRE_EQUAL(store->save_spans(roots(b * batch, batch), 1000 + b), "");
    auto bytes = store->stored_bytes();
    CAF_CHECK_LESS_OR_EQUAL(bytes, max_bytes);
    CAF_CHECK_EQUAL(store->counted_bytes(), bytes);
    dropped += store->take_retention_counts().by_size;
  }
  // 4000 written, 250 fit: the rest were dropped, the oldest first.
  CAF_CHECK_EQUAL(store->trace_count(), 250u);
  CAF_CHECK_EQUAL(dropped, 4000u - 250u);
  CAF_CHECK(store->load(counted_id(3999)).has_value());
  CAF_CHECK(store->load(counted_id(3750)).has_value());
  CAF_CHECK(!store->load(counted_id(3749)).has_value());
  CAF_CHECK(!store->load(counted_id(0)).has_value());
  CAF_CHECK_EQUAL(store->prune(5000), 0u);
}

// Oldest by the time a trace was last written, not by when it was made:
// a trace updated lately stays over newer ones that were not.
CAF_TEST(the least recently updated traces go first) {
  const auto one = one_root_bytes();
  const std::uint64_t max_bytes = one * 3;
  auto store = store_of_size(max_bytes);
  for (std::uint64_t i = 0; i < 3; ++i)
    CAF_REQUIRE_EQUAL(store->save_spans(roots(i, 1), 100 + i), "");
  // Trace 0 gets a child span (its row moves to the newest time); the
  // store is then over its limit and trace 1, now the oldest, goes.
  auto child = test_route_span(counted_id(0), "c000000000000001", "0000000000000010");
  CAF_REQUIRE_EQUAL(store->save_spans({child}, 200), "");
  CAF_CHECK(store->load(counted_id(0)).has_value());
  CAF_CHECK(!store->load(counted_id(1)).has_value());
  CAF_CHECK(store->load(counted_id(2)).has_value());
  CAF_CHECK_LESS_OR_EQUAL(store->stored_bytes(), max_bytes);
  CAF_CHECK_EQUAL(store->take_retention_counts().by_size, 1u);
}

// The traces a transaction writes are not dropped by it, even when they
// are not the newest by time (the clock went back), unless one alone is
// over the limit (it could never fit).
CAF_TEST(a batch keeps what it wrote unless a trace alone is over the limit) {
  const auto one = one_root_bytes();
  const std::uint64_t max_bytes = one * 2;
  auto store = store_of_size(max_bytes);
  CAF_REQUIRE_EQUAL(store->save_spans(roots(0, 2), 5000), "");
  // Written at an earlier time than the two stored: by updated_ms the
  // oldest, yet the batch's own. The two before go.
  CAF_REQUIRE_EQUAL(store->save_spans(roots(10, 2), 4000), "");
  CAF_CHECK(store->load(counted_id(10)).has_value());
  CAF_CHECK(store->load(counted_id(11)).has_value());
  CAF_CHECK(!store->load(counted_id(0)).has_value());
  CAF_CHECK(!store->load(counted_id(1)).has_value());
  // A batch larger than the whole limit: all of it stays (the store holds
  // its limit and one batch at most), and the next batch drops it down to
  // the limit, oldest first.
  CAF_REQUIRE_EQUAL(store->save_spans(roots(20, 5), 6000), "");
  CAF_CHECK_EQUAL(store->trace_count(), 5u);
  CAF_CHECK_LESS_OR_EQUAL(store->stored_bytes(), max_bytes + 5 * one);
  CAF_REQUIRE_EQUAL(store->save_spans(roots(30, 1), 7000), "");
  CAF_CHECK_EQUAL(store->trace_count(), 2u);
  CAF_CHECK(store->load(counted_id(24)).has_value());
  CAF_CHECK(store->load(counted_id(30)).has_value());
  // A document whose trace alone is over the limit: stored, then dropped
  // by its own transaction before any older trace (those stay).
  auto big = doc(counted_id(40), "b000000000000001", "", std::string(2 * one, 'n'));
  CAF_CHECK_EQUAL(store->save(big, 8000), "");
  CAF_CHECK(!store->load(counted_id(40)).has_value());
  CAF_CHECK(store->load(counted_id(24)).has_value());
  CAF_CHECK(store->load(counted_id(30)).has_value());
  CAF_CHECK_EQUAL(store->counted_bytes(), store->stored_bytes());
}

// The running size is what a SUM over the table gives, whatever the writes
// did: new traces by rows of many and one by one, spans replaced by route
// spans and by documents, row texts replaced, traces dropped by age and by
// size.
CAF_TEST(the running size equals a fresh sum after a mix of writes) {
  std::mt19937_64 rng{7};
  traces::retention r;
  r.max_age = 2000ms;
  r.max_bytes = 64 * one_root_bytes();
  std::string error;
  auto store = traces::trace_store::open(":memory:", r, error);
  CAF_REQUIRE(store != nullptr);
  std::vector<std::string> ids;
  std::int64_t now = 1000;
  for (int round = 0; round < 30; ++round) {
    now += 400;
    std::vector<traces::run_span> batch;
    // New traces (more than new_trace_rows' 64 at times), some of them again.
    auto fresh = 1 + rng() % 90;
    for (std::size_t i = 0; i < fresh; ++i) {
      ids.push_back(random_trace_id(rng));
      batch.push_back(test_route_span(ids.back(), "1000000000000001", "",
                                      "rt " + std::string(rng() % 40, 'x')));
    }
    for (int i = 0; i < 10; ++i) {
      auto& id = ids[rng() % ids.size()];
      switch (rng() % 4) {
        case 0: // a child span, new or replacing one stored
          batch.push_back(test_route_span(id, "20000000000000" + std::to_string(10 + rng() % 3),
                                          "1000000000000001"));
          break;
        case 1: // the root again, with another name: the row's texts change
          batch.push_back(test_route_span(id, "1000000000000001", "",
                                          std::string(rng() % 60, 'r')));
          break;
        case 2: // a running span
          batch.push_back(test_route_span(id, "30000000000000" + std::to_string(10 + rng() % 3),
                                          "1000000000000001"));
          batch.back().end_ms = 0;
          break;
        default:
          break;
      }
    }
    CAF_REQUIRE_EQUAL(store->save_spans(batch, now), "");
    // Documents: a span replacing a route span, a new one, a running span
    // sent after it ended, a display name alone.
    auto& id = ids[rng() % ids.size()];
    std::vector<std::string> docs{
      doc(id, "1000000000000001", "", "doc" + std::string(rng() % 30, 'd')),
      doc(id, "40000000000000" + std::to_string(10 + rng() % 3), "1000000000000001", "c"),
      doc(id, "40000000000000" + std::to_string(10 + rng() % 3), "1000000000000001", "c", 0),
      R"({"traceId":")" + ids[rng() % ids.size()] + R"(","displayName":")"
        + std::string(rng() % 50, 'z') + R"(","spans":{}})",
    };
    for (auto& o : store->save_each(docs, now))
      CAF_CHECK_EQUAL(o.error, "");
    // A prune that finds traces over the age limit (the size limit keeps
    // fewer than 2 s of them: the prune looks from later on).
    if (round % 7 == 6)
      store->prune(now + 1500);
    CAF_CHECK_EQUAL(store->counted_bytes(), store->stored_bytes());
  }
  auto c = store->take_retention_counts();
  CAF_CHECK_GREATER(c.by_size, 0u);
  CAF_CHECK_GREATER(c.by_age, 0u);
}

// A store file opened again starts from what it holds, as does another
// connection to it; and when another connection writes to the file, this
// one's size is summed again (at most once a second) and counted.
CAF_TEST(a reopened store and another connection start from the size of the file) {
  temp_file f;
  traces::retention r;
  r.max_age = 0ms;
  std::string error;
  std::uint64_t bytes = 0;
  {
    auto store = traces::trace_store::open(f.path, r, error);
    CAF_REQUIRE(store != nullptr);
    CAF_REQUIRE_EQUAL(store->save_spans(roots(0, 300), 1000), "");
    CAF_REQUIRE_EQUAL(store->save(doc(counted_id(1), "d000000000000001", "0000000000000011", "d"),
                                  1001),
                      "");
    bytes = store->stored_bytes();
    CAF_CHECK_EQUAL(store->counted_bytes(), bytes);
  }
  auto store = traces::trace_store::open(f.path, r, error);
  CAF_REQUIRE(store != nullptr);
  CAF_CHECK_EQUAL(store->counted_bytes(), bytes);
  // A limit lowered since: the store is over it; the next write brings it
  // within (its own trace kept).
  traces::retention low = r;
  low.max_bytes = bytes / 2;
  auto lowered = traces::trace_store::open(f.path, low, error);
  CAF_REQUIRE(lowered != nullptr);
  CAF_CHECK_EQUAL(lowered->counted_bytes(), bytes);
  CAF_REQUIRE_EQUAL(lowered->save_spans(roots(1000, 1), 2000), "");
  CAF_CHECK_LESS_OR_EQUAL(lowered->stored_bytes(), low.max_bytes);
  CAF_CHECK(lowered->load(counted_id(1000)).has_value());
  CAF_CHECK_EQUAL(lowered->counted_bytes(), lowered->stored_bytes());
  // `store` missed those writes: its next write sums again (counted), and
  // within a second of that sum it does not, however often the other writes.
  CAF_REQUIRE_EQUAL(store->save_spans(roots(2000, 1), 3000), "");
  CAF_CHECK_EQUAL(store->take_retention_counts().resyncs, 1u);
  CAF_CHECK_EQUAL(store->counted_bytes(), store->stored_bytes());
  CAF_REQUIRE_EQUAL(lowered->save_spans(roots(3000, 1), 3100), "");
  CAF_REQUIRE_EQUAL(store->save_spans(roots(4000, 1), 3500), "");
  CAF_CHECK_EQUAL(store->take_retention_counts().resyncs, 0u);
  CAF_REQUIRE_EQUAL(store->save_spans(roots(5000, 1), 4100), "");
  CAF_CHECK_EQUAL(store->take_retention_counts().resyncs, 1u);
}

// The size prune reads the traces it drops through traces_by_update, never
// the whole table sorted: SQLite's plan of it says so.
CAF_TEST(dropping the oldest walks the index of update times) {
  temp_file f;
  std::string error;
  auto store = traces::trace_store::open(f.path, {}, error);
  CAF_REQUIRE(store != nullptr);
  sqlite3* db = nullptr;
  CAF_REQUIRE_EQUAL(sqlite3_open(f.path.c_str(), &db), SQLITE_OK);
  std::string plan;
  for (auto sql : {"EXPLAIN QUERY PLAN SELECT id FROM traces ORDER BY updated_ms, id",
                   "EXPLAIN QUERY PLAN SELECT id FROM traces WHERE updated_ms < 5"}) {
    statement q{db, sql};
    CAF_REQUIRE(static_cast<bool>(q));
    plan.clear();
    while (q.step() == SQLITE_ROW)
      plan += q.text(3) + ";";
    CAF_MESSAGE(plan);
    CAF_CHECK(plan.find("traces_by_update") != std::string::npos);
    CAF_CHECK(plan.find("TEMP B-TREE") == std::string::npos);
  }
  sqlite3_close(db);
}

// A route span stored again (the same trace and span id: a keeper's retry,
// a span the runtime's document had already brought) replaces what was
// there, so the trace counts its bytes once; a running copy of an ended
// span keeps the ended one and changes nothing. Retention drops traces by
// this count: counted twice, a trace went before its time.
CAF_TEST(a span written again counts once) {
  auto store = store_of_size(std::uint64_t{1} << 30);
  auto id = counted_id(1);
  auto root = test_route_span(id, "1000000000000001", "");
  auto child = test_route_span(id, "2000000000000002", "1000000000000001");
  CAF_REQUIRE_EQUAL(store->save_spans({root}, 1), "");
  auto lone = store->stored_bytes();
  // The lone root again: it leaves the trace's row for `spans` on the way.
  CAF_REQUIRE_EQUAL(store->save_spans({root}, 2), "");
  CAF_CHECK_EQUAL(store->stored_bytes(), lone);
  CAF_REQUIRE_EQUAL(store->save_spans({child}, 3), "");
  auto both = store->stored_bytes();
  CAF_CHECK_GREATER(both, lone);
  CAF_REQUIRE_EQUAL(store->save_spans({child, root}, 4), "");
  CAF_CHECK_EQUAL(store->stored_bytes(), both);
  auto running = child;
  running.end_ms = 0;
  CAF_REQUIRE_EQUAL(store->save_spans({running}, 5), "");
  CAF_CHECK_EQUAL(store->stored_bytes(), both);
  // A longer name replaces the span: the count is what the trace written
  // once with it counts.
  auto renamed = child;
  renamed.name += " again";
  CAF_REQUIRE_EQUAL(store->save_spans({renamed}, 6), "");
  auto fresh = store_of_size(std::uint64_t{1} << 30);
  CAF_REQUIRE_EQUAL(fresh->save_spans({root, renamed}, 1), "");
  CAF_CHECK_EQUAL(store->stored_bytes(), fresh->stored_bytes());
  CAF_CHECK_EQUAL(store->counted_bytes(), store->stored_bytes());
}
