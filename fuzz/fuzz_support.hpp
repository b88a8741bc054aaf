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

/// Oracles for bugs another branch is fixing (fuzz/README.md, "Strict
/// oracles"): on only with ACTOR_HOST_FUZZ_STRICT=1, so a fuzzer run is not
/// stopped by a known finding before it reaches new ones.
inline bool strict() {
  static const bool on = [] {
    auto* v = std::getenv("ACTOR_HOST_FUZZ_STRICT");
    return v && *v && std::string_view{v} != "0";
  }();
  return on;
}

} // namespace actor_host::fuzz
