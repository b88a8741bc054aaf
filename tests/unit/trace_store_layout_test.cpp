#define CAF_SUITE trace_store_layout

#include "test_support.hpp"
#include "trace_test_spans.hpp"

#include "traces/detail/sqlite_statement.hpp"
#include "traces/detail/store_layout.hpp"
#include "traces/run_span.hpp"
#include "traces/span_record.hpp"
#include "traces/trace_store.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

// The store's tables on disk (traces/detail/store_layout.hpp): spans keyed
// by their trace's row, files of the layout before migrated at open, files
// that are no trace store refused with a reason.

using namespace actor_host;
using namespace actor_host::testing;
using traces::detail::exec;
using traces::detail::statement;

namespace {

/// A SpanData as Genkit's exporter sends it.
std::string span_doc(std::string_view trace, std::string_view id, std::string_view parent,
                     std::int64_t end) {
  std::string s = R"({"spanId":")" + std::string{id} + R"(","traceId":")" + std::string{trace}
                  + "\"";
  if (!parent.empty())
    s += R"(,"parentSpanId":")" + std::string{parent} + "\"";
  s += R"(,"startTime":1700000000000,"endTime":)" + std::to_string(end)
       + R"(,"attributes":{"genkit:name":"flow \"q\" é"},"displayName":"flow",)"
         R"("instrumentationLibrary":{"name":"genkit-tracer","version":"v1"},"spanKind":"INTERNAL"})";
  return s;
}

traces::run_span route_span(std::string trace, std::string id, std::string parent, bool ok) {
  auto s = test_route_span(std::move(trace), std::move(id), std::move(parent));
  s.ok = ok;
  if (!ok)
    s.error_message = "INTERNAL: boom";
  return s;
}

/// A layout 1 file written as actor-host wrote it before layout 2 (its
/// schema, and the rows its statements made), beside a store of the current
/// layout given the same documents and spans through the store's API: after
/// the migration the two must read the same.
struct layout_1_file {
  std::filesystem::path dir = std::filesystem::temp_directory_path()
                              / ("actor-host-layout-" + std::to_string(::getpid()));
  std::string path = (dir / "traces.sqlite").string();
  sqlite3* db = nullptr;
  std::string error;
  std::unique_ptr<traces::trace_store> expected = traces::trace_store::open(":memory:", {}, error);

  layout_1_file() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    CAF_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    CAF_REQUIRE(exec(db, traces::detail::layout_1_sql));
    CAF_REQUIRE(expected != nullptr);
  }
  ~layout_1_file() {
    close();
    std::filesystem::remove_all(dir);
  }
  // "" or SQLite's complaint.
  std::string done(statement& q) {
    return q.step() == SQLITE_DONE ? std::string{} : std::string{sqlite3_errmsg(db)};
  }
  void close() {
    sqlite3_close_v2(db);
    db = nullptr;
  }

  // The row of the trace as layout 1's upsert left it.
  void put_trace(const std::string& trace, const char* name, bool root, std::int64_t now,
                 std::int64_t bytes) {
    statement q{db, "INSERT INTO traces(trace_id, display_name, start_time, end_time, has_root, "
                    "updated_ms, bytes) VALUES(?,?,?,?,?,?,?) ON CONFLICT(trace_id) DO UPDATE "
                    "SET display_name=COALESCE(excluded.display_name, display_name), "
                    "start_time=COALESCE(excluded.start_time, start_time), "
                    "end_time=COALESCE(excluded.end_time, end_time), "
                    "has_root=MAX(has_root, excluded.has_root), updated_ms=excluded.updated_ms, "
                    "bytes=bytes+excluded.bytes"};
    CAF_REQUIRE(q);
    q.bind(1, trace);
    if (name)
      q.bind(2, std::string_view{name}).bind(3, std::string_view{"1700000000000"})
        .bind(4, std::string_view{"1700000000100"});
    else
      q.bind_null(2).bind_null(3).bind_null(4);
    q.bind(5, std::int64_t{root}).bind(6, now).bind(7, bytes);
    CAF_REQUIRE_EQUAL(done(q), "");
  }
  void put_span(const std::string& trace, const std::string& id, bool ended,
                const std::string& stored) {
    statement q{db, "INSERT INTO spans(trace_id, span_id, ended, json) VALUES(?,?,?,?)"};
    CAF_REQUIRE(q);
    q.bind(1, trace).bind(2, id).bind(3, std::int64_t{ended}).bind(4, stored);
    CAF_REQUIRE_EQUAL(done(q), "");
  }

  /// A posted document with one span, in both.
  void document(const std::string& trace, const std::string& id, const std::string& parent,
                std::int64_t end, std::int64_t now) {
    auto text = span_doc(trace, id, parent, end);
    std::string extra = parent.empty() ? R"(,"displayName":"flow","startTime":1700000000000,)"
                                         R"("endTime":1700000000100)"
                                       : "";
    auto doc = R"({"traceId":")" + trace + "\"" + extra + R"(,"spans":{")" + id + "\":" + text
               + "}}";
    CAF_REQUIRE_EQUAL(expected->save(doc, now), "");
    auto stored = boost::json::serialize(boost::json::parse(text));
    put_span(trace, id, end > 0, stored);
    put_trace(trace, parent.empty() ? "flow" : nullptr, parent.empty(), now,
              static_cast<std::int64_t>(stored.size()));
  }
  /// A route span stored packed, in both.
  void route(const traces::run_span& s, std::int64_t now) {
    CAF_REQUIRE_EQUAL(expected->save_spans({s}, now), "");
    put_span(s.trace_id, s.span_id, s.end_ms > 0, traces::pack_run_span(s));
    put_trace(s.trace_id, s.parent_span_id.empty() ? "actor-host rt" : nullptr,
              s.parent_span_id.empty(), now, static_cast<std::int64_t>(traces::span_json_size(s)));
  }
};

std::int64_t user_version(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::int64_t v = -1;
  {
    statement q{db, "PRAGMA user_version"};
    if (q && q.step() == SQLITE_ROW)
      v = q.int64(0);
  }
  sqlite3_close_v2(db);
  return v;
}

} // namespace

CAF_TEST(a store of the layout before is migrated at open and reads the same) {
  layout_1_file f;
  std::mt19937_64 rng{42};
  std::vector<std::string> ids;
  std::int64_t now = 1000;
  // Exporters' documents with a packed route span under their root (what a
  // Genkit runtime and the manager store together), random ids.
  for (int i = 0; i < 300; ++i) {
    auto id = random_trace_id(rng);
    ids.push_back(id);
    f.document(id, id.substr(0, 16), "", 1700000000100, ++now);
    f.route(route_span(id, id.substr(16), id.substr(0, 16), i % 7 != 0), ++now);
    if (i % 5 == 0) // a child that is still running
      f.document(id, id.substr(8, 16), id.substr(0, 16), 0, ++now);
  }
  // A route span stored as its trace's root (no runtime spans came), and a
  // trace whose root never came (not listed, still loaded).
  auto lone = std::string{"0000165000000000000000000000abcd"};
  f.route(route_span(lone, "1111111111111111", "", true), ++now);
  auto rootless = random_trace_id(rng);
  f.document(rootless, "2222222222222222", "3333333333333333", 1700000000050, ++now);
  ids.push_back(lone);
  ids.push_back(rootless);
  f.close();

  std::vector<std::string> notes;
  std::string error;
  auto store = traces::trace_store::open(f.path, {}, error,
                                         [&](const std::string& n) { notes.push_back(n); });
  CAF_REQUIRE_EQUAL(error, "");
  CAF_REQUIRE(store != nullptr);
  CAF_REQUIRE_EQUAL(notes.size(), 2u);
  CAF_CHECK(contains(notes[0], "migrating " + f.path + " (302 traces"));
  CAF_CHECK(contains(notes[1], "migrated " + f.path + " in "));
  CAF_CHECK(!contains(notes[1], "left out"));
  CAF_CHECK_EQUAL(user_version(f.path), traces::detail::layout_version);
  CAF_CHECK_EQUAL(store->trace_count(), f.expected->trace_count());
  CAF_CHECK_EQUAL(store->stored_bytes(), f.expected->stored_bytes());
  for (auto& id : ids) {
    auto got = store->load(id);
    CAF_REQUIRE(got.has_value());
    CAF_CHECK_EQUAL(*got, f.expected->load(id).value_or("<none>"));
  }
  // Every page, in the same order (most recently updated first).
  CAF_CHECK_EQUAL(store->list(1000, 0), f.expected->list(1000, 0));
  CAF_CHECK_EQUAL(store->list(7, 35), f.expected->list(7, 35));
  CAF_CHECK_EQUAL(parse_json(store->list(1000, 0)).at("traces").as_array().size(), 301u);

  // Written to after: a span into a migrated trace, a new trace, both stored
  // as into a store that was never migrated.
  auto more = route_span(ids[3], "4444444444444444", ids[3].substr(0, 16), true);
  auto fresh = route_span(random_trace_id(rng), "5555555555555555", "", true);
  CAF_CHECK_EQUAL(store->save_spans({more, fresh}, 5000), "");
  CAF_CHECK_EQUAL(f.expected->save_spans({more, fresh}, 5000), "");
  CAF_CHECK_EQUAL(store->load(ids[3]).value_or("<a>"), f.expected->load(ids[3]).value_or("<b>"));
  CAF_CHECK_EQUAL(store->load(fresh.trace_id).value_or("<a>"),
                  f.expected->load(fresh.trace_id).value_or("<b>"));
  CAF_CHECK_EQUAL(store->list(10, 0), f.expected->list(10, 0));
  store.reset();
  // Opened again: nothing to migrate.
  notes.clear();
  store = traces::trace_store::open(f.path, {}, error,
                                    [&](const std::string& n) { notes.push_back(n); });
  CAF_REQUIRE(store != nullptr);
  CAF_CHECK(notes.empty());
  CAF_CHECK_EQUAL(store->trace_count(), 303u);
}

CAF_TEST(a migration that fails leaves the file as it was) {
  layout_1_file f;
  f.document("0123456789abcdef0123456789abcdef", "aaaaaaaaaaaaaaaa", "", 5, 1);
  // A row layout 1 allowed (a TEXT PRIMARY KEY of a rowid table may be
  // NULL) that layout 2 refuses: a damaged or foreign file.
  CAF_REQUIRE(exec(f.db, "INSERT INTO traces(trace_id, updated_ms) VALUES(NULL, 2)"));
  f.close();
  std::string error;
  CAF_CHECK(traces::trace_store::open(f.path, {}, error) == nullptr);
  CAF_CHECK(contains(error, "cannot migrate " + f.path));
  CAF_CHECK_EQUAL(user_version(f.path), 0);
  sqlite3* db = nullptr;
  sqlite3_open(f.path.c_str(), &db);
  {
    statement q{db, "SELECT COUNT(*) FROM spans WHERE trace_id='0123456789abcdef0123456789abcdef'"};
    CAF_CHECK(q && q.step() == SQLITE_ROW && q.int64(0) == 1);
  }
  sqlite3_close_v2(db);
}

CAF_TEST(spans no trace row names are left out of a migration and said so) {
  layout_1_file f;
  f.document("0123456789abcdef0123456789abcdef", "aaaaaaaaaaaaaaaa", "", 5, 1);
  f.put_span("ffffffffffffffffffffffffffffffff", "bbbbbbbbbbbbbbbb", true, "{}");
  f.close();
  std::vector<std::string> notes;
  std::string error;
  auto store = traces::trace_store::open(f.path, {}, error,
                                         [&](const std::string& n) { notes.push_back(n); });
  CAF_REQUIRE(store != nullptr);
  CAF_REQUIRE_EQUAL(notes.size(), 2u);
  CAF_CHECK(contains(notes[1], "1 span(s) that belonged to no stored trace"));
  CAF_CHECK_EQUAL(store->load("0123456789abcdef0123456789abcdef").value_or("<none>"),
                  f.expected->load("0123456789abcdef0123456789abcdef").value_or("<expected>"));
}

// Real runtimes' trace ids are random: each new trace gets the next row, so
// its spans go after every stored one whatever its id.
CAF_TEST(traces with random ids get rows in the order they came) {
  auto dir = std::filesystem::temp_directory_path()
             / ("actor-host-random-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto path = (dir / "traces.sqlite").string();
  std::mt19937_64 rng{7};
  std::vector<std::string> ids;
  std::uint64_t bytes = 0;
  {
    std::string error;
    auto store = traces::trace_store::open(path, {}, error);
    CAF_REQUIRE(store != nullptr);
    for (int batch = 0; batch < 4; ++batch) {
      std::vector<traces::run_span> spans;
      for (int i = 0; i < 500; ++i) {
        ids.push_back(random_trace_id(rng));
        spans.push_back(route_span(ids.back(), ids.back().substr(0, 16), "", i % 3 != 0));
      }
      CAF_REQUIRE_EQUAL(store->save_spans(spans, 1000 + batch), "");
    }
    CAF_CHECK_EQUAL(store->trace_count(), 2000u);
    for (std::size_t i = 0; i < ids.size(); i += 97) {
      auto t = store->load(ids[i]);
      CAF_REQUIRE(t.has_value());
      auto expected = route_span(ids[i], ids[i].substr(0, 16), "", i % 500 % 3 != 0);
      CAF_CHECK_EQUAL(member(*t, {"spans", ids[i].substr(0, 16)}), traces::span_json(expected));
    }
    bytes = store->stored_bytes();
  }
  sqlite3* db = nullptr;
  CAF_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  {
    statement q{db, "SELECT id_text FROM traces ORDER BY id"};
    std::vector<std::string> by_row;
    while (q.step() == SQLITE_ROW)
      by_row.push_back(q.text(0));
    CAF_CHECK(by_row == ids);
  }
  // Retention by size drops the least recently updated traces with their
  // spans: the first two batches.
  {
    std::string error;
    traces::retention half;
    half.max_age = std::chrono::milliseconds{0};
    half.max_bytes = bytes / 2;
    auto store = traces::trace_store::open(path, half, error);
    CAF_REQUIRE(store != nullptr);
    CAF_CHECK_EQUAL(store->prune(2000), 1000u);
    CAF_CHECK(!store->load(ids[0]).has_value());
    CAF_CHECK(!store->load(ids[999]).has_value());
    CAF_CHECK(store->load(ids[1000]).has_value());
    CAF_CHECK(store->load(ids.back()).has_value());
  }
  {
    // Every span left is in a trace's row (each trace here is one route
    // span: its lone span) or keyed by one: none of the dropped remain.
    statement lone{db, "SELECT COUNT(*) FROM traces WHERE lone_span_id IS NOT NULL"};
    CAF_CHECK(lone && lone.step() == SQLITE_ROW && lone.int64(0) == 1000);
    statement all{db, "SELECT COUNT(*) FROM spans"};
    CAF_CHECK(all && all.step() == SQLITE_ROW && all.int64(0) == 0);
  }
  sqlite3_close_v2(db);
  std::filesystem::remove_all(dir);
}

CAF_TEST(a file that is no trace store is refused with the reason) {
  auto dir = std::filesystem::temp_directory_path()
             / ("actor-host-foreign-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string error;
  auto refused = [&](const std::string& name, const char* sql) {
    auto path = (dir / name).string();
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    CAF_CHECK(exec(db, sql));
    sqlite3_close_v2(db);
    error.clear();
    CAF_CHECK(traces::trace_store::open(path, {}, error) == nullptr);
    return error;
  };
  CAF_CHECK(contains(refused("other.sqlite", "CREATE TABLE people(name TEXT)"),
                     "is not a trace store: it is a database with other tables"));
  CAF_CHECK(contains(refused("newer.sqlite", "PRAGMA user_version=4"),
                     "was written by a newer actor-host (trace store layout 4; this one knows 3)"));
  CAF_CHECK(contains(refused("odd.sqlite", "PRAGMA user_version=1"), "is not a trace store"));
  CAF_CHECK(contains(refused("shape.sqlite", "CREATE TABLE traces(x); CREATE TABLE spans(y)"),
                     "its tables are not those of any layout"));
  CAF_CHECK(contains(refused("v2shape.sqlite",
                             "CREATE TABLE traces(x); CREATE TABLE spans(y); PRAGMA user_version=2"),
                     "its tables are not those of layout 2"));
  CAF_CHECK(contains(refused("v3shape.sqlite",
                             "CREATE TABLE traces(x); CREATE TABLE spans(y); PRAGMA user_version=3"),
                     "its tables are not those of layout 3"));
  // Not a database at all.
  auto junk = (dir / "junk.sqlite").string();
  {
    std::ofstream out{junk, std::ios::binary};
    std::mt19937 rng{1};
    for (int i = 0; i < 65536; ++i)
      out.put(static_cast<char>(rng()));
  }
  CAF_CHECK(traces::trace_store::open(junk, {}, error) == nullptr);
  CAF_CHECK(contains(error, "cannot set up " + junk));
  std::filesystem::remove_all(dir);
}
