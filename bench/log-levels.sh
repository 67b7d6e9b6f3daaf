#!/usr/bin/env bash
# The cost of the default log level over HTTP: the same build at --log-level warn and info,
# each started afresh on a copy of fixtures/demo.xlsx, alternating, under `wrk -t1 -c32 -d4s`
# (Debian's wrk) on 127.0.0.1. Prints req/s for an exact filter and for all rows.
#   bash bench/log-levels.sh node|deno|bun [ROUNDS] [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
runtime=${1:-node} rounds=${2:-2} port=${3:-18951}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 2; }
bin=$PWD/node_modules/.bin
case $runtime in
  node) run=("$bin/node" server/main.ts) ;;
  deno) run=("$bin/deno" run -A server/main.ts) ;;
  bun) run=("$bin/bun" server/main.ts) ;;
  *) echo "usage: $0 node|deno|bun [ROUNDS] [PORT]" >&2; exit 2 ;;
esac
for round in $(seq 1 "$rounds"); do
  for level in warn info; do
    dir=$(mktemp -d)
    cp fixtures/demo.xlsx "$dir/book.xlsx"
    "${run[@]}" "$dir/book.xlsx" --port "$port" --log-level "$level" --state-dir "$dir/state" >/dev/null 2>"$dir/stderr.log" &
    server=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
    filter=$(wrk -t1 -c32 -d4s "http://127.0.0.1:$port/sheets/book/City/lisbon" | awk '/Requests\/sec/ {print $2}')
    all=$(wrk -t1 -c32 -d4s "http://127.0.0.1:$port/sheets/book" | awk '/Requests\/sec/ {print $2}')
    echo "$runtime round $round $level: exact filter $filter req/s, all rows $all req/s"
    kill -TERM "$server"; wait "$server" || true
    rm -rf "$dir"
  done
done
