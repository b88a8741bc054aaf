#pragma once

// Private to traces/: the statements of the store's running size and its
// retention (trace_retention.cpp), prepared once per connection.

#include "traces/detail/sqlite_statement.hpp"
#include "traces/trace_store.hpp"

#include <string>

namespace actor_host::traces {

struct trace_store::retention_statements {
  explicit retention_statements(sqlite3* db)
    : data_version{db, "PRAGMA data_version"},
      sum{db, with_stored("SELECT COALESCE(SUM(", "),0) FROM traces").c_str()},
      // traces_by_update holds (updated_ms, rowid): this walks it in order,
      // reading the rows it passes, and stops where the caller does (no
      // sort, no scan of the rest).
      oldest{db, with_stored("SELECT id, ", " FROM traces ORDER BY updated_ms, id").c_str()},
      older_than{db, with_stored("SELECT id, ", " FROM traces WHERE updated_ms < ?").c_str()},
      // One trace's size, by its row (write_doc's after, fit_size's look
      // at the traces a batch wrote).
      of_row{db, with_stored("SELECT ", " FROM traces WHERE id=?").c_str()},
      del_spans{db, "DELETE FROM spans WHERE trace=?"},
      del_trace{db, "DELETE FROM traces WHERE id=?"} {
  }
  explicit operator bool() const {
    return data_version && sum && oldest && older_than && of_row && del_spans && del_trace;
  }
  static std::string with_stored(const char* before, const char* after) {
    return before + std::string{detail::stored_bytes_sql} + after;
  }
  detail::statement data_version, sum, oldest, older_than, of_row, del_spans, del_trace;
};

} // namespace actor_host::traces
