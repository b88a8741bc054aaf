#!/usr/bin/env bash
# The benchmark suite in one command: builds in Release, starts actor-host's
# manager, the bare relay and the Genkit TS manager (each with its own fake
# runtime), runs every scenario with warm-up, interleaving the systems (the
# order rotates every round so drift hits all of them alike), measures memory
# with 1 / 1,000 / 10,000 idle runtimes, counts kernel crossings with perf,
# and writes a markdown report.
#
#   bench/run.sh [--smoke] [--rounds N] [--seconds S] [--warmup S]
#                [--build-dir DIR] [--no-build]
#                [--systems "ours relay ts tsws ours-http tools cluster"]
#                [--scenarios "echo stream ..."] [--no-memory] [--no-perf]
#                [--no-scale] [--report FILE] [--out DIR] [--variant NAME=ENV...]
#                [--stream-n N]
#
#   full run:  report -> bench/REPORT.md, raw data -> bench/results.jsonl
#   --smoke:   seconds, tiny counts (CI: ctest -L bench); report and data go
#              to BUILD/bench-smoke/. Nothing is asserted about speed; the
#              exit status only says whether every system answered.
#
# Systems: ours (actor-host's manager via /api/ws), relay (bench_relay),
# ts (RuntimeManagerV2 driven in-process by ts_driver.mjs), tsws (the same TS
# manager behind a thin WebSocket front door, driven by bench_load like ours),
# ours-http (actor-host's HTTP front door, POST /api/runAction and
# /api/streamAction) and tools (the real Genkit tools server, startServer of
# @genkit-ai/tools-common over RuntimeManagerV2, bench/tools_server.mjs), both
# driven by `bench_load --url http://...` (echo and stream scenarios only).
# --scenarios keeps only the scenarios whose name is listed (e.g. "echo stream"),
# or name:callers:inflight for one of them (e.g. "echo:1:1 stream:4:1").
# --variant NAME=ENV (repeatable) adds a system ours+NAME: actor-host's manager
# started with the space-separated environment assignments ENV, e.g.
#   --variant "mi=LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"
#   --variant "steal=ACTOR_HOST_CAF=scheduler.policy=stealing"
# ENV may name another build's binary, ACTOR_HOST_BIN=PATH (a before/after in
# one run), and a NAME ending in -http is driven over HTTP like ours-http:
#   --variant "base-http=ACTOR_HOST_BIN=/tmp/base/actor-host"
# --cluster-variant NAME=ENV (repeatable) adds a system cluster+NAME: the two
# nodes of `cluster`, both started with ENV, e.g. another build's binary or
# BASP's deserialization on worker threads:
#   --cluster-variant "base=ACTOR_HOST_BIN=/tmp/base/actor-host"
#   --cluster-variant "w2=ACTOR_HOST_CAF=middleman.workers=2"
# and BENCH_TRACE_IDS=random gives the variant's fake runtime random trace ids
# (Genkit's shape; the default counts them, which a trace store appends):
#   --variant "traces-rnd=ACTOR_HOST_TRACE_STORE=/tmp/t.sqlite BENCH_TRACE_IDS=random"
# --stream-n N: chunks per stream (default 20,000); issue 35's HTTP scenario is
#   --systems "ours-http tools" --scenarios stream:1:1 --stream-n 200000
# It is driven like ours (no memory pass); bench/variants.py prints the paired
# ratios of every system against every other one from results.jsonl.
# After the memory pass, bench/run_scale.sh measures issue 13's scale targets
# (100,000 calls in flight, 10,000 runtimes at 1,000 calls/s; --no-scale
# skips it); the idle-connection target is read from the memory pass.
# The TS baseline needs node + npm: the pinned packages are installed into
# BUILD/interop-node by tests/interop/setup.sh (no-op when already there).
# Without them the TS and tools rows are skipped (and the report says so).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=full
rounds=3
seconds=3
warmup=1
build=$root/build
do_build=1
systems="ours relay ts tsws ours-http tools"
only_scenarios=""
do_memory=1
do_perf=1
do_scale=1
report=""
keep_results=""
out=""
declare -A variant_env
variants=""
mem_ns="1 1000 10000"
stream_n=20000
stream_n_set=0
open_rate=2000

while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --rounds) rounds=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --build-dir) build=$2; shift ;;
    --no-build) do_build=0 ;;
    --systems) systems=$2; shift ;;
    --scenarios) only_scenarios=$2; shift ;;
    --no-memory) do_memory=0 ;;
    --no-perf) do_perf=0 ;;
    --no-scale) do_scale=0 ;;
    --report) report=$2; shift ;;
    --out) out=$2; shift ;;
    --variant) variant_env[${2%%=*}]=${2#*=}; variants="$variants ours+${2%%=*}"; shift ;;
    --cluster-variant) variant_env[${2%%=*}]=${2#*=}; variants="$variants cluster+${2%%=*}"; shift ;;
    --stream-n) stream_n=$2; stream_n_set=1; shift ;;
    -h|--help) sed -n '2,50p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ "$mode" = smoke ]; then
  rounds=1; seconds=0.3; warmup=0.1; open_rate=200; mem_ns="1 50"; do_perf=0
  [ $stream_n_set = 1 ] || stream_n=500
  out=${out:-$build/bench-smoke}
  report=${report:-$out/REPORT.md}
else
  out=${out:-$build/bench-results}
  # The default full report is committed with its raw data next to it.
  [ -z "$report" ] && report=$root/bench/REPORT.md && keep_results=$root/bench/results.jsonl
fi
mkdir -p "$out"
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
results=$out/results.jsonl
: >"$results"
log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }

# ---- build ----------------------------------------------------------------------
if [ $do_build = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
    cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DACTOR_HOST_INTEROP_TESTS=OFF || exit 1
  fi
  bt=$(grep '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" | cut -d= -f2)
  [ "$bt" = Release ] || log "warning: $build is a '$bt' build, not Release"
  nice -n 5 cmake --build "$build" -j "${JOBS:-2}" --target actor-host bench_load \
    bench_fake_runtime bench_relay bench_report bench_syscost || exit 1
fi
host_bin=$build/actor-host
bin=$build/bench
for b in "$host_bin" "$bin/bench_load" "$bin/bench_fake_runtime" "$bin/bench_relay" "$bin/bench_report"; do
  [ -x "$b" ] || { echo "run.sh: $b is missing (build first)" >&2; exit 1; }
done
build_type=$(grep '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2)

# ---- node packages for the TS baseline ----------------------------------------------
node_dir=$build/interop-node
ts_note=""
if [[ " $systems " == *" ts "* || " $systems " == *" tsws "* || " $systems " == *" tools "* ]]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    ts_note="node/npm not installed: TS baseline skipped"
  elif ! timeout 600 bash "$root/tests/interop/setup.sh" "$build" >"$out/npm-setup.log" 2>&1; then
    ts_note="npm packages could not be installed (see npm-setup.log): TS baseline skipped"
  fi
  if [ -n "$ts_note" ]; then
    log "$ts_note"
    systems=$(echo " $systems " | sed 's/ ts / /; s/ tsws / /; s/ tools / /')
  fi
fi

# ---- fd limit (10,000 idle runtimes need ~10,100 descriptors per process) ----------
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
want=$(( hard < 65536 ? hard : 65536 ))
ulimit -n "$want" 2>/dev/null || true
soft=$(ulimit -n)
mem_ns_run=""
for n in $mem_ns; do
  if [ "$n" -le $((soft - 200)) ]; then mem_ns_run="$mem_ns_run $n"
  else log "fd limit $soft (hard $hard) is too low for $n runtimes: skipped"; fi
done

ours_flags="--role manager --log-level warn"

# Starting and stopping the systems (and the process helpers): bench/run_systems.sh.
. "$root/bench/run_systems.sh"

# ---- systems under load -------------------------------------------------------------
declare -A api rt_pid sut_pid owner_pid
up() { # system
  case $1 in
    cluster|cluster+*)
      # A cross-node call (docs/CLUSTER.md): callers at node a, the runtime at node b.
      local ca cb a_pid a_api i venv=""
      [[ $1 == cluster+* ]] && venv=${variant_env[${1#cluster+}]}
      ca=$(free_port) && cb=$(free_port) || return 1
      # shellcheck disable=SC2086 # venv is a list of assignments
      start_ours $venv ACTOR_HOST_NODE_NAME=bench-a ACTOR_HOST_CLUSTER_PORT="$ca" || return 1
      a_pid=$ours_pid; a_api=$ours_api
      # shellcheck disable=SC2086
      start_ours $venv ACTOR_HOST_NODE_NAME=bench-b ACTOR_HOST_CLUSTER_PORT="$cb" \
        ACTOR_HOST_CLUSTER_SEEDS="127.0.0.1:$ca" || return 1
      start_fake "ws://127.0.0.1:$ours_rport" 1 bench-rt 20 "$out/fake-$1.out" || return 1
      for i in $(seq 200); do
        curl -s "http://127.0.0.1:$a_api/api/runtimes" | grep -q '"node":"bench-b"' && break
        sleep 0.05
      done
      sut_pid[$1]=$a_pid; api[$1]=$a_api; rt_pid[$1]=$fake_pid
      owner_pid[$1]=$ours_pid ;;
    ours)
      start_ours || return 1
      start_fake "ws://127.0.0.1:$ours_rport" 1 bench-rt 20 "$out/fake-ours.out" || return 1
      sut_pid[ours]=$ours_pid; api[ours]=$ours_api; rt_pid[ours]=$fake_pid ;;
    relay)
      start_relay || return 1
      start_fake "ws://127.0.0.1:$relay_rport" 1 bench-rt 20 "$out/fake-relay.out" || return 1
      sut_pid[relay]=$relay_pid; api[relay]=$relay_api; rt_pid[relay]=$fake_pid ;;
    ts)
      start_ts || return 1
      start_fake "ws://127.0.0.1:$ts_port" 1 bench-rt 20 "$out/fake-ts.out" || return 1
      ts_cmd '{"cmd":"wait","runtimes":1,"timeoutMs":10000}' 20 || return 1
      sut_pid[ts]=$ts_pid; rt_pid[ts]=$fake_pid ;;
    tsws)
      start_tsws || return 1
      start_fake "ws://127.0.0.1:$tsws_port" 1 bench-rt 20 "$out/fake-tsws.out" || return 1
      sut_pid[tsws]=$tsws_pid; api[tsws]=$tsws_api; rt_pid[tsws]=$fake_pid ;;
    ours+*)
      # shellcheck disable=SC2086 # ENV is a list of assignments
      start_ours ${variant_env[${1#ours+}]} || return 1
      # shellcheck disable=SC2086
      start_fake "ws://127.0.0.1:$ours_rport" 1 bench-rt 20 "$out/fake-$1.out" ${variant_env[${1#ours+}]} || return 1
      sut_pid[$1]=$ours_pid; api[$1]=$ours_api; rt_pid[$1]=$fake_pid ;;
    ours-http)
      start_ours || return 1
      start_fake "ws://127.0.0.1:$ours_rport" 1 bench-rt 20 "$out/fake-ours-http.out" || return 1
      sut_pid[ours-http]=$ours_pid; api[ours-http]=$ours_api; rt_pid[ours-http]=$fake_pid ;;
    tools)
      start_tools || return 1
      start_fake "ws://127.0.0.1:$tools_port" 1 bench-rt 20 "$out/fake-tools.out" || return 1
      sut_pid[tools]=$tools_pid; api[tools]=$tools_api; rt_pid[tools]=$fake_pid ;;
  esac
}
down() { # system
  stop_pid "${rt_pid[$1]:-}"
  stop_pid "${owner_pid[$1]:-}"
  unset "owner_pid[$1]"
  if [ "$1" = ts ]; then stop_ts; else stop_pid "${sut_pid[$1]:-}"; fi
  unset "sut_pid[$1]" "rt_pid[$1]"
}

# scenario tuples: name callers inflight rate stream_n
scenarios=(
  "echo 1 1 0 0"
  "echo 64 1 0 0"
  "echo 8 64 0 0"
  "open 16 1 $open_rate 0"
  "stream 1 1 0 $stream_n"
  "stream 4 1 0 $stream_n"
  "bidi 16 1 0 0"
  "cancel 4 1 0 0"
)
if [ -n "$only_scenarios" ]; then
  kept=()
  for t in "${scenarios[@]}"; do
    read -r s c k _ <<<"$t"
    [[ " $only_scenarios " == *" $s "* || " $only_scenarios " == *" $s:$c:$k "* ]] && kept+=("$t")
  done
  scenarios=("${kept[@]}")
fi

fail_line() { # system scenario round callers inflight note
  printf -v phase_out '{"system":"%s","scenario":"%s","round":%s,"callers":%s,"inflight":%s,"ok":false,"note":"%s"}' \
    "$1" "$2" "$3" "$4" "$5" "$6"
}

phase() { # system round "tuple" [seconds warmup] -> sets phase_out (one JSON line)
  local sys=$1 r=$2 s c k rate n secs=${4:-$seconds} wu=${5:-$warmup} line
  read -r s c k rate n <<<"$3"
  # (No default of 0: `kill -0 0` succeeds, it is the process group.)
  if [ -z "${sut_pid[$sys]:-}" ] || ! kill -0 "${sut_pid[$sys]}" 2>/dev/null; then
    fail_line "$sys" "$s" "$r" "$c" "$k" "the system is not running"
    return
  fi
  local budget
  budget=$(awk "BEGIN{print int($secs + $wu + 40)}")
  if [ "$sys" = ts ]; then
    ts_cmd "{\"cmd\":\"phase\",\"scenario\":\"$s\",\"callers\":$c,\"inflight\":$k,\"rate\":$rate,\"streamN\":$n,\"seconds\":$secs,\"warmup\":$wu,\"system\":\"ts\",\"round\":$r,\"runtimeId\":\"bench-rt-0\",\"runtimePid\":${rt_pid[ts]}}" "$budget"
    line=$ts_reply
  else
    local extra=()
    [ "$s" = open ] && extra+=(--rate "$rate")
    [ "$s" = stream ] && extra+=(--stream-n "$n")
    # The node that owns the runtime, in a cluster: its CPU counts too.
    [ -n "${owner_pid[$sys]:-}" ] && extra+=(--watch "owner=${owner_pid[$sys]}")
    local url="ws://127.0.0.1:${api[$sys]:-0}/api/ws"
    http_system "$sys" && url="http://127.0.0.1:${api[$sys]:-0}"
    line=$(timeout "$budget" "$bin/bench_load" --url "$url" \
      --scenario "$s" --callers "$c" --inflight "$k" --seconds "$secs" --warmup "$wu" "${extra[@]}" \
      --system "$sys" --round "$r" --watch "sut=${sut_pid[$sys]}" --watch "runtime=${rt_pid[$sys]}" \
      2>>"$out/load.log" | tail -1)
  fi
  if [ -z "$line" ]; then
    fail_line "$sys" "$s" "$r" "$c" "$k" "no result (timed out or crashed)"
  else
    phase_out=$line
  fi
}

# ---- meta -------------------------------------------------------------------------------
esc() { echo "$1" | tr -d '"\\' | tr '\n' ' ' | sed 's/ *$//'; }
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
mem_total=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
os=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || uname -s)
compiler=$( (c++ --version 2>/dev/null || g++ --version) | head -1)
node_v=$(command -v node >/dev/null && node --version || echo "none")
tools_common="?"
[ -f "$node_dir/node_modules/@genkit-ai/tools-common/package.json" ] &&
  tools_common=$(grep -m1 '"version"' "$node_dir/node_modules/@genkit-ai/tools-common/package.json" | cut -d'"' -f4)
platform=$("$bin/bench_syscost" 2>/dev/null | tail -1)
[ -n "$platform" ] || platform='{}'
results_name=${keep_results:+bench/results.jsonl}
results_name=${results_name:-$results}
printf '{"kind":"meta","mode":"%s","date":"%s","cpu_model":"%s","cpus":"%s","mem_total":"%s","os":"%s","kernel":"%s","compiler":"%s","build_type":"%s","node":"%s","tools_common":"%s","fd_soft":"%s","fd_hard":"%s","loadavg":"%s","rounds":"%s","seconds":"%s","warmup":"%s","ours_flags":"%s","results_name":"%s","ts_note":"%s","platform":%s}\n' \
  "$mode" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(esc "$cpu_model")" "$(nproc)" "$mem_total" "$(esc "$os")" \
  "$(uname -r)" "$(esc "$compiler")" "$build_type" "$node_v" "$tools_common" "$soft" "$hard" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$rounds" "$seconds" "$warmup" \
  "actor-host $ours_flags (1 I/O thread, 1 CAF worker: the defaults)" "$results_name" "$ts_note" \
  "$platform" >>"$results"

# ---- rounds ---------------------------------------------------------------------------------
sys_list=($systems $variants)
failed=0
for sys in "${sys_list[@]}"; do
  log "starting $sys"
  if ! up "$sys"; then
    log "$sys did not come up"
    failed=1
  fi
done
for r in $(seq 1 "$rounds"); do
  log "round $r/$rounds"
  for t in "${scenarios[@]}"; do
    # Rotate the order every round: A B C, B C A, C A B, ...
    n=${#sys_list[@]}
    for i in $(seq 0 $((n - 1))); do
      sys=${sys_list[$(((i + r - 1) % n))]}
      if http_system "$sys" && [[ $t != echo* && $t != stream* ]]; then continue; fi
      phase "$sys" "$r" "$t"
      line=$phase_out
      # Smoke windows are 0.3 s: a peer whose first burst stalls longer (the
      # Node tools server with 512 calls in flight on a busy machine) answers
      # nothing in one without failing a call. It gets one 2 s window more;
      # errors or silence there still fail the smoke.
      if [ "$mode" = smoke ] && [[ $line == *'"ops":0,'* && $line == *'"errors":0,'* ]]; then
        log "$sys / $t: nothing answered within the smoke window; once more for 2 s"
        phase "$sys" "$r" "$t" 2 0.5
        line=$phase_out
      fi
      echo "$line" >>"$results"
      case $line in *'"ok":true'*) ;; *) failed=1; log "$sys / $t: $(json_field "$line" note)";; esac
      sleep 0.2
    done
  done
done

# ---- kernel crossings (perf stat around one extra echo 64x1 phase) ----------------------------
if [ $do_perf = 1 ] && command -v perf >/dev/null; then
  for sys in "${sys_list[@]}"; do
    [ -n "${sut_pid[$sys]:-}" ] && kill -0 "${sut_pid[$sys]}" 2>/dev/null || continue
    pf=$out/perf-$sys.txt
    perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p "${sut_pid[$sys]}" -o "$pf" &
    perf_pid=$!
    started+=("$perf_pid")
    sleep 0.3
    phase "$sys" 0 "echo 64 1 0 0" 3 0
    line=$phase_out
    kill -INT "$perf_pid" 2>/dev/null
    wait "$perf_pid" 2>/dev/null
    ops=$(json_field "$line" ops)
    sc=$(awk -F, '/raw_syscalls:sys_enter/ {print $1}' "$pf")
    cs=$(awk -F, '/context-switches/ {print $1}' "$pf")
    tc=$(awk -F, '/task-clock/ {print $1}' "$pf")
    if [[ "$sc" =~ ^[0-9]+$ && "$ops" =~ ^[0-9]+$ && "$ops" -gt 0 ]]; then
      printf '{"kind":"syscalls","system":"%s","label":"echo 64×1 (3 s, no warm-up)","ops":%s,"syscalls":%s,"ctx_switches":%s,"cpu_ms":%s}\n' \
        "$sys" "$ops" "$sc" "${cs:-0}" "${tc:-0}" >>"$results"
    else
      log "perf stat gave no usable counts for $sys ($(head -c 200 "$pf"))"
    fi
  done
fi

for sys in "${sys_list[@]}"; do down "$sys"; done

# ---- memory at scale --------------------------------------------------------------------------
if [ $do_memory = 1 ]; then
  # 10,000 runtimes are more than the default per-listener connection cap
  # (max_connections 4096, answered with 503); the process-wide budget
  # (the descriptor limit minus a reserve) is what bounds them.
  ours_flags="$ours_flags --max-connections 12000"
  for sys in "${sys_list[@]}"; do
    # tsws is the same manager as ts; ours-http the same as ours; tools the
    # same RuntimeManagerV2 as ts.
    [ "$sys" = tsws ] || [ "$sys" = ours-http ] || [ "$sys" = tools ] || [[ $sys == ours+* ]] ||
      [[ $sys == cluster+* ]] && continue
    for n in $mem_ns_run; do
      log "memory: $sys with $n idle runtimes"
      idle_rss "$sys" "$n" mem
      printf '{"kind":"memory","system":"%s","runtimes":%s,"rss_kb":%s,"ok":%s,"note":"%s"}\n' \
        "$sys" "$n" "$idle_rss_kb" "$idle_ok" "$idle_note" >>"$results"
      [ $idle_ok = true ] || { failed=1; log "memory $sys $n: $idle_note"; }
      sleep 0.5
    done
  done
fi

# ---- scale: calls in flight, runtimes at scale (bench/run_scale.sh) --------------------------------
if [ $do_scale = 1 ] && [[ " $systems " == *" ours "* ]]; then
  scale_args=(--no-build --build-dir "$build" --out "$out/scale" --results "$results"
              --tests "inflight spread")
  [ "$mode" = smoke ] && scale_args+=(--smoke)
  bash "$root/bench/run_scale.sh" "${scale_args[@]}" || { failed=1; log "scale: a test failed"; }
fi

# ---- report -----------------------------------------------------------------------------------
notes=()
[ "$mode" = full ] && [ -f "$root/bench/ANALYSIS.md" ] && notes=(--notes "$root/bench/ANALYSIS.md")
"$bin/bench_report" --results "$results" --out "$report" "${notes[@]}" || failed=1
[ -n "${keep_results:-}" ] && cp "$results" "$keep_results"
log "report: $report"
[ -n "$ts_note" ] && log "$ts_note"
exit $failed
