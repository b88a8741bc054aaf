#include "config/duration.hpp"

#include <charconv>
#include <cstdint>

namespace actor_host::config {

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || value < 0 || end == text.data())
    return std::nullopt;
  std::string_view unit{end, static_cast<std::size_t>(text.data() + text.size() - end)};
  std::int64_t factor = 0;
  if (unit.empty() || unit == "ms")
    factor = 1;
  else if (unit == "s")
    factor = 1000;
  else if (unit == "m")
    factor = 60 * 1000;
  else if (unit == "h")
    factor = 60 * 60 * 1000;
  else
    return std::nullopt;
  constexpr std::int64_t max_ms = std::int64_t{1} << 40;
  if (value > max_ms / factor)
    return std::nullopt;
  return value * factor;
}

} // namespace actor_host::config
