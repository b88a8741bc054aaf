#pragma once

#include <string>
#include <vector>

namespace actor_host::registry {

/// The action keys a listActions result (`{"actions":{key:{...,"metadata":
/// {...}}}}`) declares safe to run twice: `metadata.retry` is "idempotent".
/// Anything malformed declares nothing (the result comes from a runtime).
/// At most max_declared keys, each a valid action key length.
std::vector<std::string> idempotent_actions(const std::string& list_actions_result);

inline constexpr std::size_t max_declared = 4096;

} // namespace actor_host::registry
