#!/usr/bin/env bash
# The gRPC front door beside /api/ws, side by side in one run (issue 16's
# target: gRPC >= 0.7x the /api/ws rate at <= 1.5x its manager CPU per call).
# One manager (--grpc-port 0) with one fake runtime; every round runs, in
# alternating order, /api/ws echo 64 callers x 1 (bench_load) and gRPC echo
# 64 channels x 1 and 1 channel x 64 (bench_grpc_load), the same action and
# input; then streaming, /api/ws and gRPC (the server-streaming twin
# streamCount_stream), 8 callers x 1 stream of 1,000 chunks each, rate in
# chunks/s. JSON lines to bench/runs/<date>-grpc-vs-ws.jsonl, medians and
# ratios on stdout.
#
#   bench/grpc_vs_ws.sh [--build-dir build] [--rounds 5] [--seconds 5] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/sh_helpers.sh"
side_by_side_options grpc-vs-ws "$@"
require_built "build with -DACTOR_HOST_BENCH=ON" actor-host bench/bench_load bench/bench_grpc_load \
  bench/bench_fake_runtime
start_scratch

start_manager --grpc-port 0
grpc=$(wait_line "$tmp/manager.log" 'gRPC front door: \S+:\K\d+')
"$build/bench/bench_fake_runtime" --url "ws://127.0.0.1:$refl" --n 1 --prefix bench-rt --lifetime 7200 \
  >"$tmp/fake.out" 2>"$tmp/fake.err" &
pids+=("$!")
fpid=$(wait_line "$tmp/fake.out" '"pid":\K\d+')
# The gRPC catalog follows the runtime's registration: wait for the method.
for _ in $(seq 100); do
  "$build/bench/bench_grpc_load" --target "127.0.0.1:$grpc" --seconds 0.1 --warmup 0 2>/dev/null \
    | grep -q '"ok":true' && break
  sleep 0.1
done

ws() {
  "$build/bench/bench_load" --url "ws://127.0.0.1:$http/api/ws" --scenario echo --callers 64 --inflight 1 \
    --seconds "$secs" --warmup 1 --watch "sut=$mpid" --watch "runtime=$fpid" --system ours-ws --round "$1"
}
grpc_run() { # round callers inflight system
  "$build/bench/bench_grpc_load" --target "127.0.0.1:$grpc" --callers "$2" --inflight "$3" \
    --seconds "$secs" --warmup 1 --watch "sut=$mpid" --watch "runtime=$fpid" --system "$4" --round "$1"
}
ws_stream() {
  "$build/bench/bench_load" --url "ws://127.0.0.1:$http/api/ws" --scenario stream --stream-n 1000 \
    --callers 8 --inflight 1 --seconds "$secs" --warmup 1 --watch "sut=$mpid" --watch "runtime=$fpid" \
    --system ours-ws-stream --round "$1"
}
grpc_stream() {
  "$build/bench/bench_grpc_load" --target "127.0.0.1:$grpc" --scenario stream --stream-n 1000 \
    --callers 8 --inflight 1 --seconds "$secs" --warmup 1 --watch "sut=$mpid" --watch "runtime=$fpid" \
    --system ours-grpc-stream --round "$1"
}
new_results_file
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then
    ws "$r" >>"$out"; grpc_run "$r" 64 1 ours-grpc >>"$out"; grpc_run "$r" 1 64 ours-grpc-1ch >>"$out"
    ws_stream "$r" >>"$out"; grpc_stream "$r" >>"$out"
  else
    grpc_run "$r" 1 64 ours-grpc-1ch >>"$out"; grpc_run "$r" 64 1 ours-grpc >>"$out"; ws "$r" >>"$out"
    grpc_stream "$r" >>"$out"; ws_stream "$r" >>"$out"
  fi
done
summarize_results <<'PY'
import statistics, sys
from side_by_side import lines_by_system_round, manager_cpu as cpu
by = lines_by_system_round(sys.argv[1])
def med(sys_, f):
    return statistics.median(f(r) for r in by[sys_].values())
rate = lambda r: r['rate']
for s in sorted(by):
    unit = next(iter(by[s].values()))['unit']
    print(f"{s:16s} rate {med(s, rate):9.0f} {unit}/s   manager {med(s, cpu):7.1f} us CPU per {unit[:-1]}   errors {sum(r.get('errors', 0) for r in by[s].values())}")
for g, base in (('ours-grpc', 'ours-ws'), ('ours-grpc-1ch', 'ours-ws'), ('ours-grpc-stream', 'ours-ws-stream')):
    if g not in by or base not in by:
        continue
    ratios = [by[g][k]['rate'] / by[base][k]['rate'] for k in by[g] if k in by[base]]
    cpus = [cpu(by[g][k]) / cpu(by[base][k]) for k in by[g] if k in by[base]]
    print(f"{g}/{base}: rate {statistics.median(ratios):.2f}x (target >= 0.7x), manager CPU per op {statistics.median(cpus):.2f}x (target <= 1.5x), paired by round")
PY
