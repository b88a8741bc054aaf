#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test
# (unit, fuzz corpus replay, CLI and interop against the real Genkit peers)
# through ctest, then the unit tests and the fuzz corpus replay again under ASan+UBSan and the
# asio/actor bridge under TSan.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$root/build"
(cd "$root/build" && ctest --output-on-failure --timeout 600)

# Sanitizers on the unit tests (the interop tests run the release build).
# CAF's own UBSan finding is excluded in CMake (-fno-sanitize=null, see there).
san="$root/build-asan"
if [ ! -f "$san/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$san" $(command -v ninja >/dev/null && echo -G Ninja) \
    -DCMAKE_BUILD_TYPE=Debug -DACTOR_HOST_SANITIZE=ON -DACTOR_HOST_INTEROP_TESTS=OFF
fi
# fuzz_replay: the fuzz corpus (fuzz/corpus) replayed under the sanitizers too.
cmake --build "$san" --target unit_tests fuzz_replay -j "${JOBS:-2}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$san" && ctest --output-on-failure -L unit)

# ThreadSanitizer on the asio <-> actor bridge (net/, proc/), without CAF:
# Debian's CAF is not TSan-instrumented (tests/tsan/bridge_test.cpp).
tsan="$root/build-tsan"
if [ ! -f "$tsan/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$tsan" $(command -v ninja >/dev/null && echo -G Ninja) \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACTOR_HOST_TSAN=ON \
    -DACTOR_HOST_INTEROP_TESTS=OFF -DACTOR_HOST_BENCH=OFF
fi
cmake --build "$tsan" --target bridge_tsan_test -j "${JOBS:-2}"
(cd "$tsan" && ctest --output-on-failure -L tsan)
