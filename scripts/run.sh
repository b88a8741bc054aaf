#!/usr/bin/env bash
# Quickstart: installs what is missing, builds, then starts a manager on
# loopback (reflection server on the first free port in 3200-3400, API server
# on 4100) with the built-in demo runtime registered to it. Ctrl-C stops both.
# Extra arguments go to the manager.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$root/build"
bin="$root/build/actor-host"

log=$(mktemp)
"$bin" --role manager "$@" 2> >(tee "$log" >&2) &
manager=$!
runtime=
cleanup() {
  [ -n "$runtime" ] && kill "$runtime" 2>/dev/null
  kill "$manager" 2>/dev/null
  wait 2>/dev/null
  rm -f "$log"
}
trap cleanup EXIT INT TERM

url=
for _ in $(seq 100); do
  url=$(grep -o 'ws://localhost:[0-9]*' "$log" | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 "$manager" 2>/dev/null || exit 1
  sleep 0.1
done
[ -n "$url" ] || { echo "manager did not start" >&2; exit 1; }

"$bin" --role runtime --demo --id demo --manager "$url" &
runtime=$!
echo "actor-host is up: try  $bin run /flow/echo '\"hi\"'  in another terminal" >&2
wait "$manager"
