#!/usr/bin/env bash
# Many tenants on one host (serve --tenants): what the host holds as tenants
# are created and called, and once they are idle.
#
#   bench/tenants.sh [TENANTS] [OPEN] [BIN]   default: 1000 tenants, --tenants-open 64, ./host built
#
# Starts `rowcall serve --tenants --tenants-open OPEN` on a fresh data folder
# (no example rows, no encoder), then for each tenant: creates it through the
# operator's API, writes one row (an http row reading the tenant's own row
# through $SELF, with its owner key) and calls it once. Every 100 tenants it
# prints the host's RSS (VmRSS) and open file descriptors; at the end, the
# same after the host has been idle for 2 s, the seconds it all took, and
# the figures of one tenant opened again after it was closed (its first
# call) against one already open.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
open=${2:-64}
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
if [ $# -ge 3 ]; then bin=$3; else go build -o "$tmp/rowcall" ./host; bin=$tmp/rowcall; fi

port=$((20000 + RANDOM % 20000))
base=http://127.0.0.1:$port
ROWCALL_OWNER_KEY= ROWCALL_OPERATOR_KEY= "$bin" serve --tenants --tenants-open "$open" --no-examples --embed-provider off \
  --addr 127.0.0.1:$port --data "$tmp/data" >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "rowcall serving" "$tmp/log" && break; sleep 0.1; done
op=$(cat "$tmp/data/operator.key")

figures() { # RSS in MB and open descriptors
  printf '%s MB RSS, %s fds' "$(awk '$1 == "VmRSS:" {printf "%.1f", $2 / 1024}' /proc/$pid/status)" "$(ls /proc/$pid/fd | wc -l)"
}
# tenant NAME: create it, write its row and call it once; prints the call's milliseconds.
tenant() {
  local name=$1 key
  key=$(curl -sf -H "Authorization: Bearer $op" -d "{\"name\":\"$name\"}" $base/operator/tenants | sed 's/.*"owner_key":"\([^"]*\)".*/\1/')
  curl -sf -o /dev/null -H "x-terminal-key: $key" -H 'Content-Type: application/json' \
    -d '{"key":"SELF_READ","type":"http","target":"GET $SELF/api/directory/$1","auth":"bearer:ROWCALL_OWNER_KEY","content":"# WHAT: read one of this tenant'"'"'s rows"}' \
    $base/t/$name/api/directory
  echo "$key" >"$tmp/$name.key"
  call "$name"
}
call() { # one call of SELF_READ in tenant $1; prints its milliseconds
  curl -sf -o /dev/null -w '%{time_total}\n' -H "x-terminal-key: $(cat "$tmp/$1.key")" -H 'Content-Type: application/json' \
    -d '{"key":"SELF_READ","body":"SELF_READ"}' $base/t/$1/api/dispatch | awk '{printf "%.1f\n", $1 * 1000}'
}

echo "start: $(figures)"
start=$(date +%s.%N)
for i in $(seq "$n"); do
  tenant "t$(printf %05d "$i")" >/dev/null
  [ $((i % 100)) -eq 0 ] && echo "$i tenants: $(figures)"
done
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}')
sleep 2
echo "idle after $n tenants ($took s): $(figures)"
echo "a call in a tenant closed since (opened again): $(call t00001) ms; in one open: $(call "t$(printf %05d "$n")") ms"
echo "the tenants' folders: $(du -sm "$tmp/data/tenants" | cut -f1) MB"
