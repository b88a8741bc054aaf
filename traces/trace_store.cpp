#include "traces/trace_store.hpp"

#include "traces/span_record.hpp"
#include "traces/trace_data.hpp"
#include "traces/trace_filter.hpp"

#include "traces/detail/new_trace_rows.hpp"
#include "traces/detail/retention_statements.hpp"
#include "traces/detail/sqlite_statement.hpp"
#include "traces/detail/store_layout.hpp"
#include "traces/detail/write_statements.hpp"

#include <boost/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace actor_host::traces {

namespace json = boost::json;
using detail::exec;
using detail::statement;

namespace {

// page_size: 16 KiB pages for a new file (SQLite keeps an existing file's
// size: stores made before keep 4 KiB). Route spans are appended, and a
// commit writes each page it dirtied as one WAL frame, one pwrite, then
// copies it back at the checkpoint: with 4 KiB pages those system calls
// were most of the keeper's time; 16 KiB took a quarter to a third off its
// CPU per span (bench/runs/2026-12-07-trace-cost2.md). Larger pages cost a
// store with random trace ids more (each insert dirties a whole page).
// The WAL is checkpointed at 32 MiB whatever the page size (wal_size_pragma).
// The tables: detail/store_layout.hpp.
constexpr const char* pragmas_sql = R"sql(
PRAGMA page_size=16384;
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
PRAGMA mmap_size=268435456;
PRAGMA journal_size_limit=67108864;
)sql";

// The WAL is checkpointed once it holds 32 MiB, in pages of the file's size.
std::string wal_size_pragma(sqlite3* db) {
  statement q{db, "PRAGMA page_size"};
  std::int64_t page = q && q.step() == SQLITE_ROW ? q.int64(0) : 4096;
  return "PRAGMA wal_autocheckpoint=" + std::to_string((32 << 20) / std::max<std::int64_t>(page, 512));
}

// What a stored span counts for its trace: the JSON load() gives for it.
std::int64_t counted_size(std::string_view stored, std::string_view trace_id,
                          std::string_view span_id) {
  run_span s;
  if (stored.empty() || stored[0] != span_record_mark || !unpack_run_span(stored, s))
    return static_cast<std::int64_t>(stored.size());
  s.trace_id.assign(trace_id); // not packed: the row's key holds them
  s.span_id.assign(span_id);
  return static_cast<std::int64_t>(span_json_size(s));
}

bool ended(const json::object& span) {
  auto& e = span.at("endTime");
  return e.is_double() ? e.as_double() > 0 : (e.is_int64() ? e.as_int64() > 0 : e.as_uint64() > 0);
}

} // namespace

std::string default_store_path(const std::string& project_root) {
  return project_root + "/.genkit/actor-host/traces.sqlite";
}

std::string make_store_folder(const std::string& path) {
  namespace fs = std::filesystem;
  auto dir = fs::path{path}.parent_path();
  std::error_code ec;
  if (dir.empty() || fs::is_directory(dir, ec))
    return {};
  fs::create_directories(dir, ec);
  if (!ec)
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  return ec ? "cannot make " + dir.string() + ": " + ec.message() : std::string{};
}

trace_store::trace_store(sqlite3* db, retention r)
  : db_(db), retention_(r), stmts_(std::make_unique<statements>(db)),
    new_rows_(std::make_unique<detail::new_trace_rows>(db)),
    kept_(std::make_unique<retention_statements>(db)) {
}

trace_store::~trace_store() {
  stmts_.reset(); // finalized before the database closes
  new_rows_.reset();
  kept_.reset();
  sqlite3_close_v2(db_);
}

std::unique_ptr<trace_store> trace_store::open(const std::string& path, retention r,
                                               std::string& error,
                                               const std::function<void(const std::string&)>& note) {
  // SQLite's memory statistics take a global mutex on every allocation of
  // every connection; nothing here reads them. Only possible before SQLite
  // initializes (a later call fails harmlessly, leaving them on).
  static const bool quiet_memstatus [[maybe_unused]] =
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  sqlite3* db = nullptr;
  // NOMUTEX: one owner uses a store at a time (the keeper, or the reader
  // with a connection of its own), so SQLite's lock around every call on
  // the connection is not needed: with the statistics' mutex it was a tenth
  // of the keeper's time (bench/runs/2026-12-07-trace-cost.md).
  auto rc = sqlite3_open_v2(path.c_str(), &db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW
                              | SQLITE_OPEN_NOMUTEX,
                            nullptr);
  if (rc != SQLITE_OK) {
    error = "cannot open " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 2000);
  if (!exec(db, pragmas_sql)) {
    error = "cannot set up " + path + ": " + sqlite3_errmsg(db);
    sqlite3_close_v2(db);
    return nullptr;
  }
  if (error = detail::prepare_layout(db, path, note); !error.empty()) {
    sqlite3_close_v2(db);
    return nullptr;
  }
  if (!exec(db, wal_size_pragma(db).c_str())) {
    error = "cannot set up " + path + ": " + sqlite3_errmsg(db);
    sqlite3_close_v2(db);
    return nullptr;
  }
  std::unique_ptr<trace_store> store{new trace_store(db, r)};
  if (!*store->stmts_ || !*store->new_rows_ || !*store->kept_) {
    error = "cannot set up " + path + ": " + sqlite3_errmsg(db);
    return nullptr;
  }
  return store;
}

bool trace_store::write_doc(const json::object& o, const std::string& trace_id,
                            std::int64_t now_ms, std::string* root_span) {
  if (!*stmts_)
    return false;
  auto& put_span = stmts_->put_span;
  auto& old_span = stmts_->old_span;
  auto& put_trace = stmts_->put_trace;
  auto& spans = o.at("spans").as_object();
  bool has_root = false;
  for (auto& [key, v] : spans)
    if (!v.as_object().contains("parentSpanId")) {
      has_root = true;
      if (root_span)
        root_span->assign(key.data(), key.size());
    }
  // The trace's row first (its id keys the spans), its bytes once they are in.
  put_trace.bind(1, trace_id);
  auto text_or_null = [&](int i, const char* k) {
    if (auto* x = o.if_contains(k))
      put_trace.bind(i, x->is_string() ? std::string{x->as_string()} : json::serialize(*x));
    else
      put_trace.bind_null(i);
  };
  text_or_null(2, "displayName");
  text_or_null(3, "startTime");
  text_or_null(4, "endTime");
  put_trace.bind(5, std::int64_t{has_root ? 1 : 0}).bind(6, now_ms).bind(7, std::int64_t{0});
  put_trace.bind_null(8).bind_null(9);
  // The trace's size before and after, for the store's running size: a
  // document replaces spans and row texts in ways counted_size and
  // COALESCE decide; two lookups of one row are exact whatever they did
  // (documents are the exporters' path, far fewer than route spans).
  auto before = statements::one(stmts_->stored_by_id_text, trace_id);
  auto trace_row = stmts_->trace_row(db_, trace_id);
  if (!trace_row || (trace_row->has_lone && !stmts_->spill(trace_row->id)))
    return false;
  auto row = trace_row->id;
  bool ok = true;
  std::int64_t added = 0;
  for (auto& [key, v] : spans) {
    if (!ok)
      break;
    auto& span = v.as_object();
    const bool is_ended = ended(span);
    auto text = json::serialize(v);
    auto size = static_cast<std::int64_t>(text.size());
    // The put below replaces a stored span unless an ended one would go back
    // to running: the count follows what is kept.
    old_span.bind(1, row).bind(2, std::string_view{key});
    if (old_span.step() == SQLITE_ROW) {
      auto old_size = counted_size(old_span.view(0), trace_id, std::string_view{key});
      added += old_span.int64(1) == 1 && !is_ended ? 0 : size - old_size;
    } else {
      added += size;
    }
    old_span.reset();
    put_span.bind(1, row).bind(2, std::string_view{key}).bind(3, is_ended ? 1 : 0);
    put_span.bind(4, std::move(text));
    ok = put_span.step() == SQLITE_DONE;
    put_span.reset();
  }
  if (ok && added != 0) {
    auto& add_bytes = stmts_->add_bytes;
    ok = add_bytes.bind(1, added).bind(2, row).step() == SQLITE_DONE;
    add_bytes.reset();
  }
  if (ok) {
    pending_ += statements::one(kept_->of_row, row) - before;
    touched_.push_back(row);
  }
  return ok;
}

bool trace_store::write_span(const run_span& span, std::int64_t now_ms) {
  auto& put_span = stmts_->put_span;
  auto& put_trace = stmts_->put_trace;
  const bool root = span.parent_span_id.empty();
  // Packed (span_record.hpp), counted as the JSON load() writes for it.
  pack_run_span(span, packed_);
  auto bytes = static_cast<std::int64_t>(span_json_size(span));
  // The texts are bound without SQLite's copy: `span`, packed_ and these
  // outlive both statements' steps, and each is reset (its bindings
  // cleared) before this returns.
  auto start = std::to_string(span.start_ms);
  auto end = std::to_string(span.end_ms);
  put_trace.bind_static(1, span.trace_id);
  if (root)
    put_trace.bind_static(2, span.name).bind_static(3, start).bind_static(4, end);
  else
    put_trace.bind_null(2).bind_null(3).bind_null(4);
  put_trace.bind(5, std::int64_t{root ? 1 : 0}).bind(6, now_ms).bind(7, bytes);
  // A new trace's first span goes in its row if it has ended (moved to
  // `spans` as an ended span's row when the trace gets more): with the fake
  // runtime every route span is such, and its `spans` row was a statement
  // and a B-tree insert of its own (bench/runs/2026-12-07-trace-lean.md).
  const bool may_be_lone = span.end_ms > 0;
  if (may_be_lone)
    put_trace.bind_static(8, span.span_id).bind_static(9, packed_);
  else
    put_trace.bind_null(8).bind_null(9);
  // The store's running size: put_trace adds `bytes` to the row's, and a
  // root replaces the row's texts, whose old length is looked up first
  // (a root that takes this path rather than new_trace_rows' is rare: the
  // tail of a batch, or a trace stored before).
  std::int64_t texts = 0;
  if (root)
    texts = static_cast<std::int64_t>(span.name.size() + start.size() + end.size())
            - statements::one(stmts_->row_texts, span.trace_id);
  auto row = stmts_->trace_row(db_, span.trace_id);
  if (!row)
    return false;
  pending_ += bytes + texts;
  touched_.push_back(row->id);
  if (row->made && may_be_lone)
    return true;
  if (row->has_lone && !stmts_->spill(row->id))
    return false;
  const std::int64_t is_ended = span.end_ms > 0;
  auto& add_span = stmts_->add_span;
  add_span.bind(1, row->id).bind_static(2, span.span_id).bind(3, is_ended);
  bool ok = add_span.bind_static(4, packed_).step() == SQLITE_DONE;
  add_span.reset();
  if (!ok || sqlite3_changes(db_) == 1)
    return ok;
  // Stored before (a retry, a span a document brought, the lone span just
  // spilled): put_trace added `bytes`, but the span replaces what was there,
  // or, running where the stored one has ended, is dropped. The trace counts
  // what it keeps (retention drops traces by that count).
  auto& old_span = stmts_->old_span;
  std::int64_t counted_twice = 0;
  if (old_span.bind(1, row->id).bind_static(2, span.span_id).step() == SQLITE_ROW)
    counted_twice = old_span.int64(1) == 1 && !is_ended
                      ? bytes
                      : counted_size(old_span.view(0), span.trace_id, span.span_id);
  old_span.reset();
  put_span.bind(1, row->id).bind_static(2, span.span_id).bind(3, is_ended);
  ok = put_span.bind_static(4, packed_).step() == SQLITE_DONE;
  put_span.reset();
  if (!ok)
    return false;
  auto& add_bytes = stmts_->add_bytes;
  ok = add_bytes.bind(1, -counted_twice).bind(2, row->id).step() == SQLITE_DONE;
  add_bytes.reset();
  pending_ -= counted_twice;
  return ok;
}

bool trace_store::write_spans(std::size_t n,
                              const std::function<const run_span&(std::size_t, run_span&)>& span,
                              std::int64_t now_ms) {
  auto& rows = *new_rows_;
  rows.clear(); // a batch that failed before may have left some
  // The spans held for rows of new traces, one by one: before a span that
  // takes the other path (the order of a trace's writes is kept) and at
  // the end (too few for a statement of rows).
  auto one_by_one = [&] {
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (!write_span(rows.span(k), now_ms))
        return false;
    rows.clear();
    return true;
  };
  for (std::size_t i = 0; i < n; ++i) {
    auto& s = span(i, rows.room());
    if (!detail::new_trace_rows::takes(s)) {
      if (!one_by_one() || !write_span(s, now_ms))
        return false;
      continue;
    }
    if (!rows.hold(s))
      continue;
    left_.clear();
    detail::new_trace_rows::made made;
    if (!rows.insert(now_ms, left_, made))
      return false;
    pending_ += made.bytes;
    for (auto id = made.first_id; id <= made.last_id; ++id)
      touched_.push_back(id);
    for (auto k : left_)
      if (!write_span(rows.span(k), now_ms))
        return false;
    rows.clear();
  }
  return one_by_one();
}

std::string trace_store::save_spans(const std::vector<run_span>& spans, std::int64_t now_ms) {
  if (spans.empty())
    return {};
  return in_span_batch([&] {
    return write_spans(spans.size(), [&](std::size_t i, run_span&) -> const run_span& {
      return spans[i];
    }, now_ms);
  }, now_ms);
}

std::string trace_store::save_spans(std::size_t n,
                                    const std::function<void(std::size_t, run_span&)>& fill,
                                    std::int64_t now_ms) {
  if (n == 0)
    return {};
  return in_span_batch([&] {
    return write_spans(n, [&](std::size_t i, run_span& room) -> const run_span& {
      fill(i, room);
      return room;
    }, now_ms);
  }, now_ms);
}

std::string trace_store::in_span_batch(const std::function<bool()>& write_all,
                                       std::int64_t now_ms) {
  if (!*stmts_)
    return std::string{"trace store: "} + sqlite3_errmsg(db_);
  // No spilling of dirty pages to the WAL before the commit: with random
  // trace ids a batch dirties hundreds of leaves of the trace id index,
  // more than SQLite's 2 MiB cache holds, and a spilled page dirtied again
  // was written twice. pwrite per span 0.69 -> 0.37 with random ids, the
  // same with counted ones (bench_trace_store, bench/runs/
  // 2026-12-07-trace-rowid.md). Only here: the pages a batch of route spans
  // dirties are bounded by its size, those of a prune are not (a larger
  // cache_size for all statements helped random ids as much but cost
  // counted ones a tenth more CPU per span).
  exec(db_, "PRAGMA cache_spill=OFF");
  if (!begin_write(now_ms)) {
    exec(db_, "PRAGMA cache_spill=ON");
    return std::string{"trace store busy: "} + sqlite3_errmsg(db_);
  }
  // The size limit inside the batch's transaction: the oldest traces go
  // as the new ones come, so the store never holds more than its limit and
  // one batch (the minute's prune let it grow by a minute of writes, then
  // read every trace to cut it back).
  auto error = commit_or_rollback(write_all() && fit_size());
  exec(db_, "PRAGMA cache_spill=ON");
  return error;
}

std::string trace_store::save(std::string_view text, std::int64_t now_ms,
                              std::string* saved_trace, std::string* root_span) {
  json::value doc;
  std::string error;
  if (!parse_trace_data(text, doc, error))
    return error;
  auto& o = doc.as_object();
  std::string trace_id{o.at("traceId").as_string()};
  if (auto err = over_size(trace_id, text.size()); !err.empty())
    return err;
  if (!begin_write(now_ms))
    return std::string{"trace store busy: "} + sqlite3_errmsg(db_);
  if (auto err = commit_or_rollback(write_doc(o, trace_id, now_ms, root_span) && fit_size());
      !err.empty())
    return err;
  if (saved_trace)
    *saved_trace = std::move(trace_id);
  return {};
}

std::vector<trace_store::saved> trace_store::save_each(const std::vector<std::string>& docs,
                                                       std::int64_t now_ms) {
  std::vector<saved> out(docs.size());
  std::vector<json::value> parsed(docs.size());
  bool any = false;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!parse_trace_data(docs[i], parsed[i], out[i].error))
      continue;
    out[i].error = over_size(std::string{parsed[i].as_object().at("traceId").as_string()},
                             docs[i].size());
    any = any || out[i].error.empty();
  }
  if (!any)
    return out;
  if (!begin_write(now_ms)) {
    std::string why = std::string{"trace store busy: "} + sqlite3_errmsg(db_);
    for (auto& o : out)
      if (o.error.empty())
        o.error = why;
    return out;
  }
  bool ok = true;
  for (std::size_t i = 0; ok && i < docs.size(); ++i) {
    if (!out[i].error.empty())
      continue;
    auto& o = parsed[i].as_object();
    out[i].trace_id = std::string{o.at("traceId").as_string()};
    ok = write_doc(o, out[i].trace_id, now_ms, &out[i].root_span);
  }
  if (auto err = commit_or_rollback(ok && fit_size()); !err.empty())
    for (std::size_t i = 0; i < docs.size(); ++i)
      if (out[i].error.empty()) {
        out[i] = {};
        out[i].error = err;
      }
  return out;
}

} // namespace actor_host::traces
