# Sourced by the bench scripts (run_systems.sh, ab.sh, profile.sh,
# grpc_vs_ws.sh, trace_store_js.sh): ports, log lines and the JSON lines
# bench_load prints.
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
