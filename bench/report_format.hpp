#pragma once

// bench_report's reading of result lines and its number formats.

#include <boost/json.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

namespace bench::report {

namespace json = boost::json;

/// A number member (double, int64 or uint64), else `d`.
double num(const json::value* v, double d = NAN);
/// A string member, else `d`.
std::string str(const json::value* v, std::string d = {});
/// The value at `path` of nested objects; null where one is missing.
const json::value* at(const json::value& v, std::initializer_list<const char*> path);
/// The median of the values that are not NaN (NaN if none are).
double median(std::vector<double> v);

/// 1,234,567; "–" for NaN.
std::string fmt_int(double x);
/// Fixed `prec` decimals; "–" for NaN.
std::string fmt(double x, int prec = 1);
/// A ratio as 12×, 1.23× or 0.123×.
std::string fmt_ratio(double x);
/// A latency given in µs, shown in ms from 1 ms.
std::string fmt_lat(double us);

/// "echo 64×1", "stream 1×1 (n=10,000)", "open 1,000/s (4 callers)".
std::string label_of(const json::value& v);
/// "calls" -> "call", "echoes" -> "echo".
std::string singular(const std::string& unit);
/// A system's id as the report names it ("ours" -> "actor-host").
std::string system_name(const std::string& s);

} // namespace bench::report
