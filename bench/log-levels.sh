#!/usr/bin/env bash
# The cost of the default log level over HTTP, measured as a pair: the same build at
# --log-level warn and at info, each on its own copy of fixtures/demo.xlsx, both pinned to one
# core and loaded at the same time by two `wrk -t1 -c32` pinned to the other core. The two
# servers share their core's time, so each serves in proportion to its own cost per request,
# and a slow spell of this shared machine falls on both at once: the info/warn ratio of one
# round is steady where two runs one after the other differ by up to 40%.
# Prints req/s of each and the ratio, per round, for an exact filter and for all rows.
#   bash bench/log-levels.sh node|deno|bun [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/paired.sh server/main.ts "$@"

start() { # level port
  mkdir -p "$work/$1"
  cp fixtures/demo.xlsx "$work/$1/book.xlsx"
  "${server_cpu[@]}" "${run[@]}" "$work/$1/book.xlsx" --port "$2" --log-level "$1" --state-dir "$work/$1/state" >/dev/null 2>"$work/$1/stderr.log" &
  pids+=($!)
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$2/healthz" && return; sleep 0.1; done
  echo "the $1 server did not start" >&2
  exit 1
}

pair() { # path duration -> "warn info"
  "${load_cpu[@]}" wrk -t1 -c32 -d"$2"s "http://127.0.0.1:$warn_port$1" >"$work/warn.out" &
  local load=$!
  "${load_cpu[@]}" wrk -t1 -c32 -d"$2"s "http://127.0.0.1:$info_port$1" >"$work/info.out"
  wait "$load"
  echo "$(awk '/Requests\/sec/ {print $2}' "$work/warn.out") $(awk '/Requests\/sec/ {print $2}' "$work/info.out")"
}

warn_port=$(( 18950 + RANDOM % 500 )) info_port=$(( warn_port + 1 ))
for round in $(seq 1 "$rounds"); do
  pids=()
  start warn "$warn_port"
  start info "$info_port"
  pair /sheets/book 1 >/dev/null # warm-up
  for target in "exact filter:/sheets/book/City/lisbon" "all rows:/sheets/book"; do
    read -r warn info < <(pair "${target#*:}" "$seconds")
    awk -v r="$round" -v what="${target%%:*}" -v w="$warn" -v i="$info" -v rt="$runtime" \
      'BEGIN { printf "%s round %s %-12s warn %9.0f req/s  info %9.0f req/s  info/warn %.3f\n", rt, r, what, w, i, i / w }'
  done
  kill -TERM "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  rm -rf "$work/warn" "$work/info"
done
