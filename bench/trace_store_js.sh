#!/usr/bin/env bash
# The trace store's cost with a real Genkit JS runtime exporting its spans
# (issue 15's target: the routed echo rate with the store >= 0.8x without).
# Two managers side by side, each with the Genkit JS runtime of the interop
# tests (tests/interop/genkit-runtime.mjs, the pinned genkit from
# tests/interop/setup.sh; the script is a symlink into build/interop-node, so
# node runs it with --preserve-symlinks-main) as its child: `ours` with --trace-store none (no
# telemetry server, so the runtime exports nothing) and `ours+traces` with a
# store (the runtime exports every run's spans to the manager, which stores
# them beside its own route span); and `ours+genkit-ts`, a manager without a
# store whose runtime exports to the real Genkit telemetry server
# (bench/telemetry_server.mjs), what a Genkit user runs today. Rounds rotate the order; each runs
# bench_load echo 64 callers x 1 and 1 x 1 on /api/ws. JSON lines to
# bench/runs/<date>-trace-store-js.jsonl; bench/variants.py prints the ratios.
#
#   bench/trace_store_js.sh [--build-dir build] [--rounds 5] [--seconds 5] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/sh_helpers.sh"
side_by_side_options trace-store-js "$@"
require_built "build, then tests/interop/setup.sh $build" actor-host bench/bench_load \
  interop-node/genkit-runtime.mjs
start_scratch

start() { # name store [ENV=VALUE...] -> "<manager pid> <api port> <runtime pid>"
  local dir=$tmp/$1 store=$2
  shift 2
  mkdir -p "$dir"
  env "$@" "$build/actor-host" --role manager --port 0 --http-port 0 --worker-port 0 --trace-store "$store" \
    --project-root "$dir" -- node --preserve-symlinks-main "$build/interop-node/genkit-runtime.mjs" \
    >"$dir/manager.log" 2>&1 &
  local mpid=$!
  pids+=("$mpid")
  local http
  http=$(wait_line "$dir/manager.log" 'API server: http://localhost:\K\d+')
  # Registered once /api/runtimes lists it.
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$http/api/runtimes" | grep -q '"id"' && break
    sleep 0.1
  done
  local rpid
  rpid=$(pgrep -P "$mpid" -f genkit-runtime.mjs | head -1 || true)
  echo "$mpid $http $rpid"
}
mkdir -p "$tmp/ts"
node "$root/bench/telemetry_server.mjs" --node-dir "$build/interop-node" --dir "$tmp/ts" \
  >"$tmp/ts.out" 2>"$tmp/ts.err" &
pids+=("$!")
ts_port=$(wait_line "$tmp/ts.out" '"port":\K\d+')
read -r off_pid off_http off_rt < <(start off none)
read -r on_pid on_http on_rt < <(start on "$tmp/on/traces.sqlite")
# A manager without a store leaves the child's environment as it is (-- <command>).
read -r ts_pid ts_http ts_rt < <(start ts none GENKIT_TELEMETRY_SERVER="http://127.0.0.1:$ts_port")
[ -n "$off_rt" ] && [ -n "$on_rt" ] && [ -n "$ts_rt" ] ||
  { echo "trace_store_js.sh: a runtime did not start" >&2; exit 1; }

load() { # system http mpid rpid round callers
  "$build/bench/bench_load" --url "ws://127.0.0.1:$2/api/ws" --scenario echo --callers "$6" --inflight 1 \
    --seconds "$secs" --warmup 1 --watch "sut=$3" --watch "runtime=$4" --system "$1" --round "$5"
}
new_results_file
for r in $(seq "$rounds"); do
  for c in 64 1; do
    case $((r % 3)) in
      1) order="off on ts" ;;
      2) order="on ts off" ;;
      *) order="ts off on" ;;
    esac
    for s in $order; do
      case $s in
        off) load ours "$off_http" "$off_pid" "$off_rt" "$r" "$c" >>"$out" ;;
        on) load ours+traces "$on_http" "$on_pid" "$on_rt" "$r" "$c" >>"$out" ;;
        ts) load ours+genkit-ts "$ts_http" "$ts_pid" "$ts_rt" "$r" "$c" >>"$out" ;;
      esac
    done
  done
done
# The store did get the runtime's spans (not only the manager's own).
sleep 2
python3 - "$tmp/on/traces.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
total = db.execute("select count(*) from spans").fetchone()[0]
ours = db.execute("select count(*) from spans where json like '%\"genkit:type\":\"actor-host\"%'").fetchone()[0]
print(f"stored spans: {total} ({total - ours} exported by the Genkit runtime, {ours} the manager's own)")
PY
echo "raw: $out"
python3 "$root/bench/variants.py" "$out"
