#!/usr/bin/env bash
# Configures and builds actor-host into BUILD_DIR (default: build/).
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]
# A Release tree (-O2, line tables; actor-host stripped, its debug info in
# actor-host.debug beside it). The unit tests are built in the sanitizer tree
# (scripts/test.sh), not here. BUILD_TARGETS="actor-host ..." builds only those.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DACTOR_HOST_UNIT_TESTS=OFF "$@"
elif [ $# -gt 0 ]; then
  cmake "$build" "$@"
fi
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "${JOBS:-2}" "${targets[@]}"
