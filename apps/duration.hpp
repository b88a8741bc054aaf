#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace actor_host::apps {

/// Parses `250ms`, `30s`, `2m`, `1h` or a bare number of milliseconds.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

} // namespace actor_host::apps
