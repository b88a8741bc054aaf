#pragma once

#include <string>

namespace actor_host::actions {

/// Checks and normalises a runtime's listActions result the way Genkit's
/// manager does: `actions` must be an object of entries with a string
/// `name`; `metadata: null` is dropped and a missing `key` is filled from the
/// map key. Rewrites `result` in place; false with a reason otherwise.
bool normalize_list_actions(std::string& result, std::string& why);

} // namespace actor_host::actions
