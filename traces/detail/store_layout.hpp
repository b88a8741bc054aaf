#pragma once

// The trace store's tables on disk (store_layout.cpp; private to traces/,
// the tests and the benches that make store files). Layout 3, written since
// trace-lean: layout 2 and a trace's lone route span in its own row
// (store_layout.cpp). Layout 2: spans are keyed by their trace's rowid,
// which the traces table assigns in insertion order, so a new trace's spans
// are appended whatever its id looks like. Layout 1 keyed them by the trace id's text: with the
// random ids real Genkit runtimes make, every span landed on a random leaf
// of `spans` (~84 us per stored span against ~9 us with counted ids;
// bench/runs/2026-12-07-trace-cost2.md).

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace actor_host::traces::detail {

/// PRAGMA user_version of a store in the current layout. Layout 1 files
/// have 0 (they never set it), layout 2 files 2.
inline constexpr std::int64_t layout_version = 3;

/// Layout 1 as every actor-host before layout 2 created it (the text of
/// trace_store.cpp's schema up to d9e2098, its pragmas included): kept so
/// that tests and benches can make such a file and open it with this one.
inline constexpr const char* layout_1_sql = R"sql(
PRAGMA page_size=16384;
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
PRAGMA mmap_size=268435456;
PRAGMA journal_size_limit=67108864;
CREATE TABLE IF NOT EXISTS traces(
  trace_id TEXT PRIMARY KEY,
  display_name TEXT,
  start_time TEXT,
  end_time TEXT,
  has_root INTEGER NOT NULL DEFAULT 0,
  updated_ms INTEGER NOT NULL,
  bytes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS traces_by_update ON traces(updated_ms);
CREATE TABLE IF NOT EXISTS spans(
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  ended INTEGER NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY(trace_id, span_id)) WITHOUT ROWID;
)sql";

/// Layout 2 as actor-host created it from 60eb6f1 until layout 3 (the
/// tables and indexes of store_layout.cpp then, after trace_store.cpp's
/// pragmas): kept, as layout_1_sql, to make such files in tests and benches.
inline constexpr const char* layout_2_sql = R"sql(
PRAGMA page_size=16384;
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
PRAGMA mmap_size=268435456;
PRAGMA journal_size_limit=67108864;
CREATE TABLE traces(
  id INTEGER PRIMARY KEY,
  id_text TEXT NOT NULL,
  display_name TEXT,
  start_time TEXT,
  end_time TEXT,
  has_root INTEGER NOT NULL DEFAULT 0,
  updated_ms INTEGER NOT NULL,
  bytes INTEGER NOT NULL DEFAULT 0);
CREATE TABLE spans(
  trace INTEGER NOT NULL,
  span_id TEXT NOT NULL,
  ended INTEGER NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY(trace, span_id)) WITHOUT ROWID;
CREATE UNIQUE INDEX traces_by_id ON traces(id_text);
CREATE INDEX traces_by_update ON traces(updated_ms);
PRAGMA user_version=2;
)sql";

/// What opening a store tells a person about (a migration, before it
/// starts and once it is done): the caller logs it.
using layout_note = std::function<void(const std::string&)>;

/// Makes the tables of layout 3 in a new file, migrates a layout 1 file
/// (one transaction: all of it or nothing, `note` told before and after)
/// or a layout 2 file (two columns added: `note` told after), or checks
/// that a file is in layout 3. "" or why the file cannot be
/// used as a trace store; `path` names it in that text.
std::string prepare_layout(sqlite3* db, const std::string& path, const layout_note& note);

} // namespace actor_host::traces::detail
