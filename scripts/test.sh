#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test.
#   build/       Release: the binary, the benchmarks; ctest runs the CLI and
#                interop tests against the real Genkit and iii peers and the
#                bench smoke run
#   build-asan/  ASan+UBSan: the unit tests (deterministic and integration
#                suites) and the fuzz corpus replay, built only here
#   build-tsan/  TSan: the asio/actor bridge (net/, proc/), without CAF
# Every tree compiles through ccache (CCACHE_DIR, default ~/.cache/ccache), so
# a second run on the same machine recompiles only what changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# Each step's time, and the disk left: a CI run once ended in ENOSPC with
# the three trees, the compiler cache and the test peers on a full disk.
stamp() {
  echo "== test.sh: $* ($(date -u +%T), ${SECONDS}s; $(df -h --output=avail "$root" | tail -1 | tr -d ' ') free)"
}
bash "$root/scripts/install-deps.sh"
stamp "dependencies ready"
bash "$root/scripts/build.sh" "$root/build"
stamp "build/ built"

# Sanitizers on the unit tests (the interop tests run the release build).
# CAF's own UBSan finding is excluded in CMake (-fno-sanitize=null, see there).
san="$root/build-asan"
[ -f "$san/CMakeCache.txt" ] || cmake -S "$root" -B "$san" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=Debug -DACTOR_HOST_SANITIZE=ON -DACTOR_HOST_INTEROP_TESTS=OFF \
  -DACTOR_HOST_BENCH=OFF >/dev/null
# ThreadSanitizer on the asio <-> actor bridge (net/, proc/), without CAF:
# Debian's CAF is not TSan-instrumented (tests/tsan/bridge_test.cpp). -O1:
# TSan needs no more, and net/ws_session.cpp takes minutes at -O2.
tsan="$root/build-tsan"
[ -f "$tsan/CMakeCache.txt" ] || cmake -S "$root" -B "$tsan" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DACTOR_HOST_TSAN=ON -DACTOR_HOST_INTEROP_TESTS=OFF -DACTOR_HOST_BENCH=OFF \
  -DACTOR_HOST_UNIT_TESTS=OFF >/dev/null
build_sanitizer_trees() {
  # fuzz_replay: the fuzz corpus (fuzz/corpus) replayed under the sanitizers too.
  cmake --build "$san" --target unit_tests fuzz_replay -j "$1"
  cmake --build "$tsan" --target bridge_tsan_test -j "$1"
}

# The interop tests mostly wait on sockets and child processes (about 0.7 of
# one core on 2): the sanitizer trees are built meanwhile at the lowest
# priority (nice 19: the tests take the CPU they want first), then stopped,
# and finished in the foreground afterwards.
setsid nice -n 19 bash -c "$(declare -f build_sanitizer_trees); san='$san' tsan='$tsan';
  build_sanitizer_trees $jobs" >"$san/background-build.log" 2>&1 &
background=$!
finish_background() {
  kill -TERM -- "-$background" 2>/dev/null || true
  wait "$background" 2>/dev/null || true
}
trap finish_background EXIT
(cd "$root/build" && ctest --output-on-failure --timeout 600)
stamp "build/ tests done"
finish_background
trap - EXIT

build_sanitizer_trees "$jobs"
stamp "sanitizer trees built"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$san" && ctest --output-on-failure -L 'unit|integration')
unset ASAN_OPTIONS UBSAN_OPTIONS
stamp "build-asan/ tests done"
(cd "$tsan" && ctest --output-on-failure -L tsan)
stamp "build-tsan/ tests done"
