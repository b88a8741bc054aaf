#define CAF_SUITE trace_store_batch

#include "test_support.hpp"
#include "trace_test_spans.hpp"

#include "traces/detail/new_trace_rows.hpp"
#include "traces/detail/sqlite_statement.hpp"
#include "traces/run_span.hpp"
#include "traces/trace_store.hpp"

#include <cstdio>
#include <filesystem>
#include <unistd.h>

// Route spans that make new traces are written by one statement for many
// (traces/detail/new_trace_rows.hpp). The files must hold what writing
// each span by itself made: every row, byte for byte, rowids included.

using namespace actor_host;
using namespace actor_host::testing;
using traces::detail::exec;
using traces::detail::statement;

namespace {

constexpr std::size_t rows = traces::detail::new_trace_rows::max_rows;

std::string counted_id(std::size_t i) {
  char b[40];
  std::snprintf(b, sizeof b, "%08x%024zx", 0x1650u, i);
  return b;
}

traces::run_span root(std::string trace, std::size_t i, std::int64_t end = 1700000000100) {
  char id[20];
  std::snprintf(id, sizeof id, "%016zx", 0x5000 + i);
  auto s = test_route_span(std::move(trace), id, "", "actor-host \"rt\"");
  s.end_ms = end;
  return s;
}

/// A document with one ended root SpanData, as Genkit's exporter sends it.
std::string document(const std::string& trace, const std::string& id) {
  return R"({"traceId":")" + trace
         + R"(","displayName":"flow","startTime":1700000000000,"endTime":1700000000100,)"
           R"("spans":{")"
         + id + R"(":{"spanId":")" + id + R"(","traceId":")" + trace
         + R"(","startTime":1700000000000,"endTime":1700000000100,)"
           R"("attributes":{"genkit:name":"flow"},"displayName":"flow",)"
           R"("instrumentationLibrary":{"name":"genkit-tracer","version":"v1"},)"
           R"("spanKind":"INTERNAL"}}})";
}

/// Every row of a store file, in key order, as text.
std::string rows_of(const std::string& path) {
  sqlite3* db = nullptr;
  CAF_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  std::string out;
  for (auto* sql : {"SELECT id, id_text, display_name, start_time, end_time, has_root, "
                    "updated_ms, bytes, lone_span_id, lone_span FROM traces ORDER BY id",
                    "SELECT trace, span_id, ended, json FROM spans ORDER BY trace, span_id"}) {
    statement q{db, sql};
    CAF_REQUIRE(static_cast<bool>(q));
    while (q.step() == SQLITE_ROW) {
      for (int c = 0; c < (sql[7] == 'i' ? 10 : 4); ++c)
        out += (q.is_null(c) ? std::string{"NULL"} : q.text(c)) + "|";
      out += "\n";
    }
    out += "--\n";
  }
  sqlite3_close_v2(db);
  return out;
}

/// Two stores in files of their own: `batched` given whole batches, `each`
/// given the same spans one save_spans call per span (fewer than a
/// statement's rows: written one by one, as before rows of many).
struct fixture {
  std::filesystem::path dir = std::filesystem::temp_directory_path()
                              / ("actor-host-batch-" + std::to_string(::getpid()));
  std::string batched_path = (dir / "batched.sqlite").string();
  std::string each_path = (dir / "each.sqlite").string();
  std::string error;
  std::unique_ptr<traces::trace_store> batched, each;

  fixture() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    batched = traces::trace_store::open(batched_path, {}, error);
    each = traces::trace_store::open(each_path, {}, error);
    CAF_REQUIRE(batched != nullptr);
    CAF_REQUIRE(each != nullptr);
  }
  ~fixture() {
    batched.reset();
    each.reset();
    std::filesystem::remove_all(dir);
  }
  // `fill`: through save_spans' fill function (the keeper's), else the vector.
  void route(const std::vector<traces::run_span>& spans, std::int64_t now, bool fill = false) {
    if (fill)
      CAF_REQUIRE_EQUAL(batched->save_spans(spans.size(),
                                            [&](std::size_t i, traces::run_span& out) {
                                              out = spans[i];
                                            },
                                            now),
                        "");
    else
      CAF_REQUIRE_EQUAL(batched->save_spans(spans, now), "");
    for (auto& s : spans)
      CAF_REQUIRE_EQUAL(each->save_spans({s}, now), "");
  }
  void post(const std::string& doc, std::int64_t now) {
    CAF_REQUIRE_EQUAL(batched->save(doc, now), "");
    CAF_REQUIRE_EQUAL(each->save(doc, now), "");
  }
  void same() {
    CAF_CHECK_EQUAL(rows_of(batched_path), rows_of(each_path));
    CAF_CHECK_EQUAL(batched->list(1000, 0), each->list(1000, 0));
    CAF_CHECK_EQUAL(batched->stored_bytes(), each->stored_bytes());
  }
  std::int64_t count(const std::string& sql) {
    sqlite3* db = nullptr;
    CAF_REQUIRE(sqlite3_open(batched_path.c_str(), &db) == SQLITE_OK);
    statement q{db, sql.c_str()};
    auto n = q && q.step() == SQLITE_ROW ? q.int64(0) : -1;
    sqlite3_close_v2(db);
    return n;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(trace_store_batch_tests, fixture)

CAF_TEST(new traces written by rows of many hold what one by one made) {
  // Three statements' worth and a few left over, through both save_spans.
  std::vector<traces::run_span> spans;
  for (std::size_t i = 0; i < 3 * rows + 5; ++i)
    spans.push_back(root(counted_id(i), i));
  route(spans, 1);
  CAF_CHECK_EQUAL(count("SELECT COUNT(*) FROM traces WHERE lone_span_id IS NOT NULL"),
                  static_cast<std::int64_t>(spans.size()));
  CAF_CHECK_EQUAL(count("SELECT COUNT(*) FROM spans"), 0);
  same();
  spans.clear();
  for (std::size_t i = 0; i < 2 * rows; ++i)
    spans.push_back(root(counted_id(1000 + i), 1000 + i));
  route(spans, 2, true);
  same();
  for (auto& s : spans)
    CAF_CHECK_EQUAL(batched->load(s.trace_id).value_or("<a>"), each->load(s.trace_id).value_or("<b>"));
}

CAF_TEST(spans into traces stored before or made earlier in the statement are written by themselves) {
  post(document(counted_id(1), "1111111111111111"), 1);           // a posted document
  route({root(counted_id(2), 2)}, 2);                              // a lone route span
  route({root(counted_id(3), 3, 0)}, 3);                           // a running one
  std::vector<traces::run_span> spans;
  for (std::size_t i = 0; i < rows; ++i)
    spans.push_back(root(counted_id(100 + i), 100 + i));
  spans[3] = root(counted_id(1), 203);
  spans[10] = root(counted_id(2), 210);
  spans[rows - 1] = root(counted_id(3), 211);
  // Traces given more than one row of the statement: made by the first
  // row (spans[0]) and by one in the middle (spans[40]).
  spans[20] = root(counted_id(150), 220);
  spans[0] = root(counted_id(150), 221);
  spans[40] = root(counted_id(145), 240);
  route(spans, 4);
  same();
  CAF_CHECK_EQUAL(count("SELECT COUNT(*) FROM traces"), static_cast<std::int64_t>(rows) - 3);
  // Every row's trace stored now: the statement makes none.
  for (auto& s : spans)
    s.span_id[0] = 'a';
  route(spans, 5);
  same();
  CAF_CHECK_EQUAL(count("SELECT COUNT(*) FROM traces"), static_cast<std::int64_t>(rows) - 3);
}

CAF_TEST(spans that take the other path keep their place in the batch) {
  std::vector<traces::run_span> spans;
  for (std::size_t i = 0; i < 3 * rows; ++i) {
    auto s = root(counted_id(i), i);
    if (i % 7 == 3)
      s.end_ms = 0; // running: never a lone span
    if (i % 11 == 5 && i > 0) {
      s.trace_id = counted_id(i - 1); // a child of the span before
      s.parent_span_id = spans.back().span_id;
    }
    spans.push_back(std::move(s));
  }
  // A run of rows long enough for a statement, then a running root and its
  // ended copy (one span id: the copy replaces it).
  for (std::size_t i = 0; i < rows + 1; ++i)
    spans.push_back(root(counted_id(500 + i), 500 + i));
  spans.push_back(root(counted_id(900), 900, 0));
  spans.push_back(root(counted_id(900), 900));
  route(spans, 1);
  same();
}

CAF_TEST(a failed statement of rows rolls the batch back) {
  std::vector<traces::run_span> first;
  for (std::size_t i = 0; i < rows; ++i)
    first.push_back(root(counted_id(i), i));
  route(first, 1);
  auto before = rows_of(batched_path);
  // A trigger refusing one row, written through a connection of its own:
  // the statement holding that row fails, after one that went in.
  sqlite3* db = nullptr;
  CAF_REQUIRE(sqlite3_open(batched_path.c_str(), &db) == SQLITE_OK);
  CAF_REQUIRE(exec(db, "CREATE TRIGGER refuse BEFORE INSERT ON traces WHEN "
                       "NEW.id_text = '00001650000000000000000000000500' "
                       "BEGIN SELECT RAISE(ABORT, 'refused'); END"));
  std::vector<traces::run_span> spans;
  for (std::size_t i = 0; i < 2 * rows; ++i)
    spans.push_back(root(counted_id(0x500 - rows - 3 + i), 1000 + i));
  CAF_CHECK(contains(batched->save_spans(spans, 2), "refused"));
  CAF_CHECK(contains(batched->save_spans(spans.size(),
                                         [&](std::size_t i, traces::run_span& out) {
                                           out = spans[i];
                                         },
                                         2),
                     "refused"));
  CAF_CHECK_EQUAL(exec(db, "DROP TRIGGER refuse"), true);
  sqlite3_close_v2(db);
  CAF_CHECK_EQUAL(rows_of(batched_path), before);
  // The store goes on: the same batch, now taken.
  CAF_CHECK_EQUAL(batched->save_spans(spans, 3), "");
  CAF_CHECK_EQUAL(count("SELECT COUNT(*) FROM traces"), static_cast<std::int64_t>(3 * rows));
}

CAF_TEST_FIXTURE_SCOPE_END()
