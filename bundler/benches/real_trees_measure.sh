#!/usr/bin/env bash
# Whole-process figures for BENCHMARKS.md on the trees real_trees.sh builds:
# wall, CPU (user+sys) and peak RSS of validate, render and the serve index build
# (`--cache-only`), best of RUNS runs, and the time to SERVING from files.
#
#   bundler/benches/real_trees.sh /tmp/trees
#   OLM=target/release/olm bundler/benches/real_trees_measure.sh /tmp/trees [tree...]
#
# Build the binary first: `cargo build --profile bench -p olm-bundler --bin olm`.
set -euo pipefail
root=${1:?usage: real_trees_measure.sh TREES_DIR [tree...]}
shift
olm=$(realpath "${OLM:-target/release/olm}")
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-3}
trees=("$@")
[ ${#trees[@]} -gt 0 ] || trees=(certified-1x certified-2x certified-5x certified-10x community-1x community-2x community-5x community-10x)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# best wall of $runs, with the CPU and peak RSS of that run
best() {
  local best_line="" best_wall=999999
  for _ in $(seq "$runs"); do
    rm -rf "$scratch/cache"
    /usr/bin/time -f "%e %U %S %M" -o "$scratch/t" "$@" >/dev/null 2>"$scratch/err" || {
      cat "$scratch/err" >&2
      return 1
    }
    read -r wall user sys rss <"$scratch/t"
    if awk "BEGIN{exit !($wall < $best_wall)}"; then
      best_wall=$wall
      best_line=$(awk -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
        'BEGIN{printf "%.2f s / %.2f s / %.0f MB", w, u+s, r/1024}')
    fi
  done
  echo "$best_line"
}

printf '| tree | MB | validate (wall / CPU / RSS) | render -o json | serve index build (--cache-only) | to SERVING from files |\n'
printf '|---|---:|---|---|---|---|\n'
for t in "${trees[@]}"; do
  dir="$root/$t"
  mb=$(du -sb "$dir" | awk '{printf "%.0f", $1/1e6}')
  v=$(best "$olm" catalog validate "$dir")
  r=$(best "$olm" catalog render -o json "$dir")
  c=$(best "$olm" catalog serve "$dir" --cache-dir "$scratch/cache" --cache-only)
  s=$(OLM="$olm" "$here/serve_startup.sh" "$dir" 2>/dev/null | sed -E "s/.*: ([0-9]+) ms to SERVING, RSS ([0-9]+) kB/\1 ms, RSS \2 kB/")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$t" "$mb" "$v" "$r" "$c" "$s"
done
