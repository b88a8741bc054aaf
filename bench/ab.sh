#!/usr/bin/env bash
# Side-by-side comparison of two actor-host builds (e.g. a base commit and a
# branch): both managers run at once, each with its own fake runtime, and the
# same bench_load phases alternate between them (the order flips every
# round), so drift on a shared machine hits both alike. Prints, per scenario,
# the median over rounds of B/A for the rate and the manager CPU per op, and
# (with perf) syscalls and context switches per op in one extra phase each.
#
#   bench/ab.sh --a BUILD_A --b BUILD_B [--rounds N] [--seconds S] [--warmup S]
#               [--scenarios "echo:1:1 echo:64:1 stream:1:1"] [--no-perf] [--out DIR]
#
# Scenarios are name:callers:inflight (stream uses --stream-n 20000). The load
# generator and fake runtime come from BUILD_B. Nothing is asserted.
set -uo pipefail

a="" b="" rounds=5 seconds=3 warmup=1 do_perf=1 out=""
scenarios="echo:1:1 echo:64:1 echo:8:64 stream:1:1 stream:4:1 bidi:16:1"
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a=$2; shift ;;
    --b) b=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --scenarios) scenarios=$2; shift ;;
    --no-perf) do_perf=0 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "ab.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$a/actor-host" ] && [ -x "$b/actor-host" ] || { echo "ab.sh: need --a and --b build dirs with actor-host" >&2; exit 2; }
out=${out:-$b/bench-ab}
mkdir -p "$out"
res=$out/ab.jsonl
: >"$res"
tools=$b/bench
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

. "$(dirname "$0")/sh_helpers.sh"

declare -A api mgr rt
for sys in A B; do
  dir=$a; [ $sys = B ] && dir=$b
  p=$(free_port); h=$(free_port)
  ACTOR_HOST_TRACE_STORE=${ACTOR_HOST_TRACE_STORE:-none} "$dir/actor-host" --role manager --log-level warn --port "$p" --http-port "$h" --worker-port 0 \
    >>"$out/$sys.log" 2>&1 &
  mgr[$sys]=$!; pids+=($!)
  wait_listen "$p" && wait_listen "$h" || { echo "ab.sh: manager $sys did not start" >&2; exit 1; }
  f=$out/fake-$sys.out; : >"$f"
  "$tools/bench_fake_runtime" --url "ws://127.0.0.1:$p" --n 1 --prefix bench-rt --lifetime 7200 >"$f" 2>"$f.err" &
  pids+=($!)
  for i in $(seq 400); do [ -n "$(head -1 "$f")" ] && break; sleep 0.05; done
  rt[$sys]=$(json_field "$(head -1 "$f")" pid)
  api[$sys]=$h
done

phase() { # sys scenario callers inflight round secs warmup
  local extra=()
  [ "$2" = stream ] && extra+=(--stream-n 20000)
  timeout $(( ${6%.*} + ${7%.*} + 60 )) "$tools/bench_load" --url "ws://127.0.0.1:${api[$1]}/api/ws" \
    --scenario "$2" --callers "$3" --inflight "$4" --seconds "$6" --warmup "$7" "${extra[@]}" \
    --system "$1" --round "$5" --watch "sut=${mgr[$1]}" --watch "runtime=${rt[$1]}" \
    2>>"$out/load.log" | tail -1
}

for r in $(seq "$rounds"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  for sc in $scenarios; do
    IFS=: read -r s c k <<<"$sc"
    for sys in $order; do
      line=$(phase "$sys" "$s" "$c" "$k" "$r" "$seconds" "$warmup")
      echo "{\"tag\":\"$sc\",\"sys\":\"$sys\",\"round\":$r,\"res\":${line:-null}}" >>"$res"
      echo "[ab] round $r $sc $sys: $(json_field "$line" rate) /s" >&2
    done
  done
done

if [ $do_perf = 1 ] && command -v perf >/dev/null; then
  for sc in echo:64:1 stream:1:1; do
    IFS=: read -r s c k <<<"$sc"
    for sys in A B; do
      pf=$out/perf-$sys-$s.txt
      perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p "${mgr[$sys]}" -o "$pf" &
      pp=$!; sleep 0.3
      line=$(phase "$sys" "$s" "$c" "$k" 0 3 0)
      kill -INT $pp; wait $pp 2>/dev/null
      sysc=$(awk -F, '/raw_syscalls:sys_enter/ {print $1}' "$pf")
      cs=$(awk -F, '/context-switches/ {print $1}' "$pf")
      echo "{\"tag\":\"perf $sc\",\"sys\":\"$sys\",\"syscalls\":${sysc:-0},\"cs\":${cs:-0},\"res\":${line:-null}}" >>"$res"
    done
  done
fi

python3 - "$res" <<'EOF'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
def val(r, k):
    x = r.get("res") or {}
    return x.get(k)
def cpu(r):
    x = r.get("res") or {}
    return ((x.get("procs") or {}).get("sut") or {}).get("cpu_us_per_op")
tags = []
for r in rows:
    if r["tag"] not in tags: tags.append(r["tag"])
print("| scenario | A rate (median) | B rate (median) | B/A rate, median of rounds (min–max) | B/A manager CPU per op, median (min–max) |")
print("|---|---|---|---|---|")
for t in tags:
    if t.startswith("perf"): continue
    by = {}
    for r in rows:
        if r["tag"] == t: by.setdefault(r["round"], {})[r["sys"]] = r
    rr, cr, ra, rb = [], [], [], []
    for rnd, d in sorted(by.items()):
        if "A" in d and "B" in d and val(d["A"], "rate") and val(d["B"], "rate"):
            ra.append(val(d["A"], "rate")); rb.append(val(d["B"], "rate"))
            rr.append(val(d["B"], "rate") / val(d["A"], "rate"))
            if cpu(d["A"]) and cpu(d["B"]): cr.append(cpu(d["B"]) / cpu(d["A"]))
    f = lambda xs: f"{st.median(xs):.2f}× ({min(xs):.2f}–{max(xs):.2f})" if xs else "n/a"
    print(f"| {t} | {st.median(ra):,.0f} | {st.median(rb):,.0f} | {f(rr)} | {f(cr)} |" if ra else f"| {t} | n/a | n/a | n/a | n/a |")
perf = [r for r in rows if r["tag"].startswith("perf")]
if perf:
    print()
    print("| phase (3 s, perf stat on the manager) | system | ops | syscalls/op | context switches/op |")
    print("|---|---|---|---|---|")
    for r in perf:
        ops = val(r, "ops") or 0
        if ops:
            print(f"| {r['tag'][5:]} | {r['sys']} | {ops} | {r['syscalls']/ops:.2f} | {r['cs']/ops:.3f} |")
EOF
