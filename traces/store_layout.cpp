#include "traces/detail/store_layout.hpp"

#include "traces/detail/sqlite_statement.hpp"

#include <chrono>
#include <cstdio>

namespace actor_host::traces::detail {

namespace {

// The tables (layout 3). A trace's `id` is its rowid (an alias, so VACUUM keeps
// it: spans refer to it); without AUTOINCREMENT SQLite gives a new row the
// largest id + 1, so new traces and their spans sort last. Its text id
// (`id_text`) is a unique index: one random insert per new trace, ~45 bytes
// an entry, where layout 1 made a random insert into `spans` (rows of
// ~100-640 bytes) per span and one into the traces' own key per trace.
// `id_text`, not layout 1's `trace_id`: an older actor-host given this file
// then fails every statement that names it (no listing, no store, and no
// retention deleting trace rows without their spans) instead of half working.
// Layout 3 added `lone_span_id`/`lone_span`: a trace's first span, when it
// made the trace and had ended, kept in the trace's row rather than as a
// `spans` row (trace_store.cpp, write_span): with the fake runtime, and any
// runtime that exports no spans here, every run's trace is the manager's
// route span alone, and its `spans` row was a B-tree insert and a statement
// of its own per call (bench/runs/2026-12-07-trace-lean.md). The next write
// to the trace moves it to `spans` first, so a trace's spans are in one
// place as soon as it has two.
constexpr const char* tables_sql = R"sql(
CREATE TABLE traces(
  id INTEGER PRIMARY KEY,
  id_text TEXT NOT NULL,
  display_name TEXT,
  start_time TEXT,
  end_time TEXT,
  has_root INTEGER NOT NULL DEFAULT 0,
  updated_ms INTEGER NOT NULL,
  bytes INTEGER NOT NULL DEFAULT 0,
  lone_span_id TEXT,
  lone_span TEXT);
CREATE TABLE spans(
  trace INTEGER NOT NULL,
  span_id TEXT NOT NULL,
  ended INTEGER NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY(trace, span_id)) WITHOUT ROWID;
)sql";

// After the rows in a migration: an index made over a full table is built
// from a sort, not by one random insert per row.
constexpr const char* indexes_sql = R"sql(
CREATE UNIQUE INDEX traces_by_id ON traces(id_text);
CREATE INDEX traces_by_update ON traces(updated_ms);
PRAGMA user_version=3;
)sql";

// Layout 2 to 3: two columns, NULL in every row (SQLite changes the schema
// alone, no row is rewritten: instant whatever the file's size).
constexpr const char* upgrade_2_sql = R"sql(
ALTER TABLE traces ADD COLUMN lone_span_id TEXT;
ALTER TABLE traces ADD COLUMN lone_span TEXT;
PRAGMA user_version=3;
)sql";

constexpr std::string_view traces_columns_3 =
  "id,id_text,display_name,start_time,end_time,has_root,updated_ms,bytes,lone_span_id,lone_span";
constexpr std::string_view traces_columns_2 =
  "id,id_text,display_name,start_time,end_time,has_root,updated_ms,bytes";
constexpr std::string_view spans_columns_2 = "trace,span_id,ended,json";
constexpr std::string_view traces_columns_1 =
  "trace_id,display_name,start_time,end_time,has_root,updated_ms,bytes";
constexpr std::string_view spans_columns_1 = "trace_id,span_id,ended,json";

// Layout 1 to 3 in the open transaction (layout 3's tables: a trace's lone
// span columns stay NULL). The traces keep their rowids (in
// layout 1 an implicit rowid in insertion order, now `id`); the spans are
// copied trace by trace, in key order, so both new tables are appended to.
constexpr const char* migrate_sql = R"sql(
DROP INDEX IF EXISTS traces_by_update;
ALTER TABLE traces RENAME TO traces_1;
ALTER TABLE spans RENAME TO spans_1;
)sql";
constexpr const char* copy_sql = R"sql(
INSERT INTO traces(id, id_text, display_name, start_time, end_time, has_root, updated_ms, bytes)
  SELECT rowid, trace_id, display_name, start_time, end_time, has_root, updated_ms, bytes
  FROM traces_1 ORDER BY rowid;
INSERT INTO spans(trace, span_id, ended, json)
  SELECT t.id, s.span_id, s.ended, s.json
  FROM traces t JOIN spans_1 s ON s.trace_id = t.id_text ORDER BY t.id, s.span_id;
)sql";
constexpr const char* drop_1_sql = "DROP TABLE spans_1; DROP TABLE traces_1;";

// A table's column names, comma-separated ("" when there is no such table).
std::string columns(sqlite3* db, const char* table) {
  statement q{db, "SELECT name FROM pragma_table_info(?) ORDER BY cid"};
  std::string out;
  if (!q)
    return out;
  q.bind(1, std::string_view{table});
  while (q.step() == SQLITE_ROW)
    out += (out.empty() ? "" : ",") + q.text(0);
  return out;
}

std::int64_t single_int(sqlite3* db, const char* sql) {
  statement q{db, sql};
  return q && q.step() == SQLITE_ROW ? q.int64(0) : -1;
}

std::string failed(sqlite3* db, const std::string& what) {
  return what + ": " + sqlite3_errmsg(db);
}

// The layout a file holds, looked at inside a transaction.
enum class found { empty, layout_1, layout_2, current };

std::string look(sqlite3* db, const std::string& path, found& out) {
  auto version = single_int(db, "PRAGMA user_version");
  auto traces = columns(db, "traces");
  auto spans = columns(db, "spans");
  if (version == layout_version) {
    if (traces != traces_columns_3 || spans != spans_columns_2)
      return path + " is not a trace store: its tables are not those of layout "
             + std::to_string(layout_version);
    out = found::current;
    return {};
  }
  if (version == 2) {
    if (traces != traces_columns_2 || spans != spans_columns_2)
      return path + " is not a trace store: its tables are not those of layout 2";
    out = found::layout_2;
    return {};
  }
  if (version > layout_version)
    return path + " was written by a newer actor-host (trace store layout "
           + std::to_string(version) + "; this one knows " + std::to_string(layout_version) + ")";
  if (version != 0)
    return path + " is not a trace store (user_version " + std::to_string(version) + ")";
  if (traces == traces_columns_1 && spans == spans_columns_1) {
    out = found::layout_1;
    return {};
  }
  if (!traces.empty() || !spans.empty())
    return path + " is not a trace store: its tables are not those of any layout this "
                  "actor-host knows";
  // A new file, or one that holds something else: never add our tables to
  // another program's database.
  if (single_int(db, "SELECT COUNT(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite!_%' ESCAPE '!'")
      != 0)
    return path + " is not a trace store: it is a database with other tables";
  out = found::empty;
  return {};
}

std::string commit_or_rollback(sqlite3* db, const std::string& path, std::string error) {
  if (error.empty() && !exec(db, "COMMIT"))
    error = failed(db, "cannot set up " + path);
  if (!error.empty())
    exec(db, "ROLLBACK");
  return error;
}

std::string journal_mode(sqlite3* db, const char* sql) {
  statement q{db, sql};
  return q && q.step() == SQLITE_ROW ? q.text(0) : std::string{};
}

// Layout 1 to 3. With a rollback journal rather than the WAL for the time
// of it: the new tables' pages go past the file's end, which a rollback
// journal need not save, where the WAL writes every page twice (the log,
// then the checkpoint); and the VACUUM after it, possible only then, gives
// back the old tables' pages (the file stayed twice its size) and a file of
// 4 KiB pages the 16 KiB of new files. 256 MiB: 8.1 s in WAL mode, 5.2 s
// + 2.5 s of VACUUM so (bench/runs/2026-12-07-trace-rowid.md). Another
// connection to the file (another manager) keeps it in WAL mode: then the
// migration runs there, without the VACUUM.
std::string migrate(sqlite3* db, const std::string& path, const layout_note& note) {
  auto started = std::chrono::steady_clock::now();
  bool rollback_journal = journal_mode(db, "PRAGMA journal_mode=DELETE") == "delete";
  // The one time this connection writes without the WAL: every commit
  // synced, as a rollback journal needs to survive a power cut.
  exec(db, "PRAGMA synchronous=FULL");
  std::string error;
  if (!exec(db, rollback_journal ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE"))
    error = failed(db, "cannot migrate " + path);
  found now = found::layout_1;
  if (error.empty())
    error = look(db, path, now); // another process may have migrated it meanwhile
  std::int64_t traces = 0, stray = 0;
  if (error.empty() && now == found::empty && (!exec(db, tables_sql) || !exec(db, indexes_sql)))
    error = failed(db, "cannot set up " + path);
  if (error.empty() && now == found::layout_2 && !exec(db, upgrade_2_sql))
    error = failed(db, "cannot migrate " + path);
  if (error.empty() && now == found::layout_1) {
    traces = single_int(db, "SELECT COUNT(*) FROM traces");
    auto mib =
      single_int(db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")
      >> 20;
    if (note)
      note("migrating " + path + " (" + std::to_string(traces) + " traces, "
           + std::to_string(mib) + " MiB) to the layout that keys spans by their trace's row, "
           "in one transaction (stopped before its end, the file stays as it was); the trace "
           "store opens once it is done");
    if (!exec(db, migrate_sql) || !exec(db, tables_sql) || !exec(db, copy_sql))
      error = failed(db, "cannot migrate " + path);
    // Spans no trace row names: layout 1 wrote both in one transaction and
    // deleted both in one, so only a damaged or foreign file has them, and
    // no reader could reach them (every read starts at the trace's row).
    if (error.empty())
      stray = single_int(db, "SELECT COUNT(*) FROM spans_1 WHERE trace_id NOT IN "
                             "(SELECT trace_id FROM traces_1)");
    if (error.empty() && (!exec(db, drop_1_sql) || !exec(db, indexes_sql)))
      error = failed(db, "cannot migrate " + path);
  }
  error = commit_or_rollback(db, path, std::move(error));
  std::string compacted;
  if (error.empty() && now == found::layout_1 && rollback_journal)
    compacted = exec(db, "VACUUM") ? "compacted" : failed(db, "not compacted");
  exec(db, "PRAGMA synchronous=NORMAL");
  if (rollback_journal && journal_mode(db, "PRAGMA journal_mode=WAL") != "wal" && error.empty())
    error = failed(db, "cannot set up " + path + " (back to WAL mode)");
  if (!error.empty() || now != found::layout_1 || !note)
    return error;
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", took.count());
  auto text = "migrated " + path + " in " + seconds + " s (" + std::to_string(traces) + " traces";
  text += compacted.empty() ? std::string{"; its old tables' space is kept as free pages"}
                            : "; " + compacted;
  text += ")";
  if (stray > 0)
    text += "; " + std::to_string(stray)
            + " span(s) that belonged to no stored trace (unreachable before) were left out";
  note(text);
  return {};
}

} // namespace

std::string prepare_layout(sqlite3* db, const std::string& path, const layout_note& note) {
  // Looked at and changed under the write lock: two managers opening a new
  // (or old) file at once make (or migrate) it once.
  if (!exec(db, "BEGIN IMMEDIATE"))
    return failed(db, "cannot set up " + path);
  found what = found::empty;
  auto error = look(db, path, what);
  if (error.empty() && what == found::layout_1) {
    exec(db, "ROLLBACK"); // the migration takes a lock of its own (migrate)
    return migrate(db, path, note);
  }
  if (error.empty() && what == found::empty && (!exec(db, tables_sql) || !exec(db, indexes_sql)))
    error = failed(db, "cannot set up " + path);
  if (error.empty() && what == found::layout_2 && !exec(db, upgrade_2_sql))
    error = failed(db, "cannot migrate " + path);
  error = commit_or_rollback(db, path, std::move(error));
  if (error.empty() && what == found::layout_2 && note)
    note("moved " + path + " to trace store layout 3 (a trace's lone route span kept in its "
         "row; no row rewritten)");
  return error;
}

} // namespace actor_host::traces::detail
