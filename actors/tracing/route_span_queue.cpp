#include "actors/tracing/route_span_queue.hpp"

#include "actors/tracing/trace_keeper.hpp"
#include "obs/metrics.hpp"
#include "wire/secure_random.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

namespace actor_host {

namespace {

template <class T>
T clipped(std::size_t n) {
  return static_cast<T>(std::min<std::size_t>(n, std::numeric_limits<T>::max()));
}

} // namespace

void route_batch::add(std::string_view trace, std::string_view runtime, std::string_view node,
                      std::string_view action, bool ok, std::string_view error_status,
                      std::string_view error_message, std::int64_t start_ms,
                      std::int64_t end_ms) {
  route_record r;
  r.at = clipped<std::uint32_t>(text.size());
  r.trace_len = clipped<std::uint16_t>(trace.size());
  r.runtime_len = clipped<std::uint16_t>(runtime.size());
  r.node_len = clipped<std::uint16_t>(node.size());
  r.action_len = clipped<std::uint32_t>(action.size());
  r.ok = ok;
  r.start_ms = start_ms;
  r.end_ms = end_ms;
  text.append(trace.substr(0, r.trace_len));
  text.append(runtime.substr(0, r.runtime_len));
  text.append(node.substr(0, r.node_len));
  text.append(action.substr(0, r.action_len));
  if (!ok) {
    // As the span shows it: "STATUS" or "STATUS: message".
    auto before = text.size();
    text.append(error_status);
    if (!error_message.empty())
      text.append(": ").append(error_message);
    r.error_len = clipped<std::uint32_t>(text.size() - before);
  }
  records.push_back(r);
}

void route_span_fields(std::string_view text, const route_record& r, traces::run_span& s) {
  auto at = std::min<std::size_t>(r.at, text.size());
  auto next = [&](std::size_t n) {
    auto piece = text.substr(at, n);
    at += piece.size();
    return piece;
  };
  s.trace_id.assign(next(r.trace_len));
  auto runtime = next(r.runtime_len);
  auto node = next(r.node_len);
  auto action = next(r.action_len);
  s.kind.assign("actor-host");
  s.action_type.assign("route");
  s.name.assign("actor-host ").append(runtime);
  s.input.clear();
  s.output.clear();
  s.ok = r.ok;
  if (r.ok)
    s.error_message.clear();
  else
    s.error_message.assign(next(r.error_len));
  s.start_ms = r.start_ms;
  s.end_ms = r.end_ms;
  auto& attrs = s.attributes;
  attrs.resize(node.empty() ? 2 : 3);
  attrs[0].first.assign("actor-host:runtime");
  attrs[0].second.assign(runtime);
  attrs[1].first.assign("actor-host:action");
  attrs[1].second.assign(action);
  if (!node.empty()) {
    attrs[2].first.assign("actor-host:node");
    attrs[2].second.assign(node);
  }
}

traces::run_span route_batch::span(std::size_t i) const {
  traces::run_span s;
  route_span_fields(text, records[i], s);
  // Drawn here, on the keeper's thread, rather than on the call's.
  s.span_id = wire::secure_random_hex(8);
  return s;
}

route_span_queue::route_span_queue(caf::actor keeper) : keeper_(std::move(keeper)) {
  batch_.records.reserve(batch_max);
}

void route_span_queue::set_batcher(caf::actor batcher) {
  batcher_ = std::move(batcher);
}

void route_span_queue::push(std::string_view trace, std::string_view runtime,
                            std::string_view node, std::string_view action, bool ok,
                            std::string_view error_status, std::string_view error_message,
                            std::int64_t start_ms, std::int64_t end_ms) {
  auto& m = obs::global();
  if (m.route_spans_queued.fetch_add(1, std::memory_order_relaxed) >= max_route_spans_queued) {
    m.route_spans_queued.fetch_sub(1, std::memory_order_relaxed);
    auto n = m.route_spans_dropped.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == 1 || n % 1000 == 0)
      spdlog::warn("trace store falls behind: {} route span(s) dropped so far", n);
    return;
  }
  route_batch full;
  bool open_window = false;
  {
    std::lock_guard guard{mtx_};
    batch_.add(trace, runtime, node, action, ok, error_status, error_message, start_ms, end_ms);
    if (batch_.size() >= batch_max) {
      full = std::move(batch_);
      batch_ = {};
      batch_.records.reserve(batch_max);
      batch_.text.reserve(full.text.capacity());
    } else if (!window_open_) {
      open_window = window_open_ = true;
    }
  }
  // Sent outside the lock: a send may run the receiver's enqueue path.
  if (!full.empty())
    caf::anon_send(keeper_, route_spans_atom_v, std::move(full));
  else if (open_window && batcher_)
    caf::delayed_anon_send(batcher_, batch_window, route_batch_atom_v);
}

void route_span_queue::flush() {
  route_batch out;
  {
    std::lock_guard guard{mtx_};
    window_open_ = false;
    if (batch_.empty())
      return;
    out = std::move(batch_);
    batch_ = {};
    batch_.records.reserve(batch_max);
  }
  caf::anon_send(keeper_, route_spans_atom_v, std::move(out));
}

} // namespace actor_host
