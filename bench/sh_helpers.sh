# Sourced by the bench scripts (run_systems.sh, ab.sh, profile.sh): ports
# and the JSON lines bench_load prints.
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
