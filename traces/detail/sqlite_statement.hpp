#pragma once

// Private to traces/ (and the tests and benches that make store files): the
// SQLite statement helper its files share.

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace actor_host::traces::detail {

/// One prepared statement, finalized when it goes out of scope.
class statement {
public:
  statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      stmt_ = nullptr;
  }
  ~statement() {
    sqlite3_finalize(stmt_);
  }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  explicit operator bool() const {
    return stmt_ != nullptr;
  }
  statement& bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  /// bind() without SQLite's copy: `text` must stay as it is until the
  /// statement is reset (which clears the bindings). The route span path:
  /// a copy (a malloc, a memcpy, a free) per bound text, six a span.
  statement& bind_static(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    return *this;
  }
  statement& bind(int i, std::int64_t n) {
    sqlite3_bind_int64(stmt_, i, n);
    return *this;
  }
  statement& bind_null(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int step() {
    return sqlite3_step(stmt_);
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string{reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))}
             : std::string{};
  }
  /// The column's text, valid until the next step or reset.
  std::string_view view(int col) const {
    auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string_view{reinterpret_cast<const char*>(p),
                                static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))}
             : std::string_view{};
  }
  bool is_null(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
  }
  std::int64_t int64(int col) const {
    return sqlite3_column_int64(stmt_, col);
  }

private:
  sqlite3_stmt* stmt_ = nullptr;
};

inline bool exec(sqlite3* db, const char* sql) {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}


// Every byte a trace keeps: its spans (the running `bytes`) and the text of
// its own row. A document with no spans and a long displayName counted 0.
inline constexpr std::string_view stored_bytes_sql =
  "(bytes + LENGTH(CAST(COALESCE(display_name,'') AS BLOB)) + "
  "LENGTH(CAST(COALESCE(start_time,'') AS BLOB)) + LENGTH(CAST(COALESCE(end_time,'') AS BLOB)))";

} // namespace actor_host::traces::detail
