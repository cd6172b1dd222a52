#!/usr/bin/env bash
# Fails when a generated directory (bundle/, catalog/, deploy/) is not what its generator
# produces from the current sources, and validates what is committed. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q -p reverse-words-operator -p olm-bundler
# Cargo's target directory: ./target unless CARGO_TARGET_DIR points elsewhere (a shared one).
target_dir=${CARGO_TARGET_DIR:-target}
op=$target_dir/debug/reverse-words-operator
olm=$target_dir/debug/olm

echo "--> bundle/ is generated from the operator's manifests, and passes every validator"
# The CSV runs the operator image by digest; `olm release` records that pin (an input, like
# operator-sdk's image in config/manager/kustomization.yaml), so no binary is rebuilt here.
pin=operator/olm/operator-image.yaml
image=$(sed -n 's/^image: //p' "$pin")
pinned_version=$(sed -n 's/^version: //p' "$pin")
version=$(sed -n 's/^version: //p' operator/olm/bundle.yaml)
if [ -z "$image" ] || [ "$pinned_version" != "$version" ]; then
  echo "$pin pins version '${pinned_version}', operator/olm/bundle.yaml says '${version}': run scripts/release.sh" >&2
  exit 1
fi
"$op" manifests --watch-namespace reverse-words-operator-system --image "$image" \
  | "$olm" bundle generate --config operator/olm/bundle.yaml --manifests - --check
"$olm" bundle validate bundle/ --select-optional all --strict

echo "--> catalog/ is rendered from its template, and valid"
"$olm" catalog template semver catalog/reverse-words-operator/template.yaml -o yaml --migrate-level none --skip-range-from-csv \
  --reuse catalog/reverse-words-operator/catalog.yaml | diff -u catalog/reverse-words-operator/catalog.yaml -
"$olm" catalog validate catalog/
"$olm" catalog graph catalog/ >/dev/null
"$olm" catalog graph catalog/ --format svg | diff -q docs/upgrade-graph.svg - >/dev/null || {
  echo "docs/upgrade-graph.svg is not what olm catalog graph catalog/ --format svg draws: regenerate it" >&2
  exit 1
}

echo "--> deploy/ is generated (catalog and operator images as pinned by the last olm release;"
echo "    deploy/olmv1's installer RBAC from bundle/)"
img=$(grep -o 'quay.io/reverse-words/reverse-words-operator-catalog@sha256:[0-9a-f]*' deploy/olm/catalogsource.yaml)
ch=$(sed -n 's/^  channel: //p' deploy/olm/subscription.yaml)
"$op" manifests --include-namespace --image "$image" \
  | "$olm" deploy generate --catalog-image "$img" \
      --package reverse-words-operator --channel "$ch" --namespace reverse-words-operator \
      --display-name "Reverse Words Operator" --publisher reverse-words --bundle bundle/ --manifests - --output deploy --check
echo "generated files are up to date"
