#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace actor_host::config {

/// Parses `250ms`, `30s`, `2m`, `1h` or a bare number of milliseconds. At
/// most 2^40 ms (~35 years), so it can be added to a steady_clock time point.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

} // namespace actor_host::config
