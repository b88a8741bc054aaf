#pragma once

#include "wire/expected.hpp"

#include <string>
#include <string_view>

namespace actor_host::actions {

/// Checks and normalises a runtime's listActions result the way Genkit's
/// manager does: `actions` must be an object of entries with a string
/// `name`; `metadata: null` is dropped and a missing `key` is filled from the
/// map key. The normalised result, or the reason it is not one.
wire::expected<std::string> normalize_list_actions(std::string_view result);

} // namespace actor_host::actions
