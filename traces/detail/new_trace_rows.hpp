#pragma once

// Private to traces/: the rows of new traces made by route spans, inserted
// by one statement for many spans (new_trace_rows.cpp).

#include "traces/detail/sqlite_statement.hpp"
#include "traces/run_span.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace actor_host::traces::detail {

/// Route spans that make new traces, held until there are max_rows of
/// them and then written as the rows trace_store::write_span writes for
/// each (the trace's row holding its lone span), by one INSERT. With a
/// runtime that exports no spans, every call's trace is such a row; one
/// statement per span was most of the keeper's SQLite time: the step, three
/// B-tree cursors opened and each insert seeking from the root
/// (bench/runs/2026-12-07-trace-batch.md).
class new_trace_rows {
public:
  static constexpr std::size_t max_rows = 64;

  explicit new_trace_rows(sqlite3* db);

  explicit operator bool() const {
    return insert_ && find_;
  }

  /// Whether `span` would make its trace's row with its lone span in it,
  /// if the trace is new: an ended root (write_span's rule for a lone span;
  /// a span with a parent nearly always goes into a stored trace).
  static bool takes(const run_span& span) noexcept {
    return span.end_ms > 0 && span.parent_span_id.empty();
  }

  /// A run_span to fill for the next row (the store's save_spans with a
  /// fill function): it stays as it is until clear().
  run_span& room() {
    return rooms_[held_];
  }

  /// Holds `span` (which must stay as it is until clear()) as the next
  /// row; true when the rows are full (then insert, then clear).
  bool hold(const run_span& span);

  std::size_t size() const noexcept {
    return held_;
  }
  const run_span& span(std::size_t i) const noexcept {
    return *rows_[i].span;
  }

  /// The rows one insert made: their ids (first_id..last_id, none when
  /// last_id < first_id) and what they add to the store's size, as
  /// stored_bytes_sql counts a row (its span's bytes and its texts).
  struct made {
    std::int64_t bytes = 0;
    std::int64_t first_id = 0;
    std::int64_t last_id = -1;
  };

  /// Inserts the rows of the full set of held spans. The spans it did not
  /// write (their trace was stored before, or an earlier held span made
  /// it) go to `left`, by index in order: the caller writes those one by
  /// one, as it would have; the rows it made are in `out`. False on an
  /// error (the transaction is the caller's to roll back).
  bool insert(std::int64_t now_ms, std::vector<std::size_t>& left, made& out);

  void clear() noexcept {
    held_ = 0;
  }

private:
  struct row {
    const run_span* span = nullptr;
    std::string packed;
    std::int64_t bytes = 0;
    // The times as the row's text (decimal), each in its own room.
    std::array<char, 24> start, end;
    std::uint8_t start_len = 0, end_len = 0;
  };
  sqlite3* db_;
  statement insert_, find_;
  std::array<row, max_rows> rows_;
  std::array<run_span, max_rows> rooms_;
  std::size_t held_ = 0;
};

} // namespace actor_host::traces::detail
