#include "traces/detail/new_trace_rows.hpp"

#include "traces/span_record.hpp"

#include <charconv>
#include <limits>

namespace actor_host::traces::detail {

namespace {

// One statement for max_rows rows, each as write_span's put_trace makes a
// new trace's row from an ended root span (?1 the time, shared). OR
// IGNORE, not an upsert: the row of a trace stored before (or made by an
// earlier row of the statement) is left for the caller's upsert, and no
// constraint can abort the statement half way, so SQLite keeps no
// statement journal for it (a 16 KiB page copied per B-tree it touches;
// trace_store.cpp's trace_row on RETURNING).
std::string insert_sql() {
  std::string sql = "INSERT OR IGNORE INTO traces(id_text, display_name, start_time, end_time, "
                    "has_root, updated_ms, bytes, lone_span_id, lone_span) VALUES";
  for (std::size_t r = 0; r < new_trace_rows::max_rows; ++r) {
    auto p = [&](int k) { return "?" + std::to_string(2 + 7 * r + k); };
    sql += r == 0 ? "(" : ",(";
    sql += p(0) + "," + p(1) + "," + p(2) + "," + p(3) + ",1,?1," + p(4) + "," + p(5) + ","
           + p(6) + ")";
  }
  return sql;
}

} // namespace

new_trace_rows::new_trace_rows(sqlite3* db)
  : db_(db), insert_{db, insert_sql().c_str()}, find_{db, "SELECT id FROM traces WHERE id_text=?"} {
}

bool new_trace_rows::hold(const run_span& span) {
  auto& r = rows_[held_++];
  r.span = &span;
  // What write_span binds: packed (span_record.hpp), counted as the JSON
  // load() writes for it.
  pack_run_span(span, r.packed);
  r.bytes = static_cast<std::int64_t>(span_json_size(span));
  auto decimal = [](std::int64_t n, std::array<char, 24>& room, std::uint8_t& len) {
    len = static_cast<std::uint8_t>(std::to_chars(room.data(), room.data() + room.size(), n).ptr
                                    - room.data());
  };
  decimal(span.start_ms, r.start, r.start_len);
  decimal(span.end_ms, r.end, r.end_len);
  return held_ == max_rows;
}

bool new_trace_rows::insert(std::int64_t now_ms, std::vector<std::size_t>& left, made& out) {
  // Bound without SQLite's copy: the rows and their spans stay until the
  // reset below has cleared the bindings.
  insert_.bind(1, now_ms);
  for (std::size_t i = 0; i < held_; ++i) {
    auto& r = rows_[i];
    int at = static_cast<int>(2 + 7 * i);
    insert_.bind_static(at, r.span->trace_id).bind_static(at + 1, r.span->name);
    insert_.bind_static(at + 2, {r.start.data(), r.start_len});
    insert_.bind_static(at + 3, {r.end.data(), r.end_len}).bind(at + 4, r.bytes);
    insert_.bind_static(at + 5, r.span->span_id).bind_static(at + 6, r.packed);
  }
  bool ok = insert_.step() == SQLITE_DONE;
  insert_.reset();
  if (!ok)
    return false;
  // A row as stored_bytes_sql counts it: its span and its three texts (the
  // name and the times as bound above, UTF-8 bytes).
  auto stored = [&](const row& r) {
    return r.bytes + static_cast<std::int64_t>(r.span->name.size() + r.start_len + r.end_len);
  };
  out = {};
  auto made = static_cast<std::size_t>(sqlite3_changes(db_));
  if (made > 0) {
    out.last_id = sqlite3_last_insert_rowid(db_);
    out.first_id = out.last_id - static_cast<std::int64_t>(made) + 1;
  }
  if (made == held_) {
    for (std::size_t i = 0; i < held_; ++i)
      out.bytes += stored(rows_[i]);
    return true; // every trace was new: the common case
  }
  // SQLite gives each new row the largest rowid + 1, so the rows this
  // statement made are the last `made` ones (it picks rowids at random
  // only past 2^63 - 1). A held span made its trace's row if that row is
  // one of them and no span before it in the statement has its trace.
  auto first_made = made == 0 ? std::numeric_limits<std::int64_t>::max() : out.first_id;
  for (std::size_t i = 0; i < held_; ++i) {
    auto& trace = rows_[i].span->trace_id;
    bool first = true;
    for (std::size_t j = 0; first && j < i; ++j)
      first = rows_[j].span->trace_id != trace;
    // Not there at all: refused for another reason; the caller's write
    // meets it as it would have.
    std::int64_t id = 0;
    if (first) {
      id = find_.bind_static(1, trace).step() == SQLITE_ROW ? find_.int64(0) : 0;
      find_.reset();
    }
    if (!first || id < first_made)
      left.push_back(i);
    else
      out.bytes += stored(rows_[i]);
  }
  return true;
}

} // namespace actor_host::traces::detail
