#!/usr/bin/env bash
# Builds one fuzz target (clang++-14: libFuzzer, ASan, UBSan) and runs it for
# RUNS executions (default 10,000,000) in one process on one core, then
# merges what it found into fuzz/corpus/TARGET with -merge=1 (only inputs that
# add coverage are kept) and prints the figures for fuzz/README.md.
#   fuzz/run.sh TARGET [RUNS]        e.g. fuzz/run.sh jsonrpc 1000000
# TARGET: jsonrpc reflection_v2 iii http_head schema host_config grpc_json grpc_request
#         cluster_handshake
# Environment: BUILD_DIR (default build-fuzz), MAX_TOTAL_TIME (seconds; stop
# earlier), MAX_LEN (default 4096), MERGE=0 (leave fuzz/corpus alone), EXTRA
# (more libFuzzer flags).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
t=${1:?usage: fuzz/run.sh TARGET [RUNS]}
runs=${2:-10000000}
build=${BUILD_DIR:-$root/build-fuzz}
case $t in
  jsonrpc|reflection_v2|iii|schema|grpc_json) dict=json.dict ;;
  http_head) dict=http.dict ;;
  host_config) dict=yaml.dict ;;
  grpc_request|cluster_handshake|ws_frames) dict= ;;
  *) echo "unknown target '$t'" >&2; exit 2 ;;
esac

command -v clang++-14 >/dev/null || ACTOR_HOST_FUZZ_DEPS=1 bash "$root/scripts/install-deps.sh"
if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$root" -B "$build" $(command -v ninja >/dev/null && echo -G Ninja) \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DACTOR_HOST_FUZZ=ON \
    -DACTOR_HOST_BENCH=OFF -DACTOR_HOST_INTEROP_TESTS=OFF -DBUILD_TESTING=OFF "${launcher[@]}"
fi
cmake --build "$build" --target "fuzz_$t" -j "${JOBS:-2}"
bin=$build/fuzz/fuzz_$t

# Seeds from tests/, examples/ and docs/ (fuzz/seed.py), next to the corpus.
seeds=$build/seeds
[ -d "$seeds/$t" ] || python3 "$root/fuzz/seed.py" "$seeds" >/dev/null
mkdir -p "$seeds/$t" # targets without seeds of their own start from their corpus
corpus=$root/fuzz/corpus/$t
work=$build/work/$t
mkdir -p "$corpus" "$work/new" "$work/earlier"
# Findings of earlier runs move aside, so the count below is this run's.
find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) -exec mv {} "$work/earlier/" \;

rc=0
dict_flag=()
[ -n "$dict" ] && dict_flag=(-dict="$root/fuzz/dict/$dict")
"$bin" -runs="$runs" -max_len="${MAX_LEN:-4096}" -timeout=30 "${dict_flag[@]}" \
  -print_final_stats=1 -artifact_prefix="$work/" ${MAX_TOTAL_TIME:+-max_total_time=$MAX_TOTAL_TIME} \
  ${EXTRA:-} "$work/new" "$corpus" "$seeds/$t" 2>&1 | tee "$work/log" | grep -v '^#[0-9]*.*\(NEW\|REDUCE\)' \
  || rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
crashes=$(ls "$work" | grep -c '^\(crash\|leak\|timeout\|oom\)-' || true)

if [ "${MERGE:-1}" != 0 ]; then
  merged=$work/merged
  rm -rf "$merged" && mkdir -p "$merged"
  "$bin" -merge=1 -max_len="${MAX_LEN:-4096}" -timeout=30 "$merged" "$corpus" "$work/new" \
    "$seeds/$t" >"$work/merge.log" 2>&1
  # Named files are reproducers of fixed findings: always kept (README).
  find "$corpus" -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$merged"/ \;
  rm -f "$corpus"/* && cp "$merged"/* "$corpus"/
fi
files=$(ls "$corpus" | wc -l)
size=$(( ($(cat "$corpus"/* | wc -c) + 1023) / 1024 ))
line="$t	${execs:-?}	${speed:-?}	$crashes	$files files, ${size} KiB	$(date -u +%F)	$(git -C "$root" rev-parse --short HEAD)"
echo "$line" | tee -a "$build/fuzz-results.tsv"
echo "(target, executions, exec/s, crashes, corpus, date, commit)"
[ "$crashes" = 0 ] || { echo "findings in $work:" >&2; ls "$work" | grep -- '-' >&2; }
exit $rc
