#!/usr/bin/env bash
# A/B load test: two revisions of the host under the same load, their runs
# alternated so that both see the machine in the same state (its speed moves
# by ±20% from minute to minute; compare within one run of this script).
#
#   bench/ab.sh REV_A REV_B [ROUNDS] [SECONDS] [CONNECTIONS...]
#
# A revision is anything git names (HEAD~1, a branch, a commit), or "." for the
# working tree as it is, uncommitted changes included. Defaults: 3 rounds of
# 8 s at 32 connections. Each run is one bench/load.sh on a fresh data
# directory: requests/s, latency percentiles, the host's CPU a request, and the
# stored chain verified at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,13p "$0"; exit 2; }
revs=("$1" "$2")
shift 2
rounds=${1:-3}; shift || true
secs=${1:-8}; shift || true
[ $# -gt 0 ] && conns=("$@") || conns=(32)

tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/src" 2>/dev/null; rm -rf "$tmp"' EXIT
for i in 0 1; do
  if [ "${revs[$i]}" = . ]; then
    go build -o "$tmp/$i" ./host
  else
    git worktree add -q --detach "$tmp/src" "${revs[$i]}"
    (cd "$tmp/src" && go build -o "$tmp/$i" ./host)
    git worktree remove --force "$tmp/src"
  fi
done
for r in $(seq "$rounds"); do
  for i in 0 1; do
    ROWCALL_BIN="$tmp/$i" bench/load.sh "$secs" "${conns[@]}" | grep -E '^== ([0-9]|receipts)' | sed "s|^== |round $r, ${revs[$i]}: |"
  done
done
