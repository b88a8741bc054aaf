#pragma once

#include "actors/tracing/route_span_queue.hpp"
#include "actors/tracing/trace_key.hpp"
#include "traces/run_span.hpp"

#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace actor_host {

/// A route span in the trace keeper, from its batch to its row: the batch's
/// record and the span's own slice of the batch's text, not a run_span.
/// As a run_span each span was seven heap blocks (its ids, name and
/// attributes), made from the batch, moved through the wait list and freed:
/// a sixth of the keeper's thread (bench/runs/2026-12-07-trace-rowid.md).
/// Here it is one (its text); the store's row is written from a run_span
/// the store fills again for every span (fill).
class held_route_span {
public:
  /// Record `i` of `batch`, with a fresh span id.
  held_route_span(const route_batch& batch, std::size_t i);

  /// A span made whole elsewhere (route_span_atom), kept as it is.
  explicit held_route_span(traces::run_span span);

  std::string_view trace_id() const noexcept;
  /// trace_id() as the keeper's indexes key it, parsed once, here: each
  /// span is looked up in them three to five times.
  const trace_key& trace() const noexcept {
    return trace_;
  }
  std::string_view span_id() const noexcept;

  /// Under the span `root` of its trace from now on.
  void set_parent(const span_key& root);

  /// Whether it goes in as its trace's root (no parent).
  bool is_root() const noexcept;

  /// The span as a run_span, into `out` (every field; `out`'s strings keep
  /// their capacity).
  void fill(traces::run_span& out) const;

private:
  route_record rec_; // rec_.at == 0: its text is text_
  std::string text_;
  trace_key trace_;
  std::array<char, 16> span_id_{};
  span_key parent_;
  bool has_parent_ = false;
  std::unique_ptr<traces::run_span> whole_; // route_span_atom's spans
};

} // namespace actor_host
