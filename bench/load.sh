#!/usr/bin/env bash
# Load test of the local host beside a bare net/http floor: receipted fn
# dispatches over HTTP keep-alive.
#
#   bench/load.sh [SECONDS] [CONNECTIONS...]     default: 10 s at 8, 16 and 32 connections
#
# ROWCALL_BIN=path runs that binary instead of building ./host (bench/ab.sh does);
# FLOOR=0 leaves the floor out; FLOOR_ARGS are the floor's flags (e.g.
# "-work 150 -garbage 30000", a CPU-matched floor: bench/floor).
#
# Starts `rowcall serve` on a fresh data directory, registers the WAT echo
# module as the row ECHO, and drives POST /api/dispatch {"key":"ECHO","body":"hello"}
# with wrk (Debian's package, installed if missing; one thread, on the same two
# cores as the host) as fast as each number of keep-alive connections allows.
# Every answer is sent only after its receipt is stored. At each number of
# connections it first drives the floor (bench/floor: net/http answering the
# same request with a fixed body of the same size) the same way, then rowcall,
# and prints for each wrk's requests/s, latency percentiles, errors and the
# server's CPU time per request, then rowcall's requests/s as a share of the
# floor's. At the end, how many receipts were stored and whether the chain
# verifies offline. The load average is printed at the start: the figures are
# only worth comparing on a quiet machine, or within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shift || true
[ $# -gt 0 ] && conns=("$@") || conns=(8 16 32)

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
bin=${ROWCALL_BIN:-bin/rowcall}
[ -n "${ROWCALL_BIN:-}" ] || go build -o bin/rowcall ./host
floor=${FLOOR:-1}
[ "$floor" = 0 ] || go build -o bin/floor ./bench/floor
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
fport=$((port + 1))
fpid=
trap 'kill $pid $fpid 2>/dev/null; rm -rf "$data"' EXIT
"$bin" serve --addr 127.0.0.1:$port --data "$data" --no-examples >"$data/log" 2>&1 &
pid=$!
if [ "$floor" != 0 ]; then
  bin/floor -addr 127.0.0.1:$fport ${FLOOR_ARGS:-} >"$data/floor.log" 2>&1 &
  fpid=$!
fi
for _ in $(seq 50); do grep -q "rowcall serving" "$data/log" 2>/dev/null && break; sleep 0.1; done
key=$(cat "$data/owner.key")
url=http://127.0.0.1:$port

curl -fsS -X PUT "$url/api/modules/echo" -H "x-terminal-key: $key" -H 'content-type: application/wasm' \
  --data-binary @wasm/examples/echo.wasm >/dev/null
curl -fsS -X POST "$url/api/directory" -H "x-terminal-key: $key" -H 'content-type: application/json' \
  -d '{"key":"ECHO","type":"fn","target":"echo","content":"# WHAT: echo\n[\"$1+\"]"}' >/dev/null
cat >"$data/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"key":"ECHO","body":"hello"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["x-terminal-key"] = "$key"
LUA

cputicks() { awk '{print $14 + $15}' /proc/$1/stat; } # utime + stime, in 1/100 s
run() { wrk -t1 -c"$1" -d"$2" --latency -s "$data/post.lua" "$3/api/dispatch"; }

# measure NAME PID URL CONNS: one wrk run; prints its line, sets rps.
measure() {
  local t0 t1 out
  t0=$(cputicks "$2")
  out=$(run "$4" "${secs}s" "$3")
  t1=$(cputicks "$2")
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  printf '== %s connections, %s s, %s: %s requests/s  mean %s  p50 %s  p90 %s  p99 %s  CPU %s µs/request  errors %s\n' "$4" "$secs" "$1" "$rps" \
    "$(awk '$1 == "Latency"{print $2; exit}' <<<"$out")" "$(awk '/ 50%/{print $2}' <<<"$out")" "$(awk '/ 90%/{print $2}' <<<"$out")" "$(awk '/ 99%/{print $2}' <<<"$out")" \
    "$(awk -v t=$((t1 - t0)) -v r="$rps" -v s="$secs" 'BEGIN{printf "%.0f", t * 10000 / (r * s)}')" \
    "$({ grep -E 'Non-2xx|Socket errors' <<<"$out" || echo 0; } | tr -s ' ' | tr -d '\n')"
}

echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo "== warm-up"
run 16 2s "$url" >/dev/null
[ "$floor" = 0 ] || run 16 2s "http://127.0.0.1:$fport" >/dev/null
for c in "${conns[@]}"; do
  if [ "$floor" != 0 ]; then
    measure floor "$fpid" "http://127.0.0.1:$fport" "$c"
    frps=$rps
  fi
  measure rowcall "$pid" "$url" "$c"
  [ "$floor" = 0 ] || echo "== $c connections: rowcall $(awk -v a="$rps" -v b="$frps" 'BEGIN{printf "%.2f", a / b}')× the floor"
done
"$bin" receipt export --url "$url" --data "$data" >"$data/chain.json"
"$bin" receipt keys --url "$url" >"$data/keys.json"
echo "== receipts stored, verified offline: $("$bin" receipt verify "$data/chain.json" --keys "$data/keys.json" 2>&1)"
