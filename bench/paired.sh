# Sourced by bench/log-levels.sh and bench/log-floor.sh: `source bench/paired.sh SCRIPT "$@"`.
# From `node|deno|bun [ROUNDS] [SECONDS]` it sets runtime, rounds, seconds (default 4) and run
# (the command that runs SCRIPT on that runtime); server_cpu and load_cpu pin the servers to one
# core and the loaders to the other (empty without a second core or taskset: both still run at
# once, unpinned); work is a temporary folder and pids the servers, both cleaned up on exit.
script=$1
shift
runtime=${1:-node} rounds=${2:-3} seconds=${3:-4}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 2; }
bin=$PWD/node_modules/.bin
case $runtime in
  node) run=("$bin/node" "$script") ;;
  deno) run=("$bin/deno" run -A "$script") ;;
  bun) run=("$bin/bun" "$script") ;;
  *) echo "usage: $0 node|deno|bun [ROUNDS] [SECONDS]" >&2; exit 2 ;;
esac
server_cpu=() load_cpu=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then server_cpu=(taskset -c 0) load_cpu=(taskset -c 1); fi
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
