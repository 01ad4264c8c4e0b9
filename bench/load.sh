#!/usr/bin/env bash
# Load test of the local host: receipted fn dispatches over HTTP keep-alive.
#
#   bench/load.sh [RATE] [SECONDS] [CONNECTIONS]   default: 10000 calls/s for 10 s over 50, then flat out
#
# Starts `rowcall serve` on a fresh data directory, registers the WAT echo
# module as the row ECHO, and drives POST /api/dispatch with hey (Debian's
# package; installed if missing) at a fixed rate (50 connections × RATE/50 each),
# then as fast as it can. Every answer is acknowledged only after its receipt is
# stored. Prints hey's summary (requests/s, latency distribution, status codes).
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-10000}
secs=${2:-10}
conns=${3:-50}

command -v hey >/dev/null || { apt-get update -qq && apt-get install -y -qq hey >/dev/null; }
go build -o bin/rowcall ./host
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
bin/rowcall serve --addr 127.0.0.1:$port --data "$data" --no-examples >"$data/log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "rowcall serving" "$data/log" 2>/dev/null && break; sleep 0.1; done
key=$(cat "$data/owner.key")
url=http://127.0.0.1:$port

curl -fsS -X PUT "$url/api/modules/echo" -H "x-terminal-key: $key" -H 'content-type: application/wasm' \
  --data-binary @wasm/examples/echo.wasm >/dev/null
curl -fsS -X POST "$url/api/directory" -H "x-terminal-key: $key" -H 'content-type: application/json' \
  -d '{"key":"ECHO","type":"fn","target":"echo","content":"# WHAT: echo\n[\"$1+\"]"}' >/dev/null

load() { hey "$@" -c $conns -m POST -T application/json -H "x-terminal-key: $key" \
  -d '{"key":"ECHO","body":"hello"}' "$url/api/dispatch"; }

echo "== warm-up"; load -z 2s >/dev/null
echo "== fixed rate: $rate calls/s for ${secs}s ($conns connections)"
load -z "${secs}s" -q $((rate / conns))
echo "== flat out for ${secs}s ($conns connections)"
load -z "${secs}s"
n=$(sqlite3 "$data/rowcall.db" 'SELECT COUNT(*) FROM receipts' 2>/dev/null || echo "?")
echo "== receipts stored: $n"
