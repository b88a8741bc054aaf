#pragma once

#include <atomic>
#include <cstdint>

namespace actor_host {

/// Registrations of an id held by another connection: refused (the holder
/// answered a ping) or handed over (it did not). Counted by the directory,
/// shown on /metrics.
inline std::atomic<std::uint64_t> runtime_register_refused{0};
inline std::atomic<std::uint64_t> runtime_takeovers{0};

} // namespace actor_host
