#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

/// The one source of ids, keys and trace ids (iii invocation and worker ids,
/// reattach tokens, channel ids and keys, trace ids): the kernel's CSPRNG.
/// A seeded PRNG (mt19937_64 from one 32-bit random_device draw) lets anyone
/// who sees one id compute the seed and every id after it, channel keys
/// included.
namespace actor_host::wire {

/// Fills `out` with `n` bytes from getrandom(2) (small draws from a
/// per-thread pool refilled 512 bytes at a time); never returns without them
/// (a failing kernel CSPRNG aborts: there is no safe fallback for keys).
void secure_random_bytes(void* out, std::size_t n);

/// `n` random bytes as 2n lower-case hex digits (trace ids: n = 16).
std::string secure_random_hex(std::size_t n);

/// Bytes drawn so far by this process (a counter, for tests and metrics).
std::uint64_t secure_random_bytes_drawn();

/// Compares two secrets (access keys, tokens) in time that depends on their
/// lengths only, not on where they first differ.
bool secrets_equal(std::string_view a, std::string_view b);

} // namespace actor_host::wire
