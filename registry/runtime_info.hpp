#pragma once

#include "wire/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace actor_host::registry {

/// What the manager knows of a registered runtime (Genkit's RuntimeInfo).
struct runtime_info {
  std::string id;
  std::int64_t pid = 0;
  std::optional<std::string> name;
  std::optional<std::string> genkit_version;
  std::optional<double> spec_version;
  std::string reflection_server_url; // the manager's own URL (virtual, as Genkit does)
  std::string timestamp;             // ISO 8601, time of registration
  std::string protocol;              // "v1" for a Reflection V1 runtime; "" = left out (V2)

  /// RuntimeInfo JSON as the Genkit tools API returns it.
  std::string to_json() const;
};

/// Runtime ids, names and versions longer than this are refused: they are
/// listed to every caller and written into log lines.
inline constexpr std::size_t max_peer_text_bytes = 256;
inline constexpr std::size_t max_trace_id_bytes = 128;

/// Why peer-supplied text is unfit to keep (too long, control characters),
/// or "".
std::string peer_text_problem(std::string_view s, std::size_t max_bytes);

/// A trace id we may echo in a header or a log line: 1 to 128 of
/// [A-Za-z0-9._-] (Genkit's are 32 hex digits).
bool valid_trace_id(std::string_view s);

/// Validates `register` params: `id` a non-empty string and `pid` an integer
/// are required; `name`, `genkitVersion` (strings), `reflectionApiSpecVersion`
/// (number) and `envs` (array of strings) are optional. Unknown keys are
/// ignored. On failure the reason, worded for a runtime author to act on.
wire::expected<runtime_info> parse_register_params(std::string_view params);

/// Current UTC time as "2026-12-02T12:00:00.123Z".
std::string iso_timestamp_now();

} // namespace actor_host::registry
