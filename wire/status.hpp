#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace actor_host::wire {

/// Genkit's canonical status codes (the gRPC set), carried in error data.
enum class status_code : int {
  ok = 0,
  cancelled = 1,
  unknown = 2,
  invalid_argument = 3,
  deadline_exceeded = 4,
  not_found = 5,
  already_exists = 6,
  permission_denied = 7,
  resource_exhausted = 8,
  failed_precondition = 9,
  aborted = 10,
  out_of_range = 11,
  unimplemented = 12,
  internal = 13,
  unavailable = 14,
  data_loss = 15,
  unauthenticated = 16,
};

/// What a caller whose run outlived the manager's drain timeout is told
/// (CANCELLED), on every front door.
inline constexpr std::string_view drain_cancel_message
  = "Call cancelled: the manager is shutting down and the drain timeout passed";

/// "INVALID_ARGUMENT" etc.; "UNKNOWN" for codes outside the set.
std::string_view status_name(int code);

/// The HTTP status Genkit maps a status code to.
int http_status_for(int code);

/// The code of a status name ("FAILED_PRECONDITION" -> failed_precondition),
/// exact spelling as in Genkit's StatusName; nullopt for anything else.
std::optional<status_code> status_from_name(std::string_view name);

/// The code of a status number (14 -> unavailable); nullopt outside the set.
std::optional<status_code> status_from_number(std::int64_t code);

/// The same for a number read from JSON: only whole numbers of the set count
/// (a peer's 1e300 or 2.5 is no Status, and converting it would be undefined).
std::optional<status_code> status_from_json_number(double code);

} // namespace actor_host::wire
