#pragma once

#include "wire/status.hpp"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace actor_host::wire {

/// One entry of a Status error's `details`: a name and a text value.
using status_detail = std::pair<std::string_view, std::string_view>;

/// The JSON-RPC error object Genkit uses for a failed call: code -32000,
/// `message`, and `data` a Status {code, message[, details]}. Details with an
/// empty value are left out (no `details` at all when none remain). Both the
/// manager's own errors and a runtime's failed runs are shaped here, so
/// clients handle them alike.
std::string status_error(status_code code, std::string_view message,
                         std::initializer_list<status_detail> details = {});

/// The Status alone, {code, message[, details]}: what Reflection V1 and the
/// tools server's routes send as `{"error": Status}`.
std::string status_json(status_code code, std::string_view message,
                        std::initializer_list<status_detail> details = {});

} // namespace actor_host::wire
