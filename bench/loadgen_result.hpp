#pragma once

// bench_load's measured window, the run state its two drivers share, and
// the JSON line it prints from them.

#include "bench/loadgen_options.hpp"
#include "bench/measure.hpp"

#include <chrono>
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

/// Where a run is: connecting its callers, warming up, measuring, waiting for
/// the calls still out, done.
enum class load_phase { connecting, warmup, measure, drain, done };

/// What bench_load's two drivers (WebSocket: loadgen.cpp, HTTP:
/// loadgen_http.cpp) track of a run beside their connections, and how a run
/// ends in its one output line.
struct load_run {
  load_phase ph = load_phase::connecting;
  load_window w;            // what the measured window counted
  std::string first_error;  // the first failed operation's reason
  std::string close_reason; // the first connection lost, and why

  bool issuing() const { return ph == load_phase::warmup || ph == load_phase::measure; }

  /// An operation failed: an error if it was measured; the first reason is
  /// kept for the note.
  void error(const std::string& what);

  /// Chunk number `k` of a stream that has had `got` chunks since `t0`: an
  /// order error unless it is the next one; if measured, an op, and for the
  /// first chunk the latency (time to first chunk). Counts it in `got`.
  void count_chunk(long k, long& got, clock::time_point t0);

  /// The CPU readings at one end of the measured window (start: cpu0,
  /// self_cpu0, busy0; else the ...1): each watched process, bench_load, the
  /// machine. The drivers take the window's clock reading themselves.
  void read_cpu(const load_options& o, bool start);

  /// Once the driver's loop has stopped (a window still open closed by the
  /// driver first): prints the run's one JSON line and returns the exit
  /// status (0: done). A run that never got to measuring says why on stderr
  /// and prints a "could not start" line. Otherwise the line is
  /// result_json's: ok if the run got to done with every connection kept, no
  /// error and something measured; else the note names the first of: the
  /// connection lost, the first error, the drain that timed out with
  /// `in_flight` calls still out.
  int print_result(const load_options& o, bool connections_kept, long in_flight);
};

/// How long a driver's loop may run, whatever happens: connect (10 s) +
/// warm-up + measure + drain + 1 s.
std::chrono::nanoseconds run_time_bound(const load_options& o);

/// The one JSON line of a run: rate, latency percentiles, CPU per operation
/// and RSS of every watched process and of bench_load itself, machine-wide
/// busy time; `note` (if not empty) says why the run is not ok. Sorts the
/// window's latencies (percentiles).
std::string result_json(const load_options& o, load_window& w, bool ok, std::string note);

} // namespace bench
