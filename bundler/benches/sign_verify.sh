#!/bin/bash
# What signing and verifying cost on a loopback registry (BENCHMARKS.md, signatures): Debian's
# docker-registry on 127.0.0.1, ten small images pushed, then wall times of whole `olm`
# processes, best of 5. Usage, from the repository root after
# `cargo build --profile bench -p olm-bundler --bin olm`:
#   bundler/benches/sign_verify.sh
set -euo pipefail
olm=$(realpath "${OLM:-target/release/olm}")
work=$(mktemp -d)
reg_pid=""
trap '[ -n "$reg_pid" ] && kill "$reg_pid"; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/config.yml" <<CFG
version: 0.1
storage: {filesystem: {rootdirectory: $work/data}}
http: {addr: 127.0.0.1:$port}
CFG
docker-registry serve "$work/config.yml" > "$work/registry.log" 2>&1 &
reg_pid=$!
until python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null; do sleep 0.05; done
reg=127.0.0.1:$port
export COSIGN_PASSWORD=bench HOME=$work
cd "$work"
"$olm" image generate-key-pair >/dev/null 2>&1
# The same key unencrypted (PKCS#8): the process without scrypt's key derivation.
/usr/bin/python3 - <<'PY'
import base64, json, hashlib, re
import nacl.secret
text = open("cosign.key").read()
body = base64.b64decode("".join(l for l in text.splitlines() if not l.startswith("-----")))
doc = json.loads(body)
p = doc["kdf"]["params"]
k = hashlib.scrypt(b"bench", salt=base64.b64decode(doc["kdf"]["salt"]), n=p["N"], r=p["r"], p=p["p"], maxmem=1 << 28, dklen=32)
der = nacl.secret.SecretBox(k).decrypt(base64.b64decode(doc["ciphertext"]), base64.b64decode(doc["cipher"]["nonce"]))
b64 = base64.b64encode(der).decode()
open("plain.key", "w").write("-----BEGIN PRIVATE KEY-----\n" + "\n".join(b64[i:i+64] for i in range(0, len(b64), 64)) + "\n-----END PRIVATE KEY-----\n")
PY
images=()
for i in $(seq 1 10); do
  "$olm" image build --no-ca-certs --binary /bin/true --label n="$i" -t "$reg/bench/app$i:v1" --push >/dev/null 2>&1
  images+=("$reg/bench/app$i:v1")
done
best() { # best wall time in ms of 5 runs of "$@"
  local b=999999
  for _ in 1 2 3 4 5; do
    local s e
    s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
    local ms=$(( (e - s) / 1000000 )); [ "$ms" -lt "$b" ] && b=$ms
  done
  echo "$b"
}
# Each run signs a new payload (a unique annotation), so every run writes a signature.
sign_one() { "$olm" image sign "${images[0]}" --key "$1" -a run="$(date +%s%N)"; }
sign_ten() { "$olm" image sign "${images[@]}" --key "$1" -a run="$(date +%s%N)"; }
echo "sign 1 image, encrypted cosign.key (scrypt included): $(best sign_one cosign.key) ms"
echo "sign 1 image, unencrypted key:                        $(best sign_one plain.key) ms"
echo "sign 10 images in one run, unencrypted key:           $(best sign_ten plain.key) ms"
echo "verify 1 image:                                       $(best "$olm" image verify "${images[0]}" --key cosign.pub) ms"
echo "verify 10 images in one run:                          $(best "$olm" image verify "${images[@]}" --key cosign.pub) ms"
echo "inspect 1 image (baseline: process + one registry round trip): $(best "$olm" image inspect "${images[0]}") ms"
echo "signatures on image 1 now: $("$olm" image verify "${images[0]}" --key cosign.pub -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[0]["signatures"]))')"
