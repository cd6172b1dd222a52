#!/usr/bin/env bash
# Fails when a generated directory (bundle/, catalog/, deploy/) is not what its generator
# produces from the current sources, and validates what is committed. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q -p reverse-words-operator -p olm-bundler
op=target/debug/reverse-words-operator
olm=target/debug/olm

echo "--> bundle/ is generated from the operator's manifests"
"$op" manifests --watch-namespace reverse-words-operator-system \
  | "$olm" bundle generate --config operator/olm/bundle.yaml --manifests - --check
"$olm" bundle validate bundle/ --select-optional all --strict

if [ -f catalog/check.sh ]; then
  echo "--> catalog/"
  catalog/check.sh "$olm"
fi
if [ -f deploy/check.sh ]; then
  echo "--> deploy/"
  deploy/check.sh "$op" "$olm"
fi
