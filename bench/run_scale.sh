#!/usr/bin/env bash
# Issue 13's scale targets, each in its own fresh processes:
#
#   inflight  C callers on /api/ws send N echo calls at once to one fake
#             runtime that holds every reply (`bench_fake_runtime --hold N`)
#             until all N are pending in the manager: the manager's RSS then,
#             minus its RSS before, over N = bytes per pending request;
#             then the replies are released and every call must complete.
#   spread    R fake runtimes connected, an open loop of RATE calls/s for S
#             seconds spread round robin over them (runtimeId per call):
#             p50/p99 and the manager's RSS.
#   idle      RSS with 1 and each of IDLE_NS idle runtimes, per system
#             (ours, relay, ts): per connection = (RSS(N) - RSS(1)) / (N - 1).
#
#   bench/run_scale.sh [--smoke] [--build-dir DIR] [--no-build] [--out DIR]
#                      [--tests "inflight spread idle"] [--systems "ours relay ts"]
#                      [--calls N] [--callers C] [--runtimes R] [--rate RATE]
#                      [--seconds S] [--idle-ns "1000 10000"] [--results FILE]
#
# Lines {"kind":"scale","test":...} go to OUT/scale.jsonl and, with
# --results FILE, are appended to FILE (bench/run.sh passes its results
# file; bench_report renders them in the "Scale" section). Caps are raised
# only by the manager's command-line settings (--max-connections for
# 10,000 runtimes); calls in flight stay within max_calls_per_caller by
# using enough callers. Run it alone: no other benchmark, build or fuzzer.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
do_build=1
out=""
tests="inflight spread idle"
systems="ours relay ts"
calls=100000
callers=100
runtimes=10000
rate=1000
seconds=10
idle_ns="1000 10000"
results_file=""
smoke=0

while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --build-dir) build=$2; shift ;;
    --no-build) do_build=0 ;;
    --out) out=$2; shift ;;
    --tests) tests=$2; shift ;;
    --systems) systems=$2; shift ;;
    --calls) calls=$2; shift ;;
    --callers) callers=$2; shift ;;
    --runtimes) runtimes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --idle-ns) idle_ns=$2; shift ;;
    --results) results_file=$2; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "run_scale.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ $smoke = 1 ]; then
  calls=400; callers=4; runtimes=20; rate=100; seconds=1; idle_ns="20"
fi
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
out=${out:-$build/bench-scale}
mkdir -p "$out"
scale=$out/scale.jsonl
: >"$scale"
log() { echo "[scale $(date +%H:%M:%S)] $*" >&2; }

if [ $do_build = 1 ]; then
  nice -n 5 cmake --build "$build" -j "${JOBS:-2}" --target actor-host bench_load \
    bench_fake_runtime bench_relay || exit 1
fi
host_bin=$build/actor-host
bin=$build/bench
node_dir=$build/interop-node
for b in "$host_bin" "$bin/bench_load" "$bin/bench_fake_runtime" "$bin/bench_relay"; do
  [ -x "$b" ] || { echo "run_scale.sh: $b is missing (build first)" >&2; exit 1; }
done

# 10,000 runtimes need ~10,100 descriptors in the manager and in the fake.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
ulimit -n $((hard < 65536 ? hard : 65536)) 2>/dev/null || true
soft=$(ulimit -n)

# The default per-listener cap (4096) is below 10,000 runtimes; the
# process-wide descriptor budget is what bounds them.
ours_flags="--role manager --log-level warn --max-connections 20000"

. "$root/bench/run_systems.sh"

rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -1; }
hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -1; }
emit() { echo "$1" | tee -a "$scale" >&2; }
failed=0

# ---- 100,000 requests in flight ---------------------------------------------------------------
run_inflight() {
  local per=$(( (calls + callers - 1) / callers )) total f line rss0 rss1 hwm ok note i held=0
  total=$((per * callers))
  log "inflight: $total calls ($callers callers x $per) held by one runtime"
  start_ours || { emit '{"kind":"scale","test":"inflight","system":"ours","ok":false,"note":"the manager did not start"}'; return 1; }
  f=$out/fake-inflight.out
  : >"$f"
  "$bin/bench_fake_runtime" --url "ws://127.0.0.1:$ours_rport" --n 1 --prefix hold \
    --hold "$total" --lifetime 600 >"$f" 2>"$f.err" &
  local fake=$!
  started+=("$fake")
  for i in $(seq 200); do [ -n "$(head -1 "$f")" ] && break; sleep 0.05; done
  sleep 0.5
  rss0=$(rss_kb "$ours_pid")
  local lf=$out/load-inflight.out
  "$bin/bench_load" --url "ws://127.0.0.1:$ours_api/api/ws" --scenario burst \
    --callers "$callers" --inflight "$per" --seconds 240 --drain-timeout 30 \
    --runtime-id hold-0 --system ours --watch "sut=$ours_pid" --watch "runtime=$fake" \
    >"$lf" 2>>"$out/load.log" &
  local load=$!
  started+=("$load")
  for i in $(seq 2400); do # up to 120 s for the calls to arrive
    grep -q '"held"' "$f" && { held=1; break; }
    kill -0 "$load" 2>/dev/null || break
    sleep 0.05
  done
  sleep 1 # the last replies' runActionState reach the callers
  rss1=$(rss_kb "$ours_pid")
  kill -USR1 "$fake" 2>/dev/null
  wait "$load"
  line=$(tail -1 "$lf")
  hwm=$(hwm_kb "$ours_pid")
  ok=false; note=""
  [ $held = 1 ] || note="the runtime never held all $total calls"
  case $line in *'"ok":true'*) [ $held = 1 ] && ok=true ;; *) note=${note:-"$(json_field "$line" note)"} ;; esac
  [ -n "$line" ] || line='{}'
  local bpp=-1
  [ $held = 1 ] && bpp=$(( (rss1 - rss0) * 1024 / total ))
  emit "$(printf '{"kind":"scale","test":"inflight","system":"ours","calls":%s,"callers":%s,"rss_before_kb":%s,"rss_held_kb":%s,"hwm_kb":%s,"bytes_per_pending":%s,"ok":%s,"note":"%s","load":%s}' \
    "$total" "$callers" "$rss0" "$rss1" "$hwm" "$bpp" "$ok" "$(echo "$note" | tr -d '"\\')" "$line")"
  stop_pid "$fake"
  stop_pid "$ours_pid"
  [ $ok = true ]
}

# ---- 10,000 runtimes, 1,000 calls/s spread over them --------------------------------------------
run_spread() {
  log "spread: $runtimes runtimes, $rate calls/s for $seconds s round robin"
  start_ours || { emit '{"kind":"scale","test":"spread","system":"ours","ok":false,"note":"the manager did not start"}'; return 1; }
  local t0=$SECONDS rss0 rss1 line ok=false note=""
  if ! start_fake "ws://127.0.0.1:$ours_rport" "$runtimes" sp 300 "$out/fake-spread.out"; then
    emit "$(printf '{"kind":"scale","test":"spread","system":"ours","runtimes":%s,"ok":false,"note":"not all %s runtimes registered within 300 s: %s"}' \
      "$runtimes" "$runtimes" "$(tail -1 "$out/fake-spread.out.err" 2>/dev/null | tr -d '"\\')")"
    stop_pid "$ours_pid"
    return 1
  fi
  local connect_s=$((SECONDS - t0))
  sleep 1
  rss0=$(rss_kb "$ours_pid")
  line=$(timeout $((seconds + 60)) "$bin/bench_load" --url "ws://127.0.0.1:$ours_api/api/ws" \
    --scenario open --callers 16 --inflight 1 --rate "$rate" --seconds "$seconds" --warmup 1 \
    --max-inflight 100000 --runtime-id sp --runtimes "$runtimes" --system ours \
    --watch "sut=$ours_pid" --watch "runtime=$fake_pid" 2>>"$out/load.log" | tail -1)
  rss1=$(rss_kb "$ours_pid")
  case $line in *'"ok":true'*) ok=true ;; *) note=$(json_field "$line" note) ;; esac
  [ -n "$line" ] || { line='{}'; note="no result"; }
  emit "$(printf '{"kind":"scale","test":"spread","system":"ours","runtimes":%s,"rate_target":%s,"connect_s":%s,"rss_idle_kb":%s,"rss_kb":%s,"ok":%s,"note":"%s","load":%s}' \
    "$runtimes" "$rate" "$connect_s" "$rss0" "$rss1" "$ok" "$(echo "$note" | tr -d '"\\')" "$line")"
  stop_pid "$fake_pid"
  stop_pid "$ours_pid"
  [ $ok = true ]
}

# ---- idle runtime connections ------------------------------------------------------------------
run_idle() { # system
  local sys=$1 n
  if [ "$sys" = ts ] && { ! command -v node >/dev/null || [ ! -d "$node_dir/node_modules" ]; }; then
    log "idle: ts skipped (no node or no $node_dir/node_modules)"
    return 0
  fi
  for n in 1 $idle_ns; do
    if [ "$n" -gt $((soft - 200)) ]; then log "idle: fd limit $soft too low for $n"; continue; fi
    log "idle: $sys with $n runtimes"
    idle_rss "$sys" "$n" idle
    emit "$(printf '{"kind":"scale","test":"idle","system":"%s","runtimes":%s,"rss_kb":%s,"ok":%s,"note":"%s"}' \
      "$sys" "$n" "$idle_rss_kb" "$idle_ok" "$idle_note")"
    [ $idle_ok = true ] || failed=1
    sleep 0.5
  done
}

for t in $tests; do
  case $t in
    inflight) run_inflight || failed=1 ;;
    spread) run_spread || failed=1 ;;
    idle) for s in $systems; do run_idle "$s"; done ;;
    *) log "unknown test $t"; failed=1 ;;
  esac
done
[ -n "$results_file" ] && cat "$scale" >>"$results_file"
log "results: $scale${results_file:+ (appended to $results_file)}"
exit $failed
