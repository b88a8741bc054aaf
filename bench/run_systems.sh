# Sourced by bench/run.sh and bench/run_scale.sh: starting and stopping the
# systems under test and their fake runtimes, with the `started` list of the
# processes they started. Uses the sourcing script's variables (out, bin,
# host_bin, root, node_dir, ours_flags).
# Only processes the sourcing script started (and that are still its
# children) are ever signalled.
started=()
ours() { [ -n "$1" ] && [ "$(awk '{print $4}' "/proc/$1/stat" 2>/dev/null)" = "$$" ]; }
cleanup() {
  local p
  for p in "${started[@]}"; do ours "$p" && kill -TERM "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${started[@]}"; do ours "$p" && kill -KILL "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$root/bench/sh_helpers.sh"

stop_pid() { # pid: TERM, then KILL after 3 s
  local p=$1 i
  ours "$p" || return 0
  kill -TERM "$p" 2>/dev/null || return 0
  for i in $(seq 30); do
    kill -0 "$p" 2>/dev/null || return 0
    [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = Z ] && return 0
    sleep 0.1
  done
  kill -KILL "$p" 2>/dev/null
}


# Starts N fake runtimes against ws URL; sets fake_pid (the process) once all
# have registered. Returns 1 on failure. ENV assignments after the log file
# are a variant's (run.sh --variant): BENCH_TRACE_IDS=random among them makes
# the runtimes' trace ids random, as Genkit's are (the fake runtime counts
# them by default, which a store keyed by trace id appends).
start_fake() { # url n prefix timeout_s logfile [ENV=VALUE...]
  local f=$5 i line a ids=()
  for a in "${@:6}"; do [[ $a == BENCH_TRACE_IDS=* ]] && ids=(--trace-ids "${a#BENCH_TRACE_IDS=}"); done
  : >"$f"
  "$bin/bench_fake_runtime" --url "$1" --n "$2" --prefix "$3" --lifetime 7200 "${ids[@]}" >"$f" 2>"$f.err" &
  local p=$!
  started+=("$p")
  fake_pid=""
  for i in $(seq $(($4 * 20))); do
    line=$(head -1 "$f" 2>/dev/null)
    if [ -n "$line" ]; then fake_pid=$(json_field "$line" pid); return 0; fi
    kill -0 "$p" 2>/dev/null || break
    sleep 0.05
  done
  log "fake runtimes ($2 on $1) did not register: $(tail -2 "$f.err" 2>/dev/null)"
  stop_pid "$p"
  return 1
}

start_ours() { # [ENV=VALUE...]: sets ours_pid ours_api
  local p h a exe=$host_bin
  p=$(free_port) && h=$(free_port) || return 1
  # ACTOR_HOST_BIN=PATH among them: another build's manager (a before/after
  # side by side in one run).
  for a in "$@"; do [[ $a == ACTOR_HOST_BIN=* ]] && exe=${a#ACTOR_HOST_BIN=}; done
  # --worker-port 0: two instances (ours, ours-http) must not share the
  # default worker endpoint port.
  # The call path alone: the trace store (on by default) is a variant of its own.
  env ACTOR_HOST_TRACE_STORE=none "$@" "$exe" $ours_flags --port "$p" --http-port "$h" --worker-port 0 >>"$out/ours.log" 2>&1 &
  ours_pid=$!
  started+=("$ours_pid")
  ours_rport=$p
  ours_api=$h
  wait_listen "$p" && wait_listen "$h"
}

start_relay() { # sets relay_pid relay_rport relay_api
  local f=$out/relay.out i line
  : >"$f"
  "$bin/bench_relay" >"$f" 2>>"$out/relay.log" &
  relay_pid=$!
  started+=("$relay_pid")
  for i in $(seq 200); do
    line=$(head -1 "$f")
    if [ -n "$line" ]; then
      relay_rport=$(json_field "$line" runtime_port)
      relay_api=$(json_field "$line" api_port)
      return 0
    fi
    sleep 0.05
  done
  return 1
}

ts_running=0
start_ts() { # sets ts_pid ts_port; talks over the TSD coprocess
  local port line
  port=$(free_port) || return 1
  coproc TSD { exec node --expose-gc "$root/bench/ts_driver.mjs" --node-dir "$node_dir" --port "$port" 2>>"$out/ts.log"; }
  ts_pid=$TSD_PID
  started+=("$ts_pid")
  if ! read -r -t 60 -u "${TSD[0]}" line; then
    log "TS manager did not start (see ts.log)"
    return 1
  fi
  ts_port=$(json_field "$line" port)
  tools_common=$(json_field "$line" tools_common)
  ts_running=1
}
# No command substitution around ts_cmd/phase: they must run in this shell,
# which owns the coprocess pipes.
ts_cmd() { # json [timeout] -> sets ts_reply
  ts_reply=""
  echo "$1" >&"${TSD[1]}" || return 1
  read -r -t "${2:-60}" -u "${TSD[0]}" ts_reply || return 1
}
stop_ts() {
  [ $ts_running = 1 ] || return 0
  echo '{"cmd":"exit"}' >&"${TSD[1]}" 2>/dev/null
  local i
  for i in $(seq 30); do kill -0 "$ts_pid" 2>/dev/null || break; sleep 0.1; done
  stop_pid "$ts_pid"
  wait "$ts_pid" 2>/dev/null
  ts_running=0
}

start_tsws() { # sets tsws_pid tsws_port tsws_api
  local f=$out/tsws.out i line
  tsws_port=$(free_port) && tsws_api=$(free_port) || return 1
  : >"$f"
  node "$root/bench/ts_driver.mjs" --node-dir "$node_dir" --port "$tsws_port" \
    --front-door "$tsws_api" --no-commands </dev/null >"$f" 2>>"$out/tsws.log" &
  tsws_pid=$!
  started+=("$tsws_pid")
  for i in $(seq 1200); do
    [ -n "$(head -1 "$f")" ] && return 0
    kill -0 "$tsws_pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

start_tools() { # sets tools_pid tools_port tools_api: the Genkit tools server
  local f=$out/tools.out i
  tools_port=$(free_port) && tools_api=$(free_port) || return 1
  : >"$f"
  node "$root/bench/tools_server.mjs" --node-dir "$node_dir" --port "$tools_port" \
    --http-port "$tools_api" --home "$out/tools-home" </dev/null >"$f" 2>>"$out/tools.log" &
  tools_pid=$!
  started+=("$tools_pid")
  for i in $(seq 1200); do
    [ -n "$(head -1 "$f")" ] && break
    kill -0 "$tools_pid" 2>/dev/null || return 1
    sleep 0.05
  done
  wait_listen "$tools_api" 20
}

# One memory point (run.sh's memory section, run_scale.sh's idle test): the
# RSS of SYSTEM (ours, relay or ts) with N idle runtimes connected, each
# point in fresh processes, stopped again before it returns. The runtimes
# log to $out/fake-PREFIX.out. Sets idle_ok (true/false), idle_rss_kb (-1
# when not read) and idle_note (why not ok).
idle_rss() { # system n prefix
  local sys=$1 n=$2 pid="" url="" got
  idle_ok=false; idle_rss_kb=-1; idle_note=""
  case $sys in
    ours) start_ours && url="ws://127.0.0.1:$ours_rport" && pid=$ours_pid ;;
    relay) start_relay && url="ws://127.0.0.1:$relay_rport" && pid=$relay_pid ;;
    ts) start_ts && url="ws://127.0.0.1:$ts_port" && pid=$ts_pid ;;
  esac
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    idle_note="the system did not start"
  elif start_fake "$url" "$n" "$3" 300 "$out/fake-$3.out"; then
    if [ "$sys" = ts ]; then
      ts_cmd "{\"cmd\":\"wait\",\"runtimes\":$n,\"timeoutMs\":60000}" 90
      sleep 1
      ts_cmd '{"cmd":"mem"}' 60
      idle_rss_kb=$(json_field "$ts_reply" rssKb)
      got=$(json_field "$ts_reply" runtimes)
      [ "$got" = "$n" ] && idle_ok=true || idle_note="only $got of $n runtimes listed"
    else
      sleep 1
      idle_rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
      idle_ok=true
    fi
    stop_pid "$fake_pid"
  else
    idle_note="not all $n runtimes registered within 300 s"
  fi
  [ -n "$idle_rss_kb" ] || idle_rss_kb=-1
  if [ "$sys" = ts ]; then stop_ts; else stop_pid "$pid"; fi
}

# Systems called over HTTP (/api/runAction, /api/streamAction): echo and
# stream scenarios only. A variant named NAME-http (ours+NAME-http) is one.
http_system() { [ "$1" = ours-http ] || [ "$1" = tools ] || [[ $1 == ours+*-http ]]; }
