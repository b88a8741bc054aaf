#include "wire/status.hpp"

#include <array>

namespace actor_host::wire {

namespace {

struct entry {
  std::string_view name;
  int http;
};

constexpr std::array<entry, 17> table{{
  {"OK", 200},
  {"CANCELLED", 499},
  {"UNKNOWN", 500},
  {"INVALID_ARGUMENT", 400},
  {"DEADLINE_EXCEEDED", 504},
  {"NOT_FOUND", 404},
  {"ALREADY_EXISTS", 409},
  {"PERMISSION_DENIED", 403},
  {"RESOURCE_EXHAUSTED", 429},
  {"FAILED_PRECONDITION", 400},
  {"ABORTED", 409},
  {"OUT_OF_RANGE", 400},
  {"UNIMPLEMENTED", 501},
  {"INTERNAL", 500},
  {"UNAVAILABLE", 503},
  {"DATA_LOSS", 500},
  {"UNAUTHENTICATED", 401},
}};

} // namespace

std::string_view status_name(int code) {
  if (code < 0 || code >= static_cast<int>(table.size()))
    return "UNKNOWN";
  return table[static_cast<std::size_t>(code)].name;
}

int http_status_for(int code) {
  if (code < 0 || code >= static_cast<int>(table.size()))
    return 500;
  return table[static_cast<std::size_t>(code)].http;
}

std::optional<status_code> status_from_name(std::string_view name) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name)
      return static_cast<status_code>(i);
  return std::nullopt;
}

std::optional<status_code> status_from_number(std::int64_t code) {
  if (code < 0 || code >= static_cast<std::int64_t>(table.size()))
    return std::nullopt;
  return static_cast<status_code>(code);
}

std::optional<status_code> status_from_json_number(double code) {
  if (!(code >= 0) || code >= static_cast<double>(table.size())
      || code != static_cast<double>(static_cast<std::int64_t>(code)))
    return std::nullopt;
  return static_cast<status_code>(static_cast<std::int64_t>(code));
}

} // namespace actor_host::wire
