#!/usr/bin/env bash
# Where the manager's CPU goes in one scenario: starts actor-host's manager
# and one fake runtime, runs one bench_load phase, records the manager with
# `perf record` meanwhile, and writes the flat profile (self time per symbol
# and per library, summed into categories by profile_categories.py; system
# calls, futex calls and context switches per op) next to the phase's JSON
# line. Run it with nothing else running, like any benchmark.
#
#   bench/profile.sh [--build-dir DIR] [--seconds S] [--out DIR]
#                    [--scenario "echo 64 1"] [--call-graph] [--http] [--stream-n N]
#                    [--grpc]
# The perf stat that counts syscalls runs during the recording: its
# tracepoints cost the manager ~6-9 % (their own category in categories.txt).
# --http drives the HTTP front door (POST /api/runAction, /api/streamAction)
# instead of /api/ws. --grpc drives the gRPC front door (bench_grpc_load:
# "echo 64 1" is 64 channels x 1 call, "echo 1 64" one channel x 64), and
# adds the profile per thread (by-thread.txt: the door's "grpc-door"
# against the I/O thread).
# --call-graph records kernel stacks (frame pointers), and adds the time spent
# under each system call and in the scheduler's wake-ups (children %).
#   ENV for the manager (e.g. LD_PRELOAD=..., ACTOR_HOST_CAF=...) passes through.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build seconds=5 out="" scenario="echo 64 1" graph=() http=0 grpc=0 stream_n=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --out) out=$2; shift ;;
    --scenario) scenario=$2; shift ;;
    --call-graph) graph=(-g) ;;
    --http) http=1 ;;
    --grpc) grpc=1 ;;
    --stream-n) stream_n=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "profile.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
read -r s c k <<<"$scenario"
out=${out:-$build/bench-profile/$s-${c}x$k$([ $http = 1 ] && echo -http)$([ $grpc = 1 ] && echo -grpc)}
mkdir -p "$out"
bin=$build/bench
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
. "$(dirname "$0")/sh_helpers.sh"

p=$(free_port); h=$(free_port); g=$(free_port)
grpc_flags=()
[ $grpc = 1 ] && grpc_flags=(--grpc-port "$g")
ACTOR_HOST_TRACE_STORE=${ACTOR_HOST_TRACE_STORE:-none} "$build/actor-host" --role manager --log-level warn --port "$p" --http-port "$h" --worker-port 0 \
  "${grpc_flags[@]}" >"$out/manager.log" 2>&1 &
mgr=$!; pids+=($mgr)
wait_listen "$p" && wait_listen "$h" || { echo "profile.sh: the manager did not start" >&2; exit 1; }
"$bin/bench_fake_runtime" --url "ws://127.0.0.1:$p" --n 1 --prefix bench-rt --lifetime 7200 \
  >"$out/fake.out" 2>"$out/fake.err" &
pids+=($!)
for i in $(seq 400); do [ -n "$(head -1 "$out/fake.out")" ] && break; sleep 0.05; done
extra=()
[ "$s" = stream ] && extra+=(--stream-n "$stream_n")
url="ws://127.0.0.1:$h/api/ws"
[ $http = 1 ] && url="http://127.0.0.1:$h"
load() { # the load generator of the door measured, with its own arguments
  if [ $grpc = 1 ]; then
    "$bin/bench_grpc_load" --target "127.0.0.1:$g" --scenario "$s" --callers "$c" --inflight "$k" "$@"
  else
    "$bin/bench_load" --url "$url" --scenario "$s" --callers "$c" --inflight "$k" "$@"
  fi
}
if [ $grpc = 1 ]; then
  # The gRPC catalog follows the runtime's registration: wait for the method.
  for i in $(seq 100); do
    load --seconds 0.1 --warmup 0 2>/dev/null | grep -q '"ok":true' && break
    sleep 0.1
  done
fi
# Warm-up without the profiler, then the recorded phase.
load --seconds 1 --warmup 0 "${extra[@]}" >/dev/null 2>&1
perf record -F 1999 "${graph[@]}" -p "$mgr" -o "$out/perf.data" 2>"$out/perf-record.log" &
perf_pid=$!
perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_futex,context-switches,task-clock \
  -p "$mgr" -o "$out/perf-stat.txt" &
stat_pid=$!
sleep 0.3
load --seconds "$seconds" --warmup 0 "${extra[@]}" --system ours --round 0 --watch "sut=$mgr" \
  2>>"$out/load.log" | tail -1 >"$out/phase.json"
kill -INT "$perf_pid" "$stat_pid"; wait "$perf_pid" "$stat_pid" 2>/dev/null
ops=$(grep -o '"ops":[0-9]*' "$out/phase.json" | cut -d: -f2)
awk -F, -v ops="${ops:-0}" 'ops > 0 && $1 ~ /^[0-9.]+$/ {
  printf "%-32s %12s  %8.3f per op\n", $3, $1, $1 / ops }' "$out/perf-stat.txt" >"$out/per-op.txt"
python3 "$root/bench/profile_categories.py" "$out/perf.data" >"$out/categories.txt"
perf report -i "$out/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' \
  | head -25 >"$out/by-dso.txt"
perf report -i "$out/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep -v '^#' \
  | grep -v '^$' | head -12 >"$out/by-thread.txt"
perf report -i "$out/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' \
  | grep -v '^$' | head -80 >"$out/by-symbol.txt"
if [ ${#graph[@]} -gt 0 ]; then
  perf report -i "$out/perf.data" --children --sort sym --stdio -g none 2>/dev/null \
    | grep -E '\[k\] (__x64_sys_|__sys_|do_syscall_64|entry_SYSCALL|try_to_wake_up|schedule$|__schedule|futex_|ep_poll|tcp_sendmsg|tcp_recvmsg|asm_|irq|__do_softirq|net_rx)' \
    | head -40 >"$out/kernel-children.txt"
fi
echo "profile.sh: $out (phase.json, by-dso.txt, by-symbol.txt, perf.data)"
cat "$out/phase.json" "$out/per-op.txt" "$out/by-thread.txt" "$out/categories.txt"
