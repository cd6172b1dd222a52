#!/usr/bin/env bash
# Runs every test of the workspace on a fresh Debian machine.
#
# Installs what the tests need when it is missing (Debian packages: the distribution registry,
# skopeo as an independent OCI client, htpasswd for bcrypt entries, openssl for test CAs,
# rsvg-convert to check that upgrade-graph pictures render, curl as an independent HTTPS client,
# headless chromium to open the catalog browser's pages, GNU time for the memory bounds of image
# moves, containerd to pull through generated mirror configuration, python3's cryptography and
# PyNaCl as an independent verifier of image signatures and key files, mold as a linker without
# the hot-text script's INSERT BEFORE, binutils' objcopy to put a cargo-auditable section into
# a test binary, python3-venv for spdx-tools (an independent SPDX validator, pip-installed into
# target/spdx-venv); and Debian's static busybox for arm64 and s390x, unpacked under
# target/foreign-elf, real foreign binaries for the multi-platform image tests), then:
# formatting, clippy, the generated-artifact checks (bundle/, catalog/, deploy/ are up to date),
# and `cargo test` for the whole workspace. Cluster tests run only when E2E_KUBECONFIG is set.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v docker-registry >/dev/null 2>&1 || need+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
command -v htpasswd >/dev/null 2>&1 || need+=(apache2-utils)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v rsvg-convert >/dev/null 2>&1 || need+=(librsvg2-bin)
command -v curl >/dev/null 2>&1 || need+=(curl)
# A real browser for the catalog browser's pages (tests/catalog_browser.rs).
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v /usr/bin/time >/dev/null 2>&1 || need+=(time)
# A real container runtime reading the mirror's generated hosts.toml (ctr comes with it).
command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 || need+=(containerd)
# A linker that refuses bundler/link/hot-text.ld (tests/hot_text.rs builds with it).
command -v mold >/dev/null 2>&1 || command -v ld.gold >/dev/null 2>&1 || need+=(mold)
command -v objcopy >/dev/null 2>&1 || need+=(binutils)
command -v pyspdxtools >/dev/null 2>&1 || [ -x target/spdx-venv/bin/pyspdxtools ] ||
  python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# The independent checks of image signatures and cosign key files: python3's cryptography
# (ECDSA, PKCS#8) and PyNaCl (the secretbox of an encrypted key).
/usr/bin/python3 -c 'import cryptography' >/dev/null 2>&1 || need+=(python3-cryptography)
/usr/bin/python3 -c 'import nacl.secret' >/dev/null 2>&1 || need+=(python3-nacl)
# registries.yaml (k3s) read by a YAML library of its own.
/usr/bin/python3 -c 'import yaml' >/dev/null 2>&1 || need+=(python3-yaml)
foreign=()
for arch in arm64 s390x; do
  [ -x "target/foreign-elf/$arch/bin/busybox" ] || foreign+=("$arch")
done
if [ ${#need[@]} -gt 0 ] || [ ${#foreign[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  for arch in "${foreign[@]}"; do
    $sudo dpkg --add-architecture "$arch"
  done
  # One index failing (a mirror mid-sync) need not stop what the others can install.
  $sudo apt-get update -qq || echo "==> apt-get update reported errors; going on with the indexes it has"
  if [ ${#need[@]} -gt 0 ]; then
    echo "==> installing test tools: ${need[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  if [ ${#foreign[@]} -gt 0 ]; then
    echo "==> fetching foreign-architecture busybox: ${foreign[*]}"
    debs=$(mktemp -d)
    chmod 777 "$debs"
    for arch in "${foreign[@]}"; do
      if (cd "$debs" && apt-get download -qq "busybox-static:$arch" 2>/dev/null); then
        mkdir -p "target/foreign-elf/$arch"
        dpkg-deb -x "$debs"/busybox-static_*_"$arch".deb "target/foreign-elf/$arch"
      else
        echo "==> busybox-static:$arch could not be downloaded; the multi-platform tests will say so"
      fi
    done
    rm -rf "$debs"
  fi
fi

if ! command -v pyspdxtools >/dev/null 2>&1 && [ ! -x target/spdx-venv/bin/pyspdxtools ]; then
  echo "==> installing spdx-tools (SPDX validator) into target/spdx-venv"
  python3 -m venv target/spdx-venv
  target/spdx-venv/bin/pip install -q spdx-tools
fi

echo "==> cargo fmt --check"
cargo fmt --all -- --check

echo "==> cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "==> generated files are up to date"
if [ -x scripts/check-generated.sh ]; then
  scripts/check-generated.sh
fi

echo "==> cargo test"
cargo test --workspace --no-fail-fast 2>&1 | tee target/test-output.log
