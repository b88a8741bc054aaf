#!/usr/bin/env bash
# How long a manager takes to list N runtimes that connect at once, and to
# forget them all when they drop at once (the runtime directory's burst
# path). One manager (BIN, default build/actor-host), N fake runtimes
# (bench_fake_runtime, 256 connecting at a time); prints two lines:
#   connect S s (N)         from the fake's start to N runtimes registered
#   deregister all S s (0)  from killing the fake to none registered
# Compare builds by running them in turn, interleaved. PROF=1 records a
# perf profile of the manager to $out/perf.data.
# usage: bench/fleet_churn.sh [BIN] [N] [OUT_DIR]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/actor-host}
n=${2:-10000}
out=${3:-$(mktemp -d)}
fake=$root/build/bench/bench_fake_runtime
ulimit -n 65536 2>/dev/null || true
port=$((20000 + RANDOM % 20000))
api=$((port + 1))
registered() {
  curl -s "localhost:$api/metrics" | awk '/^actor_host_runtimes_connected / {print $2}'
}
"$bin" --role manager --log-level warn --max-connections 20000 --port "$port" --http-port "$api" \
  --worker-port 0 --trace-store none >"$out/manager.log" 2>&1 &
m=$!
for _ in $(seq 100); do curl -s "localhost:$api/healthz" >/dev/null && break; sleep 0.05; done
kill -0 $m 2>/dev/null || { echo "the manager did not start: $(tail -1 "$out/manager.log")"; exit 1; }
if [ -n "${PROF:-}" ]; then perf record -F 999 -p $m -o "$out/perf.data" 2>/dev/null & p=$!; fi
t0=$(date +%s.%N)
"$fake" --url "ws://127.0.0.1:$port" --n "$n" --prefix sp --lifetime 600 >"$out/fake.out" 2>"$out/fake.err" &
f=$!
c=0
for _ in $(seq 6000); do
  c=$(registered); [ "${c:-0}" -ge "$n" ] && break
  kill -0 $m 2>/dev/null || { echo "the manager died"; break; }
  sleep 0.1
done
t1=$(date +%s.%N)
echo "connect $(echo "$t1 - $t0" | bc) s ($c)"
kill $f
t2=$(date +%s.%N)
for _ in $(seq 1200); do c=$(registered); [ "${c:-1}" -eq 0 ] && break; sleep 0.05; done
t3=$(date +%s.%N)
echo "deregister all $(echo "$t3 - $t2" | bc) s ($c)"
if [ -n "${PROF:-}" ]; then kill -INT $p; wait $p; fi
kill -TERM $m
wait $m $f 2>/dev/null
