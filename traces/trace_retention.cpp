// The store's size: what a trace and the whole file hold, the cap a new
// write is checked against, and retention by age and size (trace_store.hpp).

#include "traces/trace_store.hpp"

#include "traces/detail/sqlite_statement.hpp"

#include <sqlite3.h>

#include <string>
#include <vector>

namespace actor_host::traces {

using detail::exec;
using detail::statement;
using detail::stored_bytes_sql;

std::string trace_store::over_size(const std::string& trace_id, std::size_t adding) {
  // The document's text bounds what it adds (a span it replaces counts twice
  // here: the check errs on the safe side).
  auto sql = "SELECT " + std::string{stored_bytes_sql} + " FROM traces WHERE id_text=?";
  statement q{db_, sql.c_str()};
  std::uint64_t held = 0;
  if (q && q.bind(1, trace_id).step() == SQLITE_ROW)
    held = static_cast<std::uint64_t>(q.int64(0));
  if (held + adding <= max_trace_bytes)
    return {};
  return "trace " + trace_id + " would keep " + std::to_string(held + adding)
         + " bytes, more than a trace may (" + std::to_string(max_trace_bytes) + ")";
}

std::size_t trace_store::prune(std::int64_t now_ms) {
  std::vector<std::int64_t> drop; // trace rows
  if (retention_.max_age.count() > 0) {
    statement old{db_, "SELECT id FROM traces WHERE updated_ms < ?"};
    if (old) {
      old.bind(1, now_ms - static_cast<std::int64_t>(retention_.max_age.count()));
      while (old.step() == SQLITE_ROW)
        drop.push_back(old.int64(0));
    }
  }
  if (retention_.max_bytes > 0) {
    // Newest first: keep while the running total fits, drop the rest.
    auto sql = "SELECT id, " + std::string{stored_bytes_sql}
               + " FROM traces ORDER BY updated_ms DESC, id_text";
    statement all{db_, sql.c_str()};
    std::uint64_t kept = 0;
    if (all) {
      while (all.step() == SQLITE_ROW) {
        auto b = static_cast<std::uint64_t>(all.int64(1));
        if (kept + b > retention_.max_bytes)
          drop.push_back(all.int64(0));
        else
          kept += b;
      }
    }
  }
  if (drop.empty() || !exec(db_, "BEGIN IMMEDIATE"))
    return 0;
  statement del_spans{db_, "DELETE FROM spans WHERE trace=?"};
  statement del_trace{db_, "DELETE FROM traces WHERE id=?"};
  std::size_t n = 0;
  for (auto id : drop) {
    del_spans.bind(1, id).step();
    del_spans.reset();
    del_trace.bind(1, id).step();
    n += static_cast<std::size_t>(sqlite3_changes(db_));
    del_trace.reset();
  }
  exec(db_, "COMMIT");
  return n;
}

std::size_t trace_store::trace_count() {
  statement q{db_, "SELECT COUNT(*) FROM traces"};
  return q && q.step() == SQLITE_ROW ? static_cast<std::size_t>(q.int64(0)) : 0;
}

std::uint64_t trace_store::stored_bytes() {
  auto sql = "SELECT COALESCE(SUM(" + std::string{stored_bytes_sql} + "),0) FROM traces";
  statement q{db_, sql.c_str()};
  return q && q.step() == SQLITE_ROW ? static_cast<std::uint64_t>(q.int64(0)) : 0;
}

} // namespace actor_host::traces
