#!/usr/bin/env bash
# Services with replicas (issue 32), side by side in one run: one manager,
# runtimes from bench_fake_runtime, echo 64 callers x 1 on /api/ws.
#
#   bottleneck: three runtimes that each serve one call at a time
#     (--serial-us, 1 ms per echo) registered under one name; calls pinned
#     to one of them (runtimeId, what a single-process service gets) against
#     calls by name (runtimeName: balanced over the three). The rate should
#     scale with the replicas.
#   cost: three fast runtimes under one name; pinned against by name: the
#     manager's CPU per call of balancing (target: within 1.1x of pinned).
#
# Rounds alternate the order. JSON lines to bench/runs/<date>-replicas.jsonl,
# medians and paired ratios on stdout.
#
#   bench/replicas.sh [--build-dir build] [--rounds 5] [--seconds 5] [--serial-us 1000] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/sh_helpers.sh"
serial=1000
extra_option() { case $1 in --serial-us) serial=$2 ;; *) return 1 ;; esac; }
side_by_side_options replicas "$@"
require_built "build with -DACTOR_HOST_BENCH=ON" actor-host bench/bench_load bench/bench_fake_runtime
start_scratch

start_manager
# One process per replica: a --serial-us process serves one call at a time.
fake() { # prefix name serial
  "$build/bench/bench_fake_runtime" --url "ws://127.0.0.1:$refl" --n 1 --prefix "$1" --name "$2" \
    --serial-us "$3" --lifetime 7200 >"$tmp/$1.out" 2>"$tmp/$1.err" &
  pids+=("$!")
  wait_line "$tmp/$1.out" '"pid":\K\d+' >/dev/null
}
for i in 1 2 3; do fake "slow$i" slow "$serial"; done
for i in 1 2 3; do fake "fast$i" fast 0; done

load() { # round system [runtime args...]
  local r=$1 sys=$2
  shift 2
  "$build/bench/bench_load" --url "ws://127.0.0.1:$http/api/ws" --scenario echo --callers 64 --inflight 1 \
    --seconds "$secs" --warmup 1 --watch "sut=$mpid" --system "$sys" --round "$r" "$@"
}
new_results_file
for r in $(seq "$rounds"); do
  phases=("slow-pinned --runtime-id slow1-0" "slow-by-name --runtime-name slow"
          "fast-pinned --runtime-id fast1-0" "fast-by-name --runtime-name fast")
  [ $((r % 2)) = 0 ] && phases=("${phases[1]}" "${phases[0]}" "${phases[3]}" "${phases[2]}")
  for p in "${phases[@]}"; do
    # shellcheck disable=SC2086
    load "$r" $p >>"$out"
  done
done
summarize_results <<'PY'
import statistics, sys
from side_by_side import lines_by_system_round, manager_cpu as cpu
by = lines_by_system_round(sys.argv[1])
for s in sorted(by):
    rs = by[s].values()
    print(f"{s:14s} rate {statistics.median(r['rate'] for r in rs):9.0f} calls/s   manager "
          f"{statistics.median(cpu(r) for r in rs):6.1f} us CPU per call   errors {sum(r.get('errors', 0) for r in rs)}")
def paired(a, b, f):
    return statistics.median(f(by[a][k]) / f(by[b][k]) for k in by[a] if k in by[b])
print(f"slow: by name / pinned rate {paired('slow-by-name', 'slow-pinned', lambda r: r['rate']):.2f}x "
      f"(three replicas that serve one call at a time; ideal 3x)")
print(f"fast: by name / pinned manager CPU per call {paired('fast-by-name', 'fast-pinned', cpu):.2f}x "
      f"(target <= 1.1x), rate {paired('fast-by-name', 'fast-pinned', lambda r: r['rate']):.2f}x")
PY
