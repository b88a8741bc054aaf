#pragma once

#include "traces/run_span.hpp"

#include <caf/actor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host {

/// One route span as the call path hands it over: its text lives in the
/// batch's one buffer (route_batch::text), so a span costs no heap block of
/// its own. Profiled (bench/runs/2026-12-07-trace-cost.md): a run_span per
/// call made ten blocks on the I/O thread that the keeper's thread freed,
/// and those frees took the I/O thread's malloc arena lock against it.
struct route_record {
  std::uint32_t at = 0; // its text in route_batch::text: the fields below, in this order
  std::uint16_t trace_len = 0;
  std::uint16_t runtime_len = 0;
  std::uint16_t node_len = 0;
  std::uint32_t action_len = 0;
  std::uint32_t error_len = 0; // "" when ok
  bool ok = true;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
};

/// Route spans in bulk: what the keeper takes in one message.
struct route_batch {
  std::vector<route_record> records;
  std::string text;

  bool empty() const {
    return records.empty();
  }
  std::size_t size() const {
    return records.size();
  }
  /// Appends one span; "" fields stay empty. Texts longer than a field's
  /// length type holds are cut (ids and names are far shorter).
  void add(std::string_view trace, std::string_view runtime, std::string_view node,
           std::string_view action, bool ok, std::string_view error_status,
           std::string_view error_message, std::int64_t start_ms, std::int64_t end_ms);
  /// Record `i` as the span the keeper stores, with a fresh span id.
  traces::run_span span(std::size_t i) const;
};

/// The route span `r` stands for (its text in `text`, from r.at) into `s`:
/// every field but the span id and the parent, which stay as they are. `s`
/// may be one run_span filled again and again: its strings keep their
/// capacity (the keeper writes its rows so, without a heap block per span).
void route_span_fields(std::string_view text, const route_record& r, traces::run_span& s);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, route_record& x) {
  return f(caf::meta::type_name("route_record"), x.at, x.trace_len, x.runtime_len, x.node_len,
           x.action_len, x.error_len, x.ok, x.start_ms, x.end_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, route_batch& x) {
  return f(caf::meta::type_name("route_batch"), x.records, x.text);
}

/// Route spans collected before they go to the keeper in one message. The
/// keeper has a thread of its own: waking it once per run cost more than
/// storing the span. Runs append here from whatever thread they end on,
/// under a mutex, without a message; a batch goes to the keeper when it
/// holds route_batch_max spans, or route_batch_window after its first span
/// (a delayed message to the route_span_batcher, which owns the window).
/// Bounded: past max_route_spans_queued spans on their way to the keeper
/// (obs route_spans_queued), runs drop theirs, counted and logged.
class route_span_queue {
public:
  static constexpr std::size_t batch_max = 256;
  static constexpr auto batch_window = std::chrono::milliseconds(20);

  route_span_queue(caf::actor keeper);

  /// Where the window's end goes (the route_span_batcher): set once, before
  /// the first push.
  void set_batcher(caf::actor batcher);

  /// One run's span (the fields of route_batch::add). Any thread.
  void push(std::string_view trace, std::string_view runtime, std::string_view node,
            std::string_view action, bool ok, std::string_view error_status,
            std::string_view error_message, std::int64_t start_ms, std::int64_t end_ms);

  /// The window is over: what is queued goes to the keeper.
  void flush();

private:
  std::mutex mtx_;
  route_batch batch_;      // guarded by mtx_
  bool window_open_ = false; // guarded by mtx_
  caf::actor keeper_;
  caf::actor batcher_;
};

using route_span_queue_ptr = std::shared_ptr<route_span_queue>;

} // namespace actor_host
