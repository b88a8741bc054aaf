#pragma once

// Shared by the fuzz targets: the libFuzzer entry point and the oracles.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace actor_host::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A property every input must keep; a violation aborts, which libFuzzer
/// (and the replay driver, through the abort) reports as a crash.
inline void require(bool ok, const char* what, std::string_view detail = {}) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz oracle failed: %s: ", what);
  if (!detail.empty())
    std::fwrite(detail.data(), 1, detail.size(), stderr);
  std::fputc('\n', stderr);
  std::abort();
}

} // namespace actor_host::fuzz
