#!/usr/bin/env bash
# MCP tools/call three ways in one run: a direct MCP server, MCPJungle proxying
# it, and rowcall's /mcp calling the same upstream through an http row.
#
#   MCPJUNGLE_BIN=/tmp/mcpjungle/mcpjungle bench/mcpjungle.sh [ROUNDS] [SECONDS] [CLIENTS]
#
# ROWCALL_BIN=path runs that rowcall binary instead of building ./host;
# ROWCALL_BASE_BIN=path runs a second rowcall host from that binary beside it,
# as the target "base", in the same rounds (an A/B of two builds).
# ROW=mcp makes rowcall's row TEMP an MCP row (runner "mcp", target
# "MCP http://<direct>/mcp#TEMP") whose upstream is the direct server itself:
# then rowcall and MCPJungle both proxy the direct server's tool, and
# "p50 over direct" is what the proxy adds. The default, ROW=http, is the
# http row on the upstream the direct server calls.
# RTT=2ms puts the direct MCP server at a network's distance: each request to
# its /mcp waits that long (mcpload serve -rtt), whichever path sends it.
# MCPLOAD_ARGS=-raw makes each tools/call raw HTTP on the SDK client's
# sessions (the same request bytes, a lighter load client: bench/mcpload).
# Defaults: 3 rounds of 5 s a target at 1 and 8 clients ("1,8"). MCPJungle is
# not part of this repository: build it by hand (docs/benchmarks.md, "MCP",
# says from which commit and how). Without MCPJUNGLE_BIN
# the run compares rowcall with the direct server alone.
#
# Processes, all on loopback: `mcpload serve` (bench/mcpload) is the upstream
# (GET /v1/forecast) and the direct MCP server (the official Go SDK, one tool
# TEMP that makes that upstream request); `rowcall serve` on a fresh data
# directory with the row TEMP (the http row on the same upstream, or with
# ROW=mcp the MCP row on the direct server); `mcpjungle start`
# (SQLite in a fresh directory, gin in release mode, its request log to a
# file) with the direct server registered as "direct" (its tool: direct/TEMP).
# `mcpload load` then drives every target with the same Go SDK client, each
# client its own session, rounds interleaved, and prints calls/s, p50, p99
# and the CPU each server process spent a call (the direct server's includes
# the upstream's, which every path calls), then medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
clients=${3:-1,8}

tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
rowcall=${ROWCALL_BIN:-$tmp/rowcall}
[ -n "${ROWCALL_BIN:-}" ] || go build -o "$rowcall" ./host
go build -o "$tmp/mcpload" ./bench/mcpload

wait_for() { # URL: until it answers at all
  for _ in $(seq 100); do curl -s -o /dev/null "$1" && return; sleep 0.1; done
  echo "no answer from $1" >&2; exit 1
}
port() { echo $((20000 + RANDOM % 20000)); }

up=127.0.0.1:$(port)
"$tmp/mcpload" serve -rtt "${RTT:-0}" "$up" >"$tmp/direct.log" 2>&1 &
pids+=($!); direct_pid=$!
wait_for "http://$up/v1/forecast"

start_rowcall() { # NAME BINARY: a host on a fresh data directory with the row TEMP; adds its target
  local addr=127.0.0.1:$(port)
  ROWCALL_OWNER_KEY=$key ROWCALL_ALLOW_OUTBOUND=$up "$2" serve --addr "$addr" --data "$tmp/$1-data" --no-examples >"$tmp/$1.log" 2>&1 &
  pids+=($!); cpu+=",$1=$!"
  wait_for "http://$addr/"
  if [ "${ROW:-http}" = mcp ]; then
    curl -fsS -X POST "http://$addr/api/directory" -H "x-terminal-key: $key" -H 'content-type: application/json' \
      -d '{"key":"TEMP","type":"http","runner":"mcp","target":"MCP http://'"$up"'/mcp#TEMP","content":"# WHAT: Current temperature"}' >/dev/null
    targets+=("$1=http://$addr/mcp#TEMP")
    return
  fi
  curl -fsS -X POST "http://$addr/api/directory" -H "x-terminal-key: $key" -H 'content-type: application/json' \
    -d '{"key":"TEMP","type":"http","target":"GET http://'"$up"'/v1/forecast?latitude=$1&longitude=$2","content":"# WHAT: Current temperature\n# ARGS: $1=latitude | $2=longitude"}' >/dev/null
  targets+=("$1=http://$addr/mcp#TEMP#{\"args\":\"1|2\"}")
}
key=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n') # every rowcall host's owner key: the client sends it to all
cpu="direct=$direct_pid"
targets=()
start_rowcall rowcall "$rowcall"
[ -z "${ROWCALL_BASE_BIN:-}" ] || start_rowcall base "$ROWCALL_BASE_BIN"
targets+=("direct=http://$up/mcp#TEMP")
if [ -n "${MCPJUNGLE_BIN:-}" ]; then
  mj=$(port)
  mkdir "$tmp/mcpjungle"
  (cd "$tmp/mcpjungle" && GIN_MODE=release exec "$MCPJUNGLE_BIN" start --port "$mj" >log 2>&1) &
  pids+=($!); mj_pid=$!
  wait_for "http://127.0.0.1:$mj/health"
  curl -fsS -X POST "http://127.0.0.1:$mj/api/v0/servers" -H 'content-type: application/json' \
    -d '{"name":"direct","description":"the direct MCP server","url":"http://'"$up"'/mcp"}' >/dev/null
  targets+=("mcpjungle=http://127.0.0.1:$mj/mcp#direct/TEMP")
  cpu+=",mcpjungle=$mj_pid"
fi
"$tmp/mcpload" load ${MCPLOAD_ARGS:-} -rounds "$rounds" -secs "$secs" -clients "$clients" -key "$key" -cpu "$cpu" "${targets[@]}"
