#!/usr/bin/env bash
# Idle RSS of the release operator binary: starts it against a fake API server (empty cluster),
# waits until /readyz answers 200, lets it settle, then reads VmRSS and VmHWM from /proc.
# Usage: operator/benches/idle_rss.sh [path/to/reverse-words-operator]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-target/release/reverse-words-operator}
[ -x "$bin" ] || cargo build --release -p reverse-words-operator
tmp=$(mktemp -d)
trap 'kill $api $op 2>/dev/null || true; rm -rf "$tmp"' EXIT
python3 operator/benches/fake_apiserver.py "$tmp/port" & api=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
cat > "$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: fake, user: {token: fake}}]
contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]
current-context: fake
KC
hp=$((20000 + RANDOM % 20000)); mp=$((hp + 1))
KUBECONFIG="$tmp/kubeconfig" "$bin" run --leader-elect=false \
  --health-probe-bind-address 127.0.0.1:$hp --metrics-bind-address 127.0.0.1:$mp --log-format text \
  >"$tmp/log" 2>&1 & op=$!
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$hp/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fs "http://127.0.0.1:$hp/readyz" >/dev/null || { echo "operator did not become ready:"; cat "$tmp/log"; exit 1; }
sleep 5
size=$(stat -c %s "$bin")
rss=$(awk '/VmRSS/ {print $2}' /proc/$op/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$op/status)
echo "binary: $bin ($((size / 1024)) KiB)"
echo "idle RSS: ${rss} KiB (peak ${hwm} KiB), ready on an empty cluster"
