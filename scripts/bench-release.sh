#!/usr/bin/env bash
# The `## release` rows of BENCHMARKS.md: wall time, CPU time and peak RSS of `olm release`
# (release builds of olm and the operator), measured with /usr/bin/time -v:
#   layouts cold   embedded defaults, fresh target/olm-release (every image layout written)
#   layouts warm   the same again (nothing changes; files: 0 written)
#   registry cold  the project's inputs in a scratch copy, pushed to an empty local
#                  docker-registry (every blob uploaded, bundle/catalog/deploy written)
#   registry warm  the same again (every blob and manifest already there: skipped)
# The registry rows use a scratch copy because a release pushed to another registry refers
# to the images there, i.e. is a different release history than catalog/ (docs/release.md).
# Usage: scripts/bench-release.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ "${1:-}" != "--no-build" ]; then
  cargo build --release -q -p reverse-words-operator -p olm-bundler
fi
olm=$root/target/release/olm
for tool in /usr/bin/time docker-registry; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed" >&2; exit 0; }
done

scratch=$(mktemp -d /tmp/olm-bench-release.XXXXXX)
registry_pid=""
cleanup() {
  [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# Runs one measured release; prints a table row from /usr/bin/time -v's report.
measure() {
  local name=$1; shift
  local report=$scratch/time-$name.txt
  if ! /usr/bin/time -v -o "$report" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err"; then
    echo "$name failed:" >&2; cat "$scratch/$name.err" >&2; exit 1
  fi
  awk -v name="$name" -v files="$(grep -o 'files: [0-9]* written' "$scratch/$name.err")" '
    /Elapsed \(wall clock\)/ { n = split($NF, t, ":"); wall = (n == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
    /User time/ { user = $NF }
    /System time/ { sys = $NF }
    /Maximum resident set size/ { rss = $NF }
    END { printf "| %-13s | %6.2f s | %6.2f s | %6.2f s | %6.1f MiB | %s |\n", name, wall, user, sys, rss / 1024, files }
  ' "$report"
}

echo "| run           |   wall   |   user   |  system  |  peak RSS  | outputs |"
echo "|---|---|---|---|---|---|"

# Embedded defaults, into OCI layouts.
rm -rf target/olm-release
measure "layouts cold" "$olm" release --graph none
measure "layouts warm" "$olm" release --graph none

# A scratch copy of the release inputs, with an empty catalog, pushed to a fresh registry.
mkdir -p "$scratch/repo/operator" "$scratch/registry"
cp -r operator/olm "$scratch/repo/operator/olm"
rm -f "$scratch/repo/operator/olm/operator-image.yaml"
sed -e "s|target/release/reverse-words-operator|$root/target/release/reverse-words-operator|g" \
  release.yaml >"$scratch/repo/release.yaml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$scratch/registry/config.yml" <<EOF
version: 0.1
log: {level: error}
storage: {filesystem: {rootdirectory: $scratch/registry/data}}
http: {addr: 127.0.0.1:$port, secret: bench}
EOF
docker-registry serve "$scratch/registry/config.yml" >"$scratch/registry/log" 2>&1 &
registry_pid=$!
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  sleep 0.1
done
measure "registry cold" "$olm" release --config "$scratch/repo/release.yaml" --registry "127.0.0.1:$port" --graph none
measure "registry warm" "$olm" release --config "$scratch/repo/release.yaml" --registry "127.0.0.1:$port" --graph none
grep -h "pushed\|already present" "$scratch/registry warm.out" | sed 's/^ */  warm push: /'
