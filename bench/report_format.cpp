#include "bench/report_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

namespace bench::report {

double num(const json::value* v, double d) {
  if (!v)
    return d;
  if (v->is_double())
    return v->as_double();
  if (v->is_int64())
    return static_cast<double>(v->as_int64());
  if (v->is_uint64())
    return static_cast<double>(v->as_uint64());
  return d;
}

std::string str(const json::value* v, std::string d) {
  return v && v->is_string() ? std::string{v->as_string()} : d;
}

const json::value* at(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* cur = &v;
  for (auto* k : path) {
    if (!cur->is_object())
      return nullptr;
    cur = cur->as_object().if_contains(k);
    if (!cur)
      return nullptr;
  }
  return cur;
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fmt_int(double x) {
  if (std::isnan(x))
    return "–";
  auto n = static_cast<long long>(std::llround(x));
  auto s = std::to_string(std::llabs(n));
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0)
      out += ',';
    out += s[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string fmt(double x, int prec) {
  if (std::isnan(x))
    return "–";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, x);
  return b;
}

std::string fmt_ratio(double x) {
  if (std::isnan(x))
    return "–";
  char b[64];
  if (x >= 10)
    std::snprintf(b, sizeof(b), "%.0f×", x);
  else if (x >= 1)
    std::snprintf(b, sizeof(b), "%.2f×", x);
  else
    std::snprintf(b, sizeof(b), "%.3f×", x);
  return b;
}

// Latency in µs, shown in ms above 10 ms.
std::string fmt_lat(double us) {
  if (std::isnan(us) || us < 0)
    return "–";
  if (us >= 10000)
    return fmt(us / 1000, 1) + " ms";
  if (us >= 1000)
    return fmt(us / 1000, 2) + " ms";
  return fmt(us, 0) + " µs";
}

std::string label_of(const json::value& v) {
  auto sc = str(at(v, {"scenario"}));
  int callers = static_cast<int>(num(at(v, {"callers"}), 1));
  int inflight = static_cast<int>(num(at(v, {"inflight"}), 1));
  std::string l = sc;
  if (sc == "open")
    return l + " " + fmt_int(num(at(v, {"rate_target"}))) + "/s (" + std::to_string(callers)
           + " callers)";
  l += " " + std::to_string(callers) + "×" + std::to_string(inflight);
  if (sc == "stream")
    l += " (n=" + fmt_int(num(at(v, {"stream_n"}))) + ")";
  return l;
}

std::string singular(const std::string& unit) {
  if (unit == "echoes")
    return "echo";
  if (!unit.empty() && unit.back() == 's')
    return unit.substr(0, unit.size() - 1);
  return unit;
}

std::string system_name(const std::string& s) {
  static constexpr std::pair<std::string_view, std::string_view> names[] = {
    {"ours", "actor-host"},
    {"relay", "bare relay"},
    {"ts", "Genkit TS"},
    {"tsws", "Genkit TS + WS door"},
    {"ours-http", "actor-host (HTTP)"},
    {"tools", "Genkit tools server (HTTP)"},
  };
  for (const auto& [system, name] : names)
    if (s == system)
      return std::string{name};
  return s;
}

} // namespace bench::report
