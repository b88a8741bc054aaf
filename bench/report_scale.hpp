#pragma once

// bench_report's "Scale" section: the {"kind":"scale",...} lines of
// bench/run_scale.sh (calls in flight, runtimes at scale, idle connections)
// against issue 13's targets.

#include <boost/json.hpp>

#include <ostream>
#include <vector>

namespace bench::report {

/// `lines`: the scale lines and the memory lines. Writes nothing without a
/// scale line. The last line of each test (and system, and runtime count)
/// wins.
void write_scale_section(std::ostream& md, const std::vector<boost::json::object>& lines);

} // namespace bench::report
