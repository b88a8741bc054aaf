#pragma once

// Measurement helpers shared by the bench tools: CPU time and RSS of a
// process from /proc, machine-wide busy time, and a latency recorder.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace bench {

using clock = std::chrono::steady_clock;

inline double ms_since(clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
}

inline double us_since(clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock::now() - t0).count();
}

/// utime+stime of a process (all its threads, live and exited), in ms.
/// Negative if the process is gone.
inline double proc_cpu_ms(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s))
    return -1;
  auto close = s.rfind(')');
  if (close == std::string::npos)
    return -1;
  std::istringstream in(s.substr(close + 2));
  std::string field;
  unsigned long long ut = 0, st = 0;
  // Fields after "comm": state(3) ... utime(14) stime(15); index from 3.
  for (int i = 3; i <= 15 && (in >> field); ++i) {
    if (i == 14)
      ut = std::stoull(field);
    if (i == 15)
      st = std::stoull(field);
  }
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return static_cast<double>(ut + st) * 1000.0 / tick;
}

/// VmRSS of a process in KiB (-1 if gone).
inline long proc_rss_kb(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

/// Busy time of the whole machine (all cores) in ms since boot.
inline double machine_busy_ms() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};
  f >> cpu;
  for (auto& x : v)
    f >> x;
  unsigned long long idle = v[3] + v[4];
  unsigned long long total = 0;
  for (auto x : v)
    total += x;
  static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return static_cast<double>(total - idle) * 1000.0 / tick;
}

/// All samples (µs) of one phase; percentiles are exact.
class latencies {
public:
  void reserve(std::size_t n) { v_.reserve(n); }
  void add(double us) { v_.push_back(us); }
  std::size_t size() const { return v_.size(); }
  /// p in [0, 100]; -1 without samples.
  double pct(double p) {
    if (v_.empty())
      return -1;
    if (!sorted_) {
      std::sort(v_.begin(), v_.end());
      sorted_ = true;
    }
    auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v_.size()));
    return v_[std::min(i, v_.size() - 1)];
  }
  void clear() {
    v_.clear();
    sorted_ = false;
  }

private:
  std::vector<double> v_;
  bool sorted_ = false;
};

} // namespace bench
