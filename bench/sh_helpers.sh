# Sourced by the bench scripts (run_systems.sh, ab.sh, profile.sh,
# grpc_vs_ws.sh, replicas.sh, trace_store_js.sh): ports, log lines and the
# JSON lines bench_load prints; and what the side-by-side scripts share.
free_port() { # a port below the ephemeral range that nothing uses now
  local p hex i
  for i in $(seq 100); do
    p=$((20000 + RANDOM % 12000))
    printf -v hex '%04X' "$p"
    grep -qi ":$hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

wait_listen() { # port [seconds]
  local hex i
  printf -v hex '%04X' "$1"
  for i in $(seq $((${2:-10} * 20))); do
    grep -qi ":$hex 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

json_field() { # line key -> number or string value
  echo "$1" | grep -o "\"$2\":\"\?[^,\"}]*" | head -1 | sed 's/.*:"\?//'
}

wait_line() { # file pattern [seconds]: prints the first match of the grep -P pattern
  local i m
  for i in $(seq $((${3:-30} * 20))); do
    m=$(grep -a -oP "$2" "$1" 2>/dev/null | head -1 || true)
    [ -n "$m" ] && { echo "$m"; return 0; }
    sleep 0.05
  done
  echo "$(basename "$0"): no '$2' in $1:" >&2
  tail -5 "$1" >&2
  return 1
}

# ---- the side-by-side scripts (grpc_vs_ws.sh, replicas.sh, trace_store_js.sh) ----
# Each runs its systems in one go and in rotating order; they share these
# options, their scratch directory and (but trace_store_js.sh) the manager.

side_by_side_options() { # name [option value]...: sets build, rounds, secs, out
  # (default bench/runs/<date>-<name>.jsonl) and, through the script's own
  # extra_option (option value; false if unknown) when it has one, the rest.
  build=$root/build
  rounds=5
  secs=5
  out=$root/bench/runs/$(date -u +%F)-$1.jsonl
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --build-dir) build=$2 ;;
      --rounds) rounds=$2 ;;
      --seconds) secs=$2 ;;
      --out) out=$2 ;;
      *)
        declare -F extra_option >/dev/null && extra_option "$@" ||
          { echo "$(basename "$0"): unknown option $1" >&2; exit 2; } ;;
    esac
    shift 2
  done
}

require_built() { # hint path...: exits 1 naming the first path under $build that is missing
  local hint=$1 p
  shift
  for p in "$@"; do
    # A .mjs script is run by node: it need only be there.
    case $p in
      *.mjs) [ -e "$build/$p" ] ;;
      *) [ -x "$build/$p" ] ;;
    esac || { echo "$(basename "$0"): $build/$p is missing ($hint)" >&2; exit 1; }
  done
}

start_scratch() { # tmp (removed on exit) and pids (the processes killed on exit)
  tmp=$(mktemp -d)
  pids=()
  trap stop_scratch EXIT
}
stop_scratch() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}

start_manager() { # [actor-host flags...]: one manager in $tmp; sets mpid, refl (runtimes' port), http (API port)
  "$build/actor-host" --role manager --port 0 --http-port 0 --worker-port 0 --trace-store none \
    --project-root "$tmp" "$@" >"$tmp/manager.log" 2>&1 &
  mpid=$!
  pids+=("$mpid")
  refl=$(wait_line "$tmp/manager.log" 'reflection server: ws://localhost:\K\d+')
  http=$(wait_line "$tmp/manager.log" 'API server: http://localhost:\K\d+')
}

new_results_file() { # the empty $out, its directory made
  mkdir -p "$(dirname "$out")"
  : >"$out"
}

summarize_results() { # python on stdin: run on $out (its argv[1]), bench/side_by_side.py importable
  echo "raw: $out"
  PYTHONPATH="$root/bench${PYTHONPATH:+:$PYTHONPATH}" python3 - "$out"
}
