#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/run_span.hpp"

struct sqlite3;

/// Where the traces Genkit runtimes export end up: an embedded SQLite
/// database with Genkit's TraceData shapes (the telemetry server's API,
/// @genkit-ai/telemetry-server). Plain data, no actors: one owner uses it
/// (the manager's trace_keeper, off the scheduler's threads), never two
/// threads at once: it is opened without SQLite's per-connection mutex.
namespace boost::json {
class object;
}

namespace actor_host::traces {

class trace_filter;
namespace detail {
class new_trace_rows;
}

struct retention {
  /// Traces not updated for this long are dropped; 0 = no age limit.
  std::chrono::milliseconds max_age = std::chrono::hours(24 * 7);
  /// Stored span bytes kept; the least recently updated traces go first. 0 = no limit.
  std::uint64_t max_bytes = 256ull << 20;
};

/// The store a manager keeps when none is configured: in the project's
/// .genkit folder, beside the runtime files.
std::string default_store_path(const std::string& project_root);

/// Makes the folder of `path` (and its parents) private to the user when it
/// does not exist; "" or why not.
std::string make_store_folder(const std::string& path);

class trace_store {
public:
  /// What one trace may keep: a document that would grow a trace past it is
  /// refused (a trace of 120 MB made every reader of it hold 120 MB).
  static constexpr std::size_t max_trace_bytes = 16u << 20;
  /// What one listing answer may carry: a page ends before the trace that
  /// would pass it (its continuationToken starts the next page there).
  static constexpr std::size_t max_answer_bytes = 32u << 20;

  /// Opens (creating it and its tables if needed) the database at `path`;
  /// null with `error` set when it cannot (a file that is not a trace store,
  /// or is one of a newer layout, included). A store file of the layout
  /// before (spans keyed by the trace id's text) is migrated first, in one
  /// transaction: `note` (when given) hears, for the log, that it starts and
  /// how long it took (seconds for a store of a few hundred MiB).
  static std::unique_ptr<trace_store> open(const std::string& path, retention r,
                                           std::string& error,
                                           const std::function<void(const std::string&)>& note = {});

  ~trace_store();
  trace_store(const trace_store&) = delete;
  trace_store& operator=(const trace_store&) = delete;

  /// Stores one TraceData document, merging its spans into the trace's: a
  /// span replaces the stored one of its id, except that a span still in
  /// progress (endTime 0) never replaces one that has ended (exporters send
  /// starts and ends in any order). Trace-level fields are updated only when
  /// given. Returns "" or why the document was refused, for a person;
  /// `saved_trace` (when given) gets the trace id of a stored document.
  /// `root_span` (when given) gets the id of the document's root span (one
  /// without parentSpanId), if it has one.
  std::string save(std::string_view trace_data, std::int64_t now_ms,
                   std::string* saved_trace = nullptr, std::string* root_span = nullptr);

  /// One document's outcome in save_each().
  struct saved {
    std::string error;     // "" = stored
    std::string trace_id;  // of a stored document
    std::string root_span; // its root span's id, if it has one
  };
  /// Documents stored as save() stores each, in one transaction (one commit
  /// for all: what a busy telemetry server receives in bulk). One outcome
  /// per document, in order; a failed commit fails every one it held.
  std::vector<saved> save_each(const std::vector<std::string>& docs, std::int64_t now_ms);
  /// Spans made here (the manager's route spans: well-formed by
  /// construction), in one transaction, stored as save() stores a document
  /// with the one span, without writing and parsing it first. "" or why not.
  std::string save_spans(const std::vector<run_span>& spans, std::int64_t now_ms);
  /// The same, of `n` spans handed over one at a time: `fill(i, span)`
  /// writes span i into `span`, one run_span the store fills again for each
  /// (its strings keep their capacity), so spans kept in a leaner shape
  /// (the keeper's held_route_span) need no run_span of their own.
  std::string save_spans(std::size_t n, const std::function<void(std::size_t, run_span&)>& fill,
                         std::int64_t now_ms);

  /// The trace as TraceData JSON, or nothing.
  std::optional<std::string> load(std::string_view trace_id);


  /// `{"traces":[TraceData...],"continuationToken":"n"}`: traces that have
  /// their root span, most recently updated first, from `offset`; the token
  /// (the next offset) only when more follow. At most max_answer_bytes (one
  /// trace at least).
  std::string list(std::size_t limit, std::size_t offset);
  /// The same, of the traces `filter` passes (trace_filter.hpp); offsets
  /// count matches. At most the 10,000 most recently updated traces, and
  /// 256 MiB of them, are looked at (a filter reads each one).
  std::string list(std::size_t limit, std::size_t offset, const trace_filter& filter);

  /// Drops the traces over the age limit, and the oldest while the store
  /// is over its size limit (every write already keeps it within; this
  /// catches a store opened over a lowered limit, or one another connection
  /// wrote to); returns how many. Reads the traces it drops, through the
  /// index of update times, not the whole table.
  std::size_t prune(std::int64_t now_ms);

  /// Traces dropped over the retention limits, and the running size read
  /// again because another connection wrote to the file, since the last
  /// call (committed ones only): the keeper counts and logs them.
  struct retention_counts {
    std::uint64_t by_age = 0;
    std::uint64_t by_size = 0;
    std::uint64_t resyncs = 0;
  };
  retention_counts take_retention_counts();

  std::size_t trace_count();
  /// The stored bytes as retention counts them, summed over every trace
  /// (a scan of the whole table: for tests and benches).
  std::uint64_t stored_bytes();
  /// The same as this store keeps it running (what the size limit is
  /// checked against): summed once, at the first write or call, then
  /// changed by each committed write and delete.
  std::uint64_t counted_bytes();

private:
  explicit trace_store(sqlite3* db, retention r);
  // One document's spans and trace row, inside an open transaction.
  bool write_doc(const boost::json::object& doc, const std::string& trace_id,
                 std::int64_t now_ms, std::string* root_span = nullptr);
  bool write_span(const run_span& span, std::int64_t now_ms);
  // Route spans `span(i, room)` (span i, or filled into `room` and that),
  // inside an open transaction: those that make new traces by rows of many
  // (detail/new_trace_rows.hpp), the others by write_span, in order.
  bool write_spans(std::size_t n,
                   const std::function<const run_span&(std::size_t, run_span&)>& span,
                   std::int64_t now_ms);
  // A transaction of route spans around `write_all` (save_spans).
  std::string in_span_batch(const std::function<bool()>& write_all, std::int64_t now_ms);
  // BEGIN IMMEDIATE and the running size made current (trace_retention.cpp).
  bool begin_write(std::int64_t now_ms);
  // The running size summed again if it is not known yet, or another
  // connection committed since (`bounded`: not within resync_interval_ms of
  // the last sum, by `now_ms`).
  void sync_total(std::int64_t now_ms, bool bounded);
  // Commits (the running size and counts with it) or rolls back; "" or why not.
  std::string commit_or_rollback(bool ok);
  // Inside a write transaction: the oldest traces deleted while the store
  // is over max_bytes, except those this transaction wrote (touched_) unless
  // one alone is over it. False on an error.
  bool fit_size();
  // Rows `drop` (ids) deleted with their spans; their bytes off the running size.
  bool drop_traces(const std::vector<std::pair<std::int64_t, std::int64_t>>& drop,
                   std::uint64_t& counted);
  /// "" if `adding` more bytes keep `trace_id` within max_trace_bytes, else why not.
  std::string over_size(const std::string& trace_id, std::size_t adding);
  sqlite3* db_;
  retention retention_;
  // The statements of the per-run path, prepared once (trace_store.cpp).
  struct statements;
  std::unique_ptr<statements> stmts_;
  // Reused by every route span written (save_spans): no heap block per span.
  std::string packed_;
  std::unique_ptr<detail::new_trace_rows> new_rows_;
  std::vector<std::size_t> left_;
  // The running size (trace_retention.cpp): SUM(stored_bytes_sql) over the
  // traces as of this connection's last commit, summed at the first write
  // and again when another connection has written to the file (PRAGMA
  // data_version), at most once a second; what the open transaction
  // changes is in pending_ until it commits.
  struct retention_statements;
  std::unique_ptr<retention_statements> kept_;
  std::int64_t total_ = 0;
  std::int64_t pending_ = 0;
  bool total_known_ = false;
  std::int64_t data_version_ = 0;
  std::int64_t synced_ms_ = 0;
  // The trace rows the open transaction wrote (fit_size keeps them).
  std::vector<std::int64_t> touched_;
  // (row, stored bytes) of the traces fit_size drops; reused.
  std::vector<std::pair<std::int64_t, std::int64_t>> victims_;
  retention_counts counts_, pending_counts_;
};

/// Why `json` is not a TraceData document ("" when it is one); the checks
/// the telemetry server's schema makes, with the field named.
std::string check_trace_data(std::string_view json);

} // namespace actor_host::traces
