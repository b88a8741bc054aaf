#!/usr/bin/env bash
# The gRPC front door beside /api/ws, side by side in one run (issue 16's
# target: gRPC >= 0.7x the /api/ws rate at <= 1.5x its manager CPU per call;
# issue 35's: gRPC unary <= 1.0x the /api/ws manager CPU per call).
# One manager (--grpc-port 0) with one fake runtime; every round runs, in
# alternating order, /api/ws echo 64 callers x 1 (bench_load) and gRPC echo
# 64 channels x 1 and 1 channel x 64 (bench_grpc_load), the same action and
# input; then streaming, /api/ws and gRPC (the server-streaming twin
# streamCount_stream), 8 callers x 1 stream of 1,000 chunks each, rate in
# chunks/s. JSON lines to bench/runs/<date>-grpc-vs-ws.jsonl, medians and
# ratios on stdout.
#
#   bench/grpc_vs_ws.sh [--build-dir build] [--rounds 5] [--seconds 5] [--out FILE]
#                       [--base-bin PATH] [--streams 0|1] [--floor 0|1]
#
# --base-bin: a second manager from another build's actor-host (a before/
# after in one run), with a fake runtime of its own; its systems carry the
# suffix +base (ours-ws+base, ours-grpc+base, ...), each of its phases runs
# next to the same phase of the first manager, the order of the two swapped
# every round, and the summary adds the paired ratios this build / base.
# Both managers are up all along (the idle one costs next to nothing).
# --streams 0 leaves the streaming phases out.
# --floor 1 adds grpc++'s own floor (bench_grpc_floor, the door's async
# generic service and completion-queue thread echoing each request, no
# actors): systems grpc-floor (64 channels x 1) and grpc-floor-1ch, each
# round beside the others, the server's CPU per call as the manager's; and
# grpc-floor-handoff (64 x 1): the same server answering from a second
# thread, one post per call, as the door's answers come from the I/O thread.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/sh_helpers.sh"
base_bin=""
streams=1
floor=0
extra_option() {
  case $1 in
    --floor) floor=$2 ;;
    --base-bin) base_bin=$2 ;;
    --streams) streams=$2 ;;
    *) return 1 ;;
  esac
}
side_by_side_options grpc-vs-ws "$@"
require_built "build with -DACTOR_HOST_BENCH=ON" actor-host bench/bench_load bench/bench_grpc_load \
  bench/bench_fake_runtime
[ -z "$base_bin" ] || [ -x "$base_bin" ] || { echo "grpc_vs_ws.sh: $base_bin is not executable" >&2; exit 1; }
start_scratch

declare -A mgr_pid http_port grpc_port fake_pid suffix
# One manager and its fake runtime: id "new" (this build, systems as named)
# or "base" (--base-bin, systems with the suffix +base).
start_system() { # id binary
  local id=$1 bin=$2 dir log refl
  dir=$tmp/$id
  mkdir -p "$dir"
  log=$dir/manager.log
  "$bin" --role manager --port 0 --http-port 0 --worker-port 0 --trace-store none \
    --project-root "$dir" --grpc-port 0 >"$log" 2>&1 &
  mgr_pid[$id]=$!
  pids+=("$!")
  refl=$(wait_line "$log" 'reflection server: ws://localhost:\K\d+')
  http_port[$id]=$(wait_line "$log" 'API server: http://localhost:\K\d+')
  grpc_port[$id]=$(wait_line "$log" 'gRPC front door: \S+:\K\d+')
  "$build/bench/bench_fake_runtime" --url "ws://127.0.0.1:$refl" --n 1 --prefix bench-rt --lifetime 7200 \
    >"$dir/fake.out" 2>"$dir/fake.err" &
  pids+=("$!")
  fake_pid[$id]=$(wait_line "$dir/fake.out" '"pid":\K\d+')
  # The gRPC catalog follows the runtime's registration: wait for the method.
  for _ in $(seq 100); do
    "$build/bench/bench_grpc_load" --target "127.0.0.1:${grpc_port[$id]}" --seconds 0.1 --warmup 0 2>/dev/null \
      | grep -q '"ok":true' && break
    sleep 0.1
  done
}
declare -A floor_pid floor_port
if [ "$floor" = 1 ]; then
  require_built "build with -DACTOR_HOST_BENCH=ON" bench/bench_grpc_floor
  for h in 0 1; do
    "$build/bench/bench_grpc_floor" --handoff $h >"$tmp/floor$h.out" 2>"$tmp/floor$h.err" &
    pids+=("$!")
    floor_pid[$h]=$(wait_line "$tmp/floor$h.out" '"pid":\K\d+')
    floor_port[$h]=$(wait_line "$tmp/floor$h.out" '"port":\K\d+')
  done
fi
ids=(new)
suffix[new]=""
start_system new "$build/actor-host"
if [ -n "$base_bin" ]; then
  ids+=(base)
  suffix[base]="+base"
  start_system base "$base_bin"
fi

watch() { echo --watch "sut=${mgr_pid[$1]}" --watch "runtime=${fake_pid[$1]}"; }
ws() { # round id
  # shellcheck disable=SC2046
  "$build/bench/bench_load" --url "ws://127.0.0.1:${http_port[$2]}/api/ws" --scenario echo --callers 64 \
    --inflight 1 --seconds "$secs" --warmup 1 $(watch "$2") --system "ours-ws${suffix[$2]}" --round "$1"
}
grpc_run() { # round id callers inflight system
  # shellcheck disable=SC2046
  "$build/bench/bench_grpc_load" --target "127.0.0.1:${grpc_port[$2]}" --callers "$3" --inflight "$4" \
    --seconds "$secs" --warmup 1 $(watch "$2") --system "$5${suffix[$2]}" --round "$1"
}
floor_run() { # round callers inflight system handoff: a floor server, no runtime
  "$build/bench/bench_grpc_load" --target "127.0.0.1:${floor_port[$5]}" --callers "$2" \
    --inflight "$3" --seconds "$secs" --warmup 1 --watch "sut=${floor_pid[$5]}" --system "$4" \
    --round "$1" >>"$out"
}
grpc_64() { grpc_run "$1" "$2" 64 1 ours-grpc; }
grpc_1ch() { grpc_run "$1" "$2" 1 64 ours-grpc-1ch; }
ws_stream() {
  # shellcheck disable=SC2046
  "$build/bench/bench_load" --url "ws://127.0.0.1:${http_port[$2]}/api/ws" --scenario stream --stream-n 1000 \
    --callers 8 --inflight 1 --seconds "$secs" --warmup 1 $(watch "$2") \
    --system "ours-ws-stream${suffix[$2]}" --round "$1"
}
grpc_stream() {
  # shellcheck disable=SC2046
  "$build/bench/bench_grpc_load" --target "127.0.0.1:${grpc_port[$2]}" --scenario stream --stream-n 1000 \
    --callers 8 --inflight 1 --seconds "$secs" --warmup 1 $(watch "$2") \
    --system "ours-grpc-stream${suffix[$2]}" --round "$1"
}
phase() { # round phase: the phase on every manager, their order swapped every round
  local id order=("${ids[@]}")
  [ $(($1 % 2)) = 0 ] && [ ${#ids[@]} = 2 ] && order=("${ids[1]}" "${ids[0]}")
  for id in "${order[@]}"; do "$2" "$1" "$id" >>"$out"; done
}
new_results_file
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then
    unary=(ws grpc_64 grpc_1ch) streaming=(ws_stream grpc_stream)
  else
    unary=(grpc_1ch grpc_64 ws) streaming=(grpc_stream ws_stream)
  fi
  [ "$streams" = 1 ] || streaming=()
  for p in "${unary[@]}" "${streaming[@]}"; do
    phase "$r" "$p"
    # The floor beside the gRPC phases it is the floor of.
    if [ "$floor" = 1 ]; then
      case $p in
        grpc_64) floor_run "$r" 64 1 grpc-floor 0; floor_run "$r" 64 1 grpc-floor-handoff 1 ;;
        grpc_1ch) floor_run "$r" 1 64 grpc-floor-1ch 0 ;;
      esac
    fi
  done
done
summarize_results <<'PY'
import statistics, sys
from side_by_side import lines_by_system_round, manager_cpu as cpu
by = lines_by_system_round(sys.argv[1])
def med(sys_, f):
    return statistics.median(f(r) for r in by[sys_].values())
def paired(a, b, f):
    return [f(by[a][k]) / f(by[b][k]) for k in sorted(by[a]) if k in by[b]]
rate = lambda r: r['rate']
for s in sorted(by):
    unit = next(iter(by[s].values()))['unit']
    print(f"{s:21s} rate {med(s, rate):9.0f} {unit}/s   manager {med(s, cpu):7.1f} us CPU per {unit[:-1]}   errors {sum(r.get('errors', 0) for r in by[s].values())}")
fmt = lambda xs: ' '.join(f'{x:.2f}' for x in xs)
for suffix in ('', '+base'):
    for g, base in (('ours-grpc', 'ours-ws'), ('ours-grpc-1ch', 'ours-ws'), ('ours-grpc-stream', 'ours-ws-stream'),
                    ('grpc-floor', 'ours-ws'), ('grpc-floor-1ch', 'ours-ws'), ('grpc-floor-handoff', 'ours-ws'),
                    ('ours-grpc', 'grpc-floor'), ('ours-grpc-1ch', 'grpc-floor-1ch')):
        g, base = g + suffix, base + suffix
        if g not in by or base not in by:
            continue
        ratios, cpus = paired(g, base, rate), paired(g, base, cpu)
        print(f"{g}/{base}: rate {statistics.median(ratios):.2f}x (target >= 0.7x), manager CPU per op {statistics.median(cpus):.2f}x (target <= 1.5x; issue 35 unary <= 1.0x), paired by round [{fmt(cpus)}]")
for s in sorted(by):
    if s.endswith('+base') or s + '+base' not in by:
        continue
    b = s + '+base'
    print(f"{s} / {b}: rate {statistics.median(paired(s, b, rate)):.2f}x, manager CPU per op {statistics.median(paired(s, b, cpu)):.2f}x, paired by round [{fmt(paired(s, b, cpu))}]")
PY
