#!/bin/bash
# Time from spawning `olm catalog serve` to the first SERVING health answer, and the server's
# RSS then (BENCHMARKS.md, serve). Usage, from the repository root after
# `cargo build --release -p olm-bundler`:
#   bundler/benches/serve_startup.sh <catalog dir | catalog image> [extra serve args...]
# e.g. with `--cache-dir DIR` (built first with `--cache-dir DIR --cache-only`) for the cache case.
set -euo pipefail
olm=$(realpath "${OLM:-target/release/olm}")
catalog=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The multi-call probe: olm answers as grpc_health_probe under that name.
ln -s "$olm" "$work/grpc_health_probe"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$(date +%s%N)
"$olm" catalog serve "$catalog" --host 127.0.0.1 --port "$port" "$@" >"$work/serve.log" 2>&1 &
pid=$!
until "$work/grpc_health_probe" -addr "127.0.0.1:$port" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log"; exit 1; }
    sleep 0.01
done
end=$(date +%s%N)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "$catalog: $(((end - start) / 1000000)) ms to SERVING, RSS ${rss} kB"
kill "$pid"
wait "$pid" 2>/dev/null || true
