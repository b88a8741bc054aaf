// The store's size: what a trace and the whole file hold, the cap a new
// write is checked against, and retention by age and size (trace_store.hpp):
// the running size every write transaction changes and checks against
// max_bytes before it commits, and the minute's prune by age.

#include "traces/trace_store.hpp"

#include "traces/detail/retention_statements.hpp"
#include "traces/detail/sqlite_statement.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
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

namespace {

// Another connection's writes (another manager on the same file) are read
// into the running size again at most this often: a SUM reads every trace
// row, and with two busy writers every batch would otherwise pay one.
// Until then the limit is checked against a size that misses at most this
// long of the other's writes.
constexpr std::int64_t resync_interval_ms = 1000;

// Past this many traces dropped by one batch, its dirty pages may spill to
// the WAL before its commit again (in_span_batch turns that off for the
// batch's own pages, which its size bounds): a limit lowered far below what
// the file holds, or another writer's second of traces, is not bounded so.
constexpr std::size_t spill_past = 4096;

} // namespace

bool trace_store::begin_write(std::int64_t now_ms) {
  if (!*kept_ || !exec(db_, "BEGIN IMMEDIATE"))
    return false;
  pending_ = 0;
  pending_counts_ = {};
  touched_.clear();
  // Under the write lock: no other connection commits until this one has.
  sync_total(now_ms, true);
  return true;
}

void trace_store::sync_total(std::int64_t now_ms, bool bounded) {
  // The version first: a commit between the two reads makes the next
  // look sum again, never miss one.
  auto& version = kept_->data_version;
  std::int64_t v = version.step() == SQLITE_ROW ? version.int64(0) : data_version_ - 1;
  version.reset();
  if (total_known_ && v == data_version_)
    return;
  if (bounded && total_known_ && now_ms >= synced_ms_ && now_ms - synced_ms_ < resync_interval_ms)
    return; // data_version_ left as it was: the next write looks again
  auto& sum = kept_->sum;
  if (sum.step() == SQLITE_ROW) {
    if (total_known_)
      ++counts_.resyncs;
    total_ = sum.int64(0);
    total_known_ = true;
    data_version_ = v;
    synced_ms_ = now_ms;
  }
  sum.reset();
}

std::string trace_store::commit_or_rollback(bool ok) {
  std::string why;
  if (ok && exec(db_, "COMMIT")) {
    total_ += pending_;
    counts_.by_age += pending_counts_.by_age;
    counts_.by_size += pending_counts_.by_size;
  } else {
    why = "trace store: " + std::string{sqlite3_errmsg(db_)};
    exec(db_, "ROLLBACK");
  }
  pending_ = 0;
  pending_counts_ = {};
  touched_.clear();
  return why;
}

bool trace_store::drop_traces(const std::vector<std::pair<std::int64_t, std::int64_t>>& drop,
                              std::uint64_t& counted) {
  auto& del_spans = kept_->del_spans;
  auto& del_trace = kept_->del_trace;
  for (auto [id, bytes] : drop) {
    // Spans first: a trace row is what every read starts at, so a span
    // left without one could never be reached (or dropped) again.
    bool ok = del_spans.bind(1, id).step() == SQLITE_DONE;
    del_spans.reset();
    ok = ok && del_trace.bind(1, id).step() == SQLITE_DONE;
    bool gone = ok && sqlite3_changes(db_) == 1;
    del_trace.reset();
    if (!ok)
      return false;
    if (gone) {
      pending_ -= bytes;
      ++counted;
    }
  }
  return true;
}

bool trace_store::fit_size() {
  if (retention_.max_bytes == 0 || !total_known_)
    return true;
  const auto limit = static_cast<std::int64_t>(
    std::min<std::uint64_t>(retention_.max_bytes, std::numeric_limits<std::int64_t>::max()));
  auto over = total_ + pending_ - limit;
  if (over <= 0)
    return true;
  // Oldest first, until what is left fits. The traces this transaction
  // wrote stay, even when they alone are over the limit (a batch larger
  // than the whole store: the next one drops them, as older), so a store
  // never holds more than its limit and one batch; a trace that alone is
  // over the limit could never fit and goes at once. They are the newest
  // anyway, unless the clock went back or a trace was updated in the same
  // millisecond as the ones before it.
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  victims_.clear();
  // When what this transaction added is itself over the limit, one of its
  // traces may be: those go before any older trace is looked at (else the
  // older ones went first, for nothing). A look per trace written, only
  // then: with a limit above a batch's size, never.
  const bool looked = pending_ > limit;
  if (looked) {
    auto& of_row = kept_->of_row;
    for (auto id : touched_) {
      auto bytes = of_row.bind(1, id).step() == SQLITE_ROW ? of_row.int64(0) : 0;
      of_row.reset();
      if (bytes > limit) {
        victims_.emplace_back(id, bytes);
        over -= bytes;
      }
    }
  }
  auto& oldest = kept_->oldest;
  while (over > 0 && oldest.step() == SQLITE_ROW) {
    auto id = oldest.int64(0);
    auto bytes = oldest.int64(1);
    if ((looked || bytes <= limit) && std::binary_search(touched_.begin(), touched_.end(), id))
      continue;
    victims_.emplace_back(id, bytes);
    over -= bytes;
  }
  oldest.reset();
  if (victims_.size() > spill_past)
    exec(db_, "PRAGMA cache_spill=ON");
  // Every trace over the limit goes in this batch, however many the writes
  // pushed out: the store keeps up with any write rate (each batch drops
  // about what it wrote, a cost like the writes' own), where a bound per
  // batch would let it grow past the limit under sustained load.
  return drop_traces(victims_, pending_counts_.by_size);
}

std::size_t trace_store::prune(std::int64_t now_ms) {
  if (!begin_write(now_ms))
    return 0;
  bool ok = true;
  if (retention_.max_age.count() > 0) {
    // Through traces_by_update: the old traces alone are read.
    victims_.clear();
    auto& old = kept_->older_than;
    old.bind(1, now_ms - static_cast<std::int64_t>(retention_.max_age.count()));
    int rc = SQLITE_ROW;
    while ((rc = old.step()) == SQLITE_ROW)
      victims_.emplace_back(old.int64(0), old.int64(1));
    old.reset();
    ok = rc == SQLITE_DONE && drop_traces(victims_, pending_counts_.by_age);
  }
  // Every write keeps the store within its limit; this is for a store
  // opened over a limit lowered since, or one another connection filled.
  ok = ok && fit_size();
  auto n = pending_counts_.by_age + pending_counts_.by_size;
  return commit_or_rollback(ok).empty() ? static_cast<std::size_t>(n) : 0;
}

trace_store::retention_counts trace_store::take_retention_counts() {
  return std::exchange(counts_, {});
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

std::uint64_t trace_store::counted_bytes() {
  if (*kept_)
    sync_total(0, false);
  return static_cast<std::uint64_t>(std::max<std::int64_t>(total_, 0));
}

} // namespace actor_host::traces
