#define CAF_SUITE trace_store_lone

#include "test_support.hpp"
#include "trace_test_spans.hpp"

#include "traces/detail/sqlite_statement.hpp"
#include "traces/detail/store_layout.hpp"
#include "traces/run_span.hpp"
#include "traces/span_record.hpp"
#include "traces/trace_store.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <unistd.h>

// Layout 3 (traces/store_layout.cpp): a new trace's ended route span kept in
// the trace's row until the trace gets more, read as the `spans` row layout
// 2 kept for it; and a layout 2 file moved to layout 3 at open.

using namespace actor_host;
using namespace actor_host::testing;
using traces::detail::exec;
using traces::detail::statement;

namespace {

constexpr auto trace_a = "0123456789abcdef0123456789abcdef";

// A name with quotes: the lone span's record is escaped as the spans row's.
traces::run_span route_span(std::string trace, std::string id, std::string parent,
                            std::int64_t end = 1700000000100) {
  auto s = test_route_span(std::move(trace), std::move(id), std::move(parent),
                           "actor-host \"rt\"");
  s.end_ms = end;
  return s;
}

/// A document with one SpanData as Genkit's exporter sends it.
std::string document(std::string_view trace, std::string_view id, std::string_view parent,
                     std::int64_t end, std::string_view name = "flow") {
  std::string s = R"({"spanId":")" + std::string{id} + R"(","traceId":")" + std::string{trace}
                  + "\"";
  if (!parent.empty())
    s += R"(,"parentSpanId":")" + std::string{parent} + "\"";
  s += R"(,"startTime":1700000000000,"endTime":)" + std::to_string(end)
       + R"(,"attributes":{"genkit:name":")" + std::string{name} + R"("},"displayName":")"
       + std::string{name}
       + R"(","instrumentationLibrary":{"name":"genkit-tracer","version":"v1"},"spanKind":"INTERNAL"})";
  std::string extra = parent.empty() ? R"(,"displayName":"flow","startTime":1700000000000,)"
                                       R"("endTime":1700000000100)"
                                     : "";
  return R"({"traceId":")" + std::string{trace} + "\"" + extra + R"(,"spans":{")"
         + std::string{id} + "\":" + s + "}}";
}

std::int64_t single_int(sqlite3* db, const std::string& sql) {
  statement q{db, sql.c_str()};
  return q && q.step() == SQLITE_ROW ? q.int64(0) : -1;
}

/// A store in a file of its own, with a second connection to look at its
/// rows, beside a reference store given every span as a posted document
/// (what layout 2 kept as `spans` rows): the two must read the same.
struct fixture {
  std::filesystem::path dir = std::filesystem::temp_directory_path()
                              / ("actor-host-lone-" + std::to_string(::getpid()));
  std::string path = (dir / "traces.sqlite").string();
  std::string error;
  std::unique_ptr<traces::trace_store> store;
  std::unique_ptr<traces::trace_store> expected = traces::trace_store::open(":memory:", {}, error);
  sqlite3* db = nullptr;

  fixture() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    store = traces::trace_store::open(path, {}, error);
    CAF_REQUIRE(store != nullptr);
    CAF_REQUIRE(expected != nullptr);
    CAF_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  }
  ~fixture() {
    sqlite3_close_v2(db);
    store.reset();
    std::filesystem::remove_all(dir);
  }
  void route(std::vector<traces::run_span> spans, std::int64_t now) {
    CAF_REQUIRE_EQUAL(store->save_spans(spans, now), "");
    for (auto& s : spans)
      CAF_REQUIRE_EQUAL(expected->save(traces::trace_data_json(s), now), "");
  }
  void post(const std::string& doc, std::int64_t now) {
    CAF_REQUIRE_EQUAL(store->save(doc, now), "");
    CAF_REQUIRE_EQUAL(expected->save(doc, now), "");
  }
  std::int64_t span_rows(const std::string& trace) {
    return single_int(db, "SELECT COUNT(*) FROM spans JOIN traces ON spans.trace = traces.id "
                          "WHERE id_text='" + trace + "'");
  }
  std::string lone(const std::string& trace) {
    statement q{db, "SELECT lone_span_id FROM traces WHERE id_text=?"};
    q.bind(1, trace);
    return q.step() == SQLITE_ROW && !q.is_null(0) ? q.text(0) : std::string{"<none>"};
  }
  void same(const std::string& trace) {
    CAF_CHECK_EQUAL(store->load(trace).value_or("<none>"),
                    expected->load(trace).value_or("<expected none>"));
    CAF_CHECK_EQUAL(store->stored_bytes(), expected->stored_bytes());
    CAF_CHECK_EQUAL(store->list(100, 0), expected->list(100, 0));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(trace_store_lone_tests, fixture)

CAF_TEST(the route span that makes a trace is kept in its row until the trace gets more) {
  auto root = route_span(trace_a, "4444444444444444", "");
  route({root}, 1);
  CAF_CHECK_EQUAL(lone(trace_a), root.span_id);
  CAF_CHECK_EQUAL(span_rows(trace_a), 0);
  same(trace_a);
  // A child posted by an exporter: both are `spans` rows from then on, in
  // span id order (the child's id sorts before the root's).
  post(document(trace_a, "2222222222222222", root.span_id, 1700000000050), 2);
  CAF_CHECK_EQUAL(lone(trace_a), "<none>");
  CAF_CHECK_EQUAL(span_rows(trace_a), 2);
  same(trace_a);
  // A running copy of the moved span does not replace it (it has ended); an
  // ended one does, and the byte count follows.
  post(document(trace_a, root.span_id, "", 0, "running"), 3);
  same(trace_a);
  post(document(trace_a, root.span_id, "", 1700000000300, "copy"), 4);
  CAF_CHECK(contains(store->load(trace_a).value_or(""), "\"copy\""));
  same(trace_a);
}

CAF_TEST(a second route span of the trace moves the first to spans) {
  auto root = route_span(trace_a, "4444444444444444", "");
  auto child = route_span(trace_a, "1111111111111111", root.span_id);
  // In one batch, and in two.
  route({root, child}, 1);
  CAF_CHECK_EQUAL(lone(trace_a), "<none>");
  CAF_CHECK_EQUAL(span_rows(trace_a), 2);
  same(trace_a);
  std::string other = "ffffffffffffffffffffffffffffffff";
  route({route_span(other, "5555555555555555", "")}, 2);
  CAF_CHECK_EQUAL(lone(other), "5555555555555555");
  route({route_span(other, "6666666666666666", "5555555555555555")}, 3);
  CAF_CHECK_EQUAL(lone(other), "<none>");
  CAF_CHECK_EQUAL(span_rows(other), 2);
  same(other);
}

CAF_TEST(a running route span or one into a stored trace is a spans row) {
  route({route_span(trace_a, "4444444444444444", "", 0)}, 1);
  CAF_CHECK_EQUAL(lone(trace_a), "<none>");
  CAF_CHECK_EQUAL(span_rows(trace_a), 1);
  same(trace_a);
  std::string other = "ffffffffffffffffffffffffffffffff";
  post(document(other, "1111111111111111", "", 1700000000100), 2);
  route({route_span(other, "2222222222222222", "1111111111111111")}, 3);
  CAF_CHECK_EQUAL(lone(other), "<none>");
  CAF_CHECK_EQUAL(span_rows(other), 2);
  same(other);
}

// SQLite gives a new row the largest rowid + 1: once the last trace made is
// dropped, the next new trace has the rowid the last insert had. The store
// still knows it made the row (write_statements.hpp, trace_row): the span
// stays in the row as any new trace's, counted once.
CAF_TEST(a new trace in the rowid of a dropped one reads the same) {
  traces::retention short_lived;
  short_lived.max_age = std::chrono::milliseconds{10};
  store.reset();
  store = traces::trace_store::open(path, short_lived, error);
  CAF_REQUIRE(store != nullptr);
  CAF_REQUIRE_EQUAL(store->save_spans({route_span(trace_a, "4444444444444444", "")}, 1), "");
  CAF_CHECK_EQUAL(store->prune(1000), 1u);
  std::string other = "ffffffffffffffffffffffffffffffff";
  route({route_span(other, "5555555555555555", "")}, 1000);
  CAF_CHECK_EQUAL(span_rows(other), 0);
  CAF_CHECK_EQUAL(lone(other), "5555555555555555");
  same(other);
}

// Only a damaged file holds both (a write to a trace moves its lone span
// first): the lone span is still read in span id order.
CAF_TEST(a lone span is read in span id order among spans rows) {
  for (auto& id : {"1111111111111111", "3333333333333333", "5555555555555555"})
    CAF_REQUIRE_EQUAL(store->save(document(trace_a, id, id[0] == '1' ? "" : "1111111111111111",
                                           1700000000100),
                                  1),
                      "");
  auto packed = traces::pack_run_span(route_span(trace_a, "x", "1111111111111111"));
  for (auto* id : {"0000000000000000", "2222222222222222", "9999999999999999"}) {
    statement q{db, "UPDATE traces SET lone_span_id=?, lone_span=? WHERE id_text=?"};
    q.bind(1, std::string_view{id}).bind(2, packed).bind(3, std::string_view{trace_a});
    CAF_REQUIRE(q.step() == SQLITE_DONE);
    auto loaded = parse_json(store->load(trace_a).value_or("{}"));
    std::vector<std::string> order;
    for (auto& [key, v] : loaded.as_object().at("spans").as_object())
      order.emplace_back(key);
    CAF_REQUIRE_EQUAL(order.size(), 4u);
    CAF_CHECK(std::is_sorted(order.begin(), order.end()));
    CAF_CHECK(std::find(order.begin(), order.end(), id) != order.end());
  }
}

CAF_TEST_FIXTURE_SCOPE_END()

// A layout 2 file (its schema, and the rows its statements made) is moved
// to layout 3 at open, at once, and reads as a store given the same
// documents and spans through the API.
CAF_TEST(a store of layout 2 is moved to layout 3 at open and reads the same) {
  auto dir = std::filesystem::temp_directory_path()
             / ("actor-host-layout2-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto path = (dir / "traces.sqlite").string();
  std::string error;
  auto expected = traces::trace_store::open(":memory:", {}, error);
  CAF_REQUIRE(expected != nullptr);
  sqlite3* db = nullptr;
  CAF_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CAF_REQUIRE(exec(db, traces::detail::layout_2_sql));
  // Layout 2's statements (trace_store.cpp before layout 3).
  auto put = [&](const std::string& trace, const char* name, std::int64_t now,
                 std::int64_t bytes, const std::string& span_id, bool ended,
                 const std::string& stored) {
    statement t{db, "INSERT INTO traces(id_text, display_name, start_time, end_time, "
                    "has_root, updated_ms, bytes) VALUES(?,?,?,?,?,?,?) "
                    "ON CONFLICT(id_text) DO UPDATE SET "
                    "display_name=COALESCE(excluded.display_name, display_name), "
                    "start_time=COALESCE(excluded.start_time, start_time), "
                    "end_time=COALESCE(excluded.end_time, end_time), "
                    "has_root=MAX(has_root, excluded.has_root), "
                    "updated_ms=excluded.updated_ms, bytes=bytes+excluded.bytes"};
    t.bind(1, trace);
    if (name)
      t.bind(2, std::string_view{name}).bind(3, std::string_view{"1700000000000"})
        .bind(4, std::string_view{"1700000000100"});
    else
      t.bind_null(2).bind_null(3).bind_null(4);
    t.bind(5, std::int64_t{name != nullptr}).bind(6, now).bind(7, bytes);
    CAF_REQUIRE(t.step() == SQLITE_DONE);
    statement s{db, "INSERT INTO spans(trace, span_id, ended, json) "
                    "SELECT id, ?, ?, ? FROM traces WHERE id_text=?"};
    s.bind(1, span_id).bind(2, std::int64_t{ended}).bind(3, stored).bind(4, trace);
    CAF_REQUIRE(s.step() == SQLITE_DONE);
  };
  auto post = [&](const std::string& trace, const std::string& id, const std::string& parent,
                  std::int64_t end, std::int64_t now) {
    auto doc = document(trace, id, parent, end);
    CAF_REQUIRE_EQUAL(expected->save(doc, now), "");
    auto stored = boost::json::serialize(parse_json(doc).as_object().at("spans").as_object().at(id));
    put(trace, parent.empty() ? "flow" : nullptr, now, static_cast<std::int64_t>(stored.size()),
        id, end > 0, stored);
  };
  auto route = [&](const traces::run_span& s, std::int64_t now) {
    CAF_REQUIRE_EQUAL(expected->save_spans({s}, now), "");
    put(s.trace_id, s.parent_span_id.empty() ? "actor-host \"rt\"" : nullptr, now,
        static_cast<std::int64_t>(traces::span_json_size(s)), s.span_id, s.end_ms > 0,
        traces::pack_run_span(s));
  };
  std::mt19937_64 rng{3};
  std::vector<std::string> ids;
  std::int64_t now = 1000;
  for (int i = 0; i < 120; ++i) {
    auto id = random_trace_id(rng);
    ids.push_back(id);
    if (i % 4 == 0) { // a route span alone: a `spans` row in layout 2
      route(route_span(id, id.substr(16), ""), ++now);
      continue;
    }
    post(id, id.substr(0, 16), "", 1700000000100, ++now);
    route(route_span(id, id.substr(16), id.substr(0, 16)), ++now);
    if (i % 5 == 0)
      post(id, id.substr(8, 16), id.substr(0, 16), 0, ++now);
  }
  sqlite3_close_v2(db);
  db = nullptr;

  std::vector<std::string> notes;
  auto store = traces::trace_store::open(path, {}, error,
                                         [&](const std::string& n) { notes.push_back(n); });
  CAF_REQUIRE_EQUAL(error, "");
  CAF_REQUIRE(store != nullptr);
  CAF_REQUIRE_EQUAL(notes.size(), 1u);
  CAF_CHECK(contains(notes[0], "moved " + path + " to trace store layout 3"));
  CAF_CHECK_EQUAL(store->trace_count(), 120u);
  CAF_CHECK_EQUAL(store->stored_bytes(), expected->stored_bytes());
  for (auto& id : ids)
    CAF_CHECK_EQUAL(store->load(id).value_or("<none>"), expected->load(id).value_or("<expected>"));
  CAF_CHECK_EQUAL(store->list(1000, 0), expected->list(1000, 0));
  CAF_CHECK_EQUAL(store->list(9, 20), expected->list(9, 20));
  // Written to after: into a trace whose lone route span layout 2 kept as a
  // `spans` row, and a new trace, as into a store made in layout 3.
  auto more = route_span(ids[0], "7777777777777777", ids[0].substr(16));
  auto fresh = route_span(random_trace_id(rng), "8888888888888888", "");
  CAF_CHECK_EQUAL(store->save_spans({more, fresh}, 5000), "");
  CAF_CHECK_EQUAL(expected->save_spans({more, fresh}, 5000), "");
  CAF_CHECK_EQUAL(store->load(ids[0]).value_or("<a>"), expected->load(ids[0]).value_or("<b>"));
  CAF_CHECK_EQUAL(store->load(fresh.trace_id).value_or("<a>"),
                  expected->load(fresh.trace_id).value_or("<b>"));
  CAF_CHECK_EQUAL(store->list(1000, 0), expected->list(1000, 0));
  store.reset();
  notes.clear();
  store = traces::trace_store::open(path, {}, error,
                                    [&](const std::string& n) { notes.push_back(n); });
  CAF_REQUIRE(store != nullptr);
  CAF_CHECK(notes.empty());
  CAF_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  CAF_CHECK_EQUAL(single_int(db, "PRAGMA user_version"), 3);
  sqlite3_close_v2(db);
  store.reset();
  std::filesystem::remove_all(dir);
}
