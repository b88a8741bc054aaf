#include "obs/metrics.hpp"

#include <fmt/format.h>

namespace actor_host::obs {

rpc_method method_from_name(std::string_view name) {
  if (name == "runAction")
    return rpc_method::run_action;
  if (name == "listActions")
    return rpc_method::list_actions;
  if (name == "listValues")
    return rpc_method::list_values;
  if (name == "cancelAction")
    return rpc_method::cancel_action;
  return rpc_method::other;
}

const char* method_label(rpc_method m) {
  switch (m) {
    case rpc_method::list_actions: return "listActions";
    case rpc_method::list_values: return "listValues";
    case rpc_method::run_action: return "runAction";
    case rpc_method::cancel_action: return "cancelAction";
    default: return "other";
  }
}

void latency_histogram::observe(std::chrono::nanoseconds d) noexcept {
  double s = std::chrono::duration<double>(d).count();
  std::size_t i = 0;
  while (i < bounds_seconds.size() && s > bounds_seconds[i])
    ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<std::uint64_t>(d.count() < 0 ? 0 : d.count()),
                    std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void latency_histogram::add_counts(counts& out) const noexcept {
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] += buckets_[i].load(std::memory_order_relaxed);
}

double histogram_quantile(const latency_histogram::counts& c, double q) noexcept {
  std::uint64_t total = 0;
  for (auto n : c)
    total += n;
  if (total == 0)
    return -1;
  auto& b = latency_histogram::bounds_seconds;
  double rank = q * static_cast<double>(total);
  double below = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto n = static_cast<double>(c[i]);
    if (n > 0 && below + n >= rank) {
      if (i == b.size())
        return b.back();
      double lo = i == 0 ? 0 : b[i - 1];
      return lo + (b[i] - lo) * ((rank - below) / n);
    }
    below += n;
  }
  return b.back();
}

void latency_histogram::render(std::string& out, std::string_view name,
                               std::string_view labels) const {
  std::uint64_t cumulative = 0;
  auto sep = labels.empty() ? "" : ",";
  for (std::size_t i = 0; i < bounds_seconds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds_seconds[i],
                       cumulative);
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, cumulative);
  out += fmt::format("{}_sum{{{}}} {}\n", name, labels,
                     static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9);
  out += fmt::format("{}_count{{{}}} {}\n", name, labels, count_.load(std::memory_order_relaxed));
}

void metrics::record_request(rpc_method m, int outcome_code,
                             std::chrono::nanoseconds took) noexcept {
  if (outcome_code < 0 || outcome_code >= outcome_count)
    outcome_code = 2; // UNKNOWN
  auto mi = static_cast<int>(m);
  requests[mi][outcome_code].fetch_add(1, std::memory_order_relaxed);
  latency[mi].observe(took);
}

invocation_outcome invocation_outcome_from(std::string_view code) {
  for (int i = 0; i < static_cast<int>(invocation_outcome::count_); ++i) {
    auto o = static_cast<invocation_outcome>(i);
    if (code == invocation_outcome_label(o))
      return o;
  }
  if (code == "TIMEOUT")
    return invocation_outcome::timeout;
  if (code == "FORBIDDEN")
    return invocation_outcome::forbidden;
  return invocation_outcome::other;
}

const char* invocation_outcome_label(invocation_outcome o) {
  switch (o) {
    case invocation_outcome::ok: return "ok";
    case invocation_outcome::invocation_failed: return "invocation_failed";
    case invocation_outcome::invocation_stopped: return "invocation_stopped";
    case invocation_outcome::function_not_found: return "function_not_found";
    case invocation_outcome::timeout: return "timeout";
    case invocation_outcome::forbidden: return "forbidden";
    case invocation_outcome::abandoned: return "abandoned";
    default: return "other";
  }
}

void metrics::record_invocation(std::string_view code, std::chrono::nanoseconds took) noexcept {
  invocations[static_cast<int>(invocation_outcome_from(code))].fetch_add(
    1, std::memory_order_relaxed);
  invocation_latency.observe(took);
}

metrics& global() {
  static metrics instance;
  return instance;
}

std::string label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

} // namespace actor_host::obs
