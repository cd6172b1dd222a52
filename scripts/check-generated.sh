#!/usr/bin/env bash
# Fails when a generated directory (bundle/, catalog/, deploy/) is not what its generator
# produces from the current sources, and validates what is committed. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q -p reverse-words-operator -p olm-bundler
op=target/debug/reverse-words-operator
olm=target/debug/olm

echo "--> bundle/ is generated from the operator's manifests, and passes every validator"
"$op" manifests --watch-namespace reverse-words-operator-system \
  | "$olm" bundle generate --config operator/olm/bundle.yaml --manifests - --check
"$olm" bundle validate bundle/ --select-optional all --strict

echo "--> catalog/ is rendered from its template, and valid"
"$olm" catalog template semver catalog/reverse-words-operator/template.yaml -o yaml \
  --reuse catalog/reverse-words-operator/catalog.yaml | diff -u catalog/reverse-words-operator/catalog.yaml -
"$olm" catalog validate catalog/
"$olm" catalog graph catalog/ >/dev/null

echo "--> deploy/ is generated (catalog image as pinned by the last olm release)"
img=$(grep -o 'quay.io/reverse-words/reverse-words-operator-catalog@sha256:[0-9a-f]*' deploy/olm/catalogsource.yaml)
ch=$(sed -n 's/^  channel: //p' deploy/olm/subscription.yaml)
"$op" manifests --include-namespace \
  | "$olm" deploy generate --catalog-image "$img" \
      --package reverse-words-operator --channel "$ch" --namespace reverse-words-operator \
      --display-name "Reverse Words Operator" --publisher reverse-words --manifests - --output deploy --check
echo "generated files are up to date"
