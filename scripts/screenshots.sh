#!/usr/bin/env bash
# Regenerates the catalog browser's screenshots in docs/img/ (shown in README.md) with headless
# Chromium: the grid of a real multi-package catalog (../shared/data's community catalog, or
# $OLM_SHARED_DATA's: required, so the pictures never depend on what happens to be there) and
# the package page of catalog/'s operator, both written by `olm catalog site`. Run after
# changing the browser's pages; commit the pictures.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v chromium >/dev/null 2>&1 || { echo "needs chromium (apt-get install chromium)" >&2; exit 1; }
cargo build -q -p olm-bundler --bin olm
olm=${CARGO_TARGET_DIR:-target}/debug/olm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shared=${OLM_SHARED_DATA:-../shared/data}/catalogs/community-operators-prod/catalogs/v4.20
[ -d "$shared" ] || { echo "needs the shared data's community catalog at $shared (set OLM_SHARED_DATA)" >&2; exit 1; }
"$olm" catalog site "$shared" -o "$work/grid" --catalog-name community-operators >/dev/null
"$olm" catalog site catalog -o "$work/project" --catalog-name reverse-words >/dev/null

shot() { # URL OUT WIDTHxHEIGHT
  local profile
  profile=$(mktemp -d -p "$work")
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" --window-size="$3" \
    --screenshot="$2" "$1" 2>/dev/null >/dev/null
}
shot "file://$work/grid/index.html" docs/img/catalog-browser-grid.png 1280,860
shot "file://$work/project/packages/reverse-words-operator.html" docs/img/catalog-browser-package.png 1280,2000
echo "wrote docs/img/catalog-browser-grid.png docs/img/catalog-browser-package.png"
