#include "traces/trace_store.hpp"

#include "traces/detail/sqlite_statement.hpp"
#include "traces/span_record.hpp"
#include "traces/trace_filter.hpp"
#include "wire/jsonrpc.hpp"

#include <algorithm>
#include <string>
#include <vector>

// The trace store's reads: a trace (load), and listings, pages bounded by
// count and bytes.
namespace actor_host::traces {

using detail::statement;
using detail::stored_bytes_sql;

std::optional<std::string> trace_store::load(std::string_view trace_id) {
  statement t{db_, "SELECT id, display_name, start_time, end_time, lone_span_id, lone_span "
                   "FROM traces WHERE id_text=?"};
  if (!t || t.bind(1, trace_id).step() != SQLITE_ROW)
    return std::nullopt;
  std::string out = R"({"traceId":)" + wire::jsonrpc::quote(trace_id);
  if (!t.is_null(1))
    out += R"(,"displayName":)" + wire::jsonrpc::quote(t.text(1));
  if (!t.is_null(2))
    out += R"(,"startTime":)" + t.text(2);
  if (!t.is_null(3))
    out += R"(,"endTime":)" + t.text(3);
  out += R"(,"spans":{)";
  bool first = true;
  run_span packed;
  auto add = [&](std::string_view span_id, std::string_view text) {
    bool is_packed = !text.empty() && text[0] == span_record_mark;
    if (is_packed && !unpack_run_span(text, packed))
      return; // not written by pack_run_span: no span to show
    out += first ? "" : ",";
    out += wire::jsonrpc::quote(span_id);
    out += ':';
    first = false;
    if (!is_packed) {
      out += text;
      return;
    }
    packed.trace_id.assign(trace_id);
    packed.span_id.assign(span_id);
    append_span_json(out, packed);
  };
  // The row's lone span, in span id order among the others (a trace holds
  // one only while `spans` has none of its rows, save in a damaged file).
  bool lone = !t.is_null(4);
  auto lone_id = t.view(4);
  statement s{db_, "SELECT span_id, json FROM spans WHERE trace=? ORDER BY span_id"};
  if (s) {
    s.bind(1, t.int64(0));
    while (s.step() == SQLITE_ROW) {
      auto span_id = s.view(0);
      if (lone && lone_id < span_id) {
        add(lone_id, t.view(5));
        lone = false;
      }
      add(span_id, s.view(1));
    }
  }
  if (lone)
    add(lone_id, t.view(5));
  return out + "}}";
}

namespace {

// One listing page: at most `limit` traces and the answer's byte budget
// (the next page starts at the trace that did not fit).
class page {
public:
  explicit page(std::size_t limit) : limit_(limit) {
  }

  /// False once the page is full; `trace` is then left for the next one.
  bool add(const std::string& trace) {
    if (taken_ == limit_ || (taken_ > 0 && out_.size() + trace.size() > trace_store::max_answer_bytes)) {
      more_ = true;
      return false;
    }
    out_ += (taken_++ ? "," : "") + trace;
    return true;
  }

  /// The answer; `more`: traces follow beyond those the page was offered.
  std::string finish(std::size_t offset, bool more) && {
    out_ += "]";
    if (more_ || more)
      out_ += R"(,"continuationToken":")" + std::to_string(offset + taken_) + "\"";
    return std::move(out_) + "}";
  }

private:
  std::size_t limit_;
  std::size_t taken_ = 0;
  bool more_ = false;
  std::string out_ = R"({"traces":[)";
};

} // namespace

std::string trace_store::list(std::size_t limit, std::size_t offset,
                              const trace_filter& filter) {
  if (filter.empty())
    return list(limit, offset);
  limit = std::clamp<std::size_t>(limit, 1, 1000);
  // Bounded work on the store's one thread: a filter reads each trace, so
  // at most this many traces and bytes of them are looked at (a filtered
  // listing of large traces took seconds and held up every write).
  constexpr std::int64_t max_scanned = 10000;
  constexpr std::uint64_t max_scanned_bytes = 256u << 20;
  auto sql = "SELECT id_text, " + std::string{stored_bytes_sql}
             + " FROM traces WHERE has_root=1 ORDER BY updated_ms DESC, id_text LIMIT ?";
  statement q{db_, sql.c_str()};
  std::vector<std::string> ids;
  std::uint64_t scanned = 0;
  if (q) {
    q.bind(1, max_scanned);
    while (scanned < max_scanned_bytes && q.step() == SQLITE_ROW) {
      ids.push_back(q.text(0));
      scanned += static_cast<std::uint64_t>(q.int64(1));
    }
  }
  page p{limit};
  std::size_t matched = 0;
  for (auto& id : ids) {
    auto t = load(id);
    if (!t || !filter.matches(*t))
      continue;
    if (matched++ < offset)
      continue;
    if (!p.add(*t))
      break;
  }
  return std::move(p).finish(offset, false);
}

std::string trace_store::list(std::size_t limit, std::size_t offset) {
  limit = std::clamp<std::size_t>(limit, 1, 1000);
  statement q{db_, "SELECT id_text FROM traces WHERE has_root=1 "
                   "ORDER BY updated_ms DESC, id_text LIMIT ? OFFSET ?"};
  std::vector<std::string> ids;
  if (q) {
    q.bind(1, static_cast<std::int64_t>(limit + 1)).bind(2, static_cast<std::int64_t>(offset));
    while (q.step() == SQLITE_ROW)
      ids.push_back(q.text(0));
  }
  bool more = ids.size() > limit;
  if (more)
    ids.pop_back();
  // The query already stops at `limit`: only the byte budget ends it early.
  page p{ids.size()};
  for (auto& id : ids)
    if (auto t = load(id); t && !p.add(*t))
      break;
  return std::move(p).finish(offset, more);
}

} // namespace actor_host::traces
