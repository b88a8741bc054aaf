#pragma once

// bench_load's measured window and the JSON line it prints from it.

#include "bench/loadgen_options.hpp"
#include "bench/measure.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

/// What the measured window counted, and the /proc readings at its ends
/// (one CPU reading per --watch process, in order).
struct load_window {
  clock::time_point t_measure, t_end;
  std::uint64_t done_ops = 0;
  std::uint64_t errors = 0;
  std::uint64_t order_errors = 0;
  std::uint64_t late_skipped = 0; // open loop: calls not sent (in-flight cap)
  std::uint64_t sent_measure = 0;
  latencies lat;
  latencies lat_ack;
  std::vector<double> cpu0, cpu1;
  double self_cpu0 = 0, self_cpu1 = 0, busy0 = 0, busy1 = 0;
};

/// The one JSON line of a run: rate, latency percentiles, CPU per operation
/// and RSS of every watched process and of bench_load itself, machine-wide
/// busy time; `note` (if not empty) says why the run is not ok. Sorts the
/// window's latencies (percentiles).
std::string result_json(const load_options& o, load_window& w, bool ok, std::string note);

} // namespace bench
