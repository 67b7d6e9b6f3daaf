#!/usr/bin/env bash
# The least a log line per request can cost each runtime, beside what sheetrest's logger costs:
# bench/log-floor.ts three times (no log; the simplest buffered writer; sheetrest's logger),
# paired as bench/log-levels.sh pairs: two servers pinned together to one core, each loaded by
# its own `wrk -t1 -c32` on the other, at the same time. Prints each pair's req/s and ratio.
#   bash bench/log-floor.sh node|deno|bun [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/paired.sh bench/log-floor.ts "$@"
base=$(( 19500 + RANDOM % 400 ))
declare -A port
for mode in none minimal sheetrest; do
  port[$mode]=$base
  "${server_cpu[@]}" "${run[@]}" "$base" "$mode" >/dev/null 2>"$work/$mode.log" &
  pids+=($!)
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$base/" && break; sleep 0.1; done
  base=$(( base + 1 ))
done

pair() { # modeA modeB seconds -> "a b"
  "${load_cpu[@]}" wrk -t1 -c32 -d"$3"s "http://127.0.0.1:${port[$1]}/one" >"$work/a.out" &
  local load=$!
  "${load_cpu[@]}" wrk -t1 -c32 -d"$3"s "http://127.0.0.1:${port[$2]}/one" >"$work/b.out"
  wait "$load"
  echo "$(awk '/Requests\/sec/ {print $2}' "$work/a.out") $(awk '/Requests\/sec/ {print $2}' "$work/b.out")"
}

pair none minimal 1 >/dev/null
pair none sheetrest 1 >/dev/null
for round in $(seq 1 "$rounds"); do
  for both in "none minimal" "none sheetrest" "minimal sheetrest"; do
    read -r a b < <(pair ${both% *} ${both#* } "$seconds")
    awk -v r="$round" -v rt="$runtime" -v an="${both% *}" -v bn="${both#* }" -v a="$a" -v b="$b" \
      'BEGIN { printf "%s round %s  %-9s %8.0f req/s  %-9s %8.0f req/s  %s/%s %.3f\n", rt, r, an, a, bn, b, bn, an, b / a }'
  done
done
