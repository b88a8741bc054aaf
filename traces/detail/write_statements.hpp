#pragma once

// Private to traces/: the statements of the store's per-run write path
// (trace_store.cpp), prepared once per connection.

#include "traces/detail/retention_statements.hpp"
#include "traces/detail/sqlite_statement.hpp"
#include "traces/trace_store.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <type_traits>

namespace actor_host::traces {

// Every route span and every exported document goes through these: preparing
// them once saves SQLite's parse and plan of each statement per run.
struct trace_store::statements {
  explicit statements(sqlite3* db)
    : // A span new to its trace (nearly every one): OR IGNORE leaves one
      // stored before to put_span, after its size is looked up.
      add_span{db, "INSERT OR IGNORE INTO spans(trace, span_id, ended, json) VALUES(?,?,?,?)"},
      put_span{db, "INSERT INTO spans(trace, span_id, ended, json) VALUES(?,?,?,?) "
                   "ON CONFLICT(trace, span_id) DO UPDATE SET ended=excluded.ended, "
                   "json=excluded.json WHERE NOT (spans.ended=1 AND excluded.ended=0)"},
      // What a span already stored holds: the trace's byte count changes by
      // the difference (a running size: summing the trace's spans again on
      // every write was quadratic in the trace's size).
      old_span{db, "SELECT json, ended FROM spans WHERE trace=? AND span_id=?"},
      // The trace's row, made or updated before its spans: its id keys them.
      // A new trace's row takes its lone span (?8, ?9; NULL: none); an
      // update leaves what the row has.
      put_trace{db, "INSERT INTO traces(id_text, display_name, start_time, end_time, "
                    "has_root, updated_ms, bytes, lone_span_id, lone_span) "
                    "VALUES(?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT(id_text) DO UPDATE SET "
                    "display_name=COALESCE(excluded.display_name, display_name), "
                    "start_time=COALESCE(excluded.start_time, start_time), "
                    "end_time=COALESCE(excluded.end_time, end_time), "
                    "has_root=MAX(has_root, excluded.has_root), "
                    "updated_ms=excluded.updated_ms, bytes=bytes+excluded.bytes"},
      find_trace{db, "SELECT id, lone_span_id IS NOT NULL FROM traces WHERE id_text=?"},
      // A trace's lone span into `spans`, as the row layout 2 wrote for it
      // (REPLACE: what layout 2's upsert did with an ended span), before
      // anything else is written to the trace.
      spill_lone{db, "INSERT OR REPLACE INTO spans(trace, span_id, ended, json) "
                     "SELECT id, lone_span_id, 1, lone_span FROM traces "
                     "WHERE id=? AND lone_span_id IS NOT NULL"},
      clear_lone{db, "UPDATE traces SET lone_span_id=NULL, lone_span=NULL WHERE id=?"},
      // A document's spans change its trace's byte count once they are in.
      add_bytes{db, "UPDATE traces SET bytes=bytes+? WHERE id=?"},
      // What a trace counts for retention before and after a document
      // changed it (the store's running size changes by the difference).
      stored_by_id_text{db, retention_statements::with_stored("SELECT ", " FROM traces "
                                                                          "WHERE id_text=?")
                              .c_str()},
      // The texts of a trace's row that a root route span's put_trace
      // replaces (stored_bytes_sql's part of them).
      row_texts{db, "SELECT LENGTH(CAST(COALESCE(display_name,'') AS BLOB)) + "
                    "LENGTH(CAST(COALESCE(start_time,'') AS BLOB)) + "
                    "LENGTH(CAST(COALESCE(end_time,'') AS BLOB)) FROM traces WHERE id_text=?"} {
  }
  explicit operator bool() const {
    return add_span && put_span && old_span && put_trace && find_trace && spill_lone && clear_lone
           && add_bytes && stored_by_id_text && row_texts;
  }
  struct row {
    std::int64_t id = 0;
    bool made = false;     // by this put_trace: a lone span bound went in
    bool has_lone = false; // it holds a lone span (not made here)
  };
  /// Steps put_trace (bound by the caller for `trace_id`): the trace's row
  /// id, or nothing. Not with RETURNING: SQLite gives an upsert with
  /// RETURNING a statement journal, a temporary file written 3 pages a
  /// statement (19 us per route span against 3.4 without, counted ids).
  std::optional<row> trace_row(sqlite3* db, std::string_view trace_id) {
    // 0 is no rowid SQLite gives a new row (the largest + 1, or a random
    // positive one past 2^63 - 1), so an insert always changes it and an
    // update never does: even a new row given the rowid of the last insert
    // (the last trace made, dropped since) is known as made.
    sqlite3_set_last_insert_rowid(db, 0);
    bool ok = put_trace.step() == SQLITE_DONE;
    put_trace.reset();
    if (!ok)
      return std::nullopt;
    // A new trace's row (every route span of a run without the runtime's
    // spans) is the last one inserted: no lookup.
    if (auto id = sqlite3_last_insert_rowid(db); id != 0)
      return row{id, true, false};
    // Updated: stored before.
    std::optional<row> r;
    if (find_trace.bind(1, trace_id).step() == SQLITE_ROW)
      r = row{find_trace.int64(0), false, find_trace.int64(1) != 0};
    find_trace.reset();
    return r;
  }
  /// The lone span of trace row `id` into `spans`; false on an error.
  bool spill(std::int64_t id) {
    bool ok = spill_lone.bind(1, id).step() == SQLITE_DONE;
    spill_lone.reset();
    ok = ok && clear_lone.bind(1, id).step() == SQLITE_DONE;
    clear_lone.reset();
    return ok;
  }
  /// A single integer `q` gives for `key` (bound as text or a row id), or 0 if none.
  template <class Key>
  static std::int64_t one(detail::statement& q, const Key& key) {
    if constexpr (std::is_same_v<Key, std::int64_t>)
      q.bind(1, key);
    else
      q.bind_static(1, key);
    auto n = q.step() == SQLITE_ROW ? q.int64(0) : 0;
    q.reset();
    return n;
  }
  detail::statement add_span, put_span, old_span, put_trace, find_trace, spill_lone, clear_lone, add_bytes;
  detail::statement stored_by_id_text, row_texts;
};

} // namespace actor_host::traces
