#!/usr/bin/env bash
# The main job: release the reverse-words operator with `olm release` on embedded defaults.
# Builds the release binaries, then generates and validates bundle/, builds the operator,
# bundle and catalog images into OCI layouts under target/olm-release/, re-renders catalog/,
# regenerates deploy/, and prints digests, sizes and a one-line summary per channel (the upgrade
# graph picture goes to target/olm-release/graph.svg).
# Extra arguments go to `olm release` (e.g. `--registry localhost:5000` to push).
# The binaries are built with cargo-auditable (installed here when missing), which embeds
# their crate list in a `.dep-v0` section, so the operator image's SBOM
# (target/olm-release/operator.spdx.json) lists the crates compiled into it. Without it (no
# network to install it) they are built plainly and the SBOM lists files and Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo auditable --version >/dev/null 2>&1; then
  echo "==> installing cargo-auditable (the crate list in the release binaries)" >&2
  cargo install cargo-auditable --locked -q ||
    echo "==> cargo-auditable could not be installed; building without the crate list" >&2
fi
if cargo auditable --version >/dev/null 2>&1; then
  cargo auditable build --release -q -p reverse-words-operator -p olm-bundler
else
  cargo build --release -q -p reverse-words-operator -p olm-bundler
fi
exec target/release/olm release "$@"
