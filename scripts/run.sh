#!/usr/bin/env bash
# Quickstart: installs what is missing, builds, then starts a manager on
# loopback (reflection server on the first free port in 3200-3400, API server
# on 4100) with the built-in demo runtime as a configured service (a child
# process the manager starts, restarts on failure, and stops on exit).
# Ctrl-C stops both. Extra arguments go to the manager (e.g. --config FILE,
# --log-format json, or -- <command> to run your own runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
# Only the binary (Release, stripped; its debug info in build/actor-host.debug
# for crash reports): scripts/test.sh builds the rest of the tree.
BUILD_TARGETS=actor-host bash "$root/scripts/build.sh" "$root/build"
bin="$root/build/actor-host"
echo "actor-host: try  $bin run /flow/echo '\"hi\"'  in another terminal" >&2
exec "$bin" --role manager --demo "$@"
