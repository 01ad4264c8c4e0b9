#!/usr/bin/env bash
# Resident memory of an idle host, with the embedded encoder and without it
# (--embed-provider off): what the encoder costs a host that does nothing.
#
#   bench/idle-rss.sh [ROUNDS] [BIN...]      default: 3 rounds of ./host, built
#
# Each run starts `rowcall serve` on a fresh data directory (with the example
# rows a new host installs, or none with NO_EXAMPLES=1), waits until it
# serves and, with the encoder, until the encoder has loaded (the log's
# "embeddings on"), then until the host is idle (no CPU time spent over a
# second: the examples are embedded), then reads VmRSS (and its anonymous and file-mapped parts) from /proc/PID/status
# and the Go heap from the host's Prometheus metrics (runtime/metrics: the
# heap in use, and what the runtime holds but has not returned to the OS).
# Several binaries (e.g. two revisions' builds) and the two modes are
# alternated round by round, so that all see the machine in the same state.
# Prints one line a run, then for each binary the median encoder share (RSS
# with, minus RSS without).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
if [ $# -gt 0 ]; then bins=("$@"); else go build -o "$tmp/rowcall" ./host; bins=("$tmp/rowcall"); fi

examples=()
[ "${NO_EXAMPLES:-0}" = 1 ] && examples=(--no-examples)

cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, in 1/100 s
kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
metric() { awk -v m="$2" '$1 == m {printf "%.1f", $2 / 1048576}' <<<"$1"; }

# run BIN MODE: one host; prints its figures and appends its RSS to $tmp/BIN-MODE.
run() {
  local bin=$1 mode=$2 data port log m rss
  data=$(mktemp -d "$tmp/data.XXXX")
  port=$((20000 + RANDOM % 20000))
  log=$data/log
  "$bin" serve --addr 127.0.0.1:$port --metrics-addr 127.0.0.1:$((port + 1)) --data "$data" \
    --embed-provider "$mode" "${examples[@]}" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -q "rowcall serving" "$log" && break; sleep 0.1; done
  grep -q "rowcall serving" "$log" || { cat "$log"; exit 1; }
  if [ "$mode" = use-lite ]; then
    for _ in $(seq 600); do grep -qE "embeddings on|embeddings off" "$log" && break; sleep 0.1; done
    grep -q "embeddings on" "$log" || { cat "$log"; exit 1; }
  fi
  local t0 t1
  for _ in $(seq 120); do
    t0=$(cputicks $pid)
    sleep 1
    t1=$(cputicks $pid)
    [ "$t0" = "$t1" ] && break
  done
  m=$(curl -fsS "http://127.0.0.1:$((port + 1))/metrics")
  rss=$(kb $pid VmRSS)
  printf '%-28s %-9s RSS %6.1f MB (anon %6.1f, file %5.1f)  Go heap in use %6.1f MB, idle %6.1f, released %6.1f, next GC %6.1f\n' \
    "$(basename "$bin")" "$mode" "$(bc -l <<<"$rss/1024")" "$(bc -l <<<"$(kb $pid RssAnon)/1024")" "$(bc -l <<<"$(kb $pid RssFile)/1024")" \
    "$(metric "$m" go_memstats_heap_inuse_bytes)" "$(metric "$m" go_memstats_heap_idle_bytes)" \
    "$(metric "$m" go_memstats_heap_released_bytes)" "$(metric "$m" go_memstats_next_gc_bytes)"
  echo "$rss" >>"$tmp/$(basename "$bin")-$mode"
  kill $pid
  wait $pid 2>/dev/null || true
  pid=
}

for _ in $(seq "$rounds"); do
  for bin in "${bins[@]}"; do
    for mode in use-lite off; do run "$bin" "$mode"; done
  done
done
median() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for bin in "${bins[@]}"; do
  b=$(basename "$bin")
  on=$(median "$tmp/$b-use-lite")
  off=$(median "$tmp/$b-off")
  printf '%s: median RSS with the encoder %.1f MB, off %.1f MB: the encoder %.1f MB\n' "$b" \
    "$(bc -l <<<"$on/1024")" "$(bc -l <<<"$off/1024")" "$(bc -l <<<"($on-$off)/1024")"
done
