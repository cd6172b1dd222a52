#!/usr/bin/env bash
# Builds catalog trees shaped like the ones people ship, from the real packages in
# ../shared/data/catalogs, for the whole-process rows of BENCHMARKS.md.
#
#   bundler/benches/real_trees.sh OUT_DIR
#
# writes, each a directory of `<package>/catalog.yaml` files:
#   OUT_DIR/certified-1x   the v4.16 packages of both repositories (the `olm.bundle.object`
#                          form: long base64 blobs; 3 packages, 35 bundles, 7.9 MB) repeated to
#                          ~56 MB, the size of certified-operators v4.14
#   OUT_DIR/community-1x   community-operators-prod v4.20 packages (the `olm.csv.metadata`
#                          form, many small nodes) repeated to ~16 MB, the size of community v4.20
#   OUT_DIR/<set>-{2,5,10}x  the same at 2, 5 and 10 times the size, for the scaling curve
#                          (skip them with SCALES="1")
#
# A copy renames its package everywhere in the file (`foo` -> `foo-r3`), so package, channel
# and bundle names stay unique and every copy is a valid package of its own; the blobs are the
# real ones. The output is deterministic; re-running on an existing OUT_DIR rebuilds it.
set -euo pipefail
out=${1:?usage: real_trees.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
data=${OLM_SHARED_DATA:-$here/../../../shared/data}
scales=${SCALES:-"1 2 5 10"}

# set name, copies for 1x, source trees
sets=(
  "certified 7 $data/catalogs/certified-operators/catalogs/v4.16 $data/catalogs/community-operators-prod/catalogs/v4.16"
  "community 5 $data/catalogs/community-operators-prod/catalogs/v4.20"
)

for entry in "${sets[@]}"; do
  read -r name copies srcs <<<"$entry"
  for src in $srcs; do [ -d "$src" ] || { echo "missing $src" >&2; exit 1; }; done
  for scale in $scales; do
    dest="$out/$name-${scale}x"
    rm -rf "$dest"
    mkdir -p "$dest"
    n=$((copies * scale))
    for pkgdir in $(for src in $srcs; do echo "$src"/*/; done); do
      pkg=$(basename "$pkgdir")
      [ -f "$pkgdir/catalog.yaml" ] || continue
      for i in $(seq 1 "$n"); do
        mkdir -p "$dest/$pkg-r$i"
        # Word-bounded, so `foo` inside `foo-bar` of another package is left alone only when
        # it is a different word; the package's own name occurrences all get the suffix.
        sed -E "s/(^|[^A-Za-z0-9-])$pkg([^A-Za-z0-9-]|\$)/\\1$pkg-r$i\\2/g" \
          "$pkgdir/catalog.yaml" >"$dest/$pkg-r$i/catalog.yaml"
      done
    done
    printf '%s\t%s bytes\n' "$dest" "$(du -sb "$dest" | cut -f1)"
  done
done
