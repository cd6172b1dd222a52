#!/usr/bin/env bash
# The main job: release the reverse-words operator with `olm release` on embedded defaults.
# Builds the release binaries, then generates and validates bundle/, builds the operator,
# bundle and catalog images into OCI layouts under target/olm-release/, re-renders catalog/,
# regenerates deploy/, and prints digests, sizes and a one-line summary per channel (the upgrade
# graph picture goes to target/olm-release/graph.svg).
# Extra arguments go to `olm release` (e.g. `--registry localhost:5000` to push).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p reverse-words-operator -p olm-bundler
exec target/release/olm release "$@"
