#!/usr/bin/env bash
# Quickstart: installs what is missing, builds, and starts a manager on
# loopback (reflection server on the first free port in 3200-3400, API server
# on 4100). Extra arguments go to actor-host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$root/build"
exec "$root/build/actor-host" --role manager "$@"
