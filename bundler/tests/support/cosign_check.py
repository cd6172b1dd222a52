"""An independent check of olm's image signatures and key files, written from cosign's
documented formats with python3's cryptography and PyNaCl (no code shared with olm).

  make-key DIR PASSWORD LABEL [N]   write DIR/key.pem and DIR/key.pub the way cosign does
                                    (LABEL: "ENCRYPTED SIGSTORE PRIVATE KEY",
                                    "ENCRYPTED COSIGN PRIVATE KEY", "PRIVATE KEY",
                                    "EC PRIVATE KEY"; N: scrypt's cost for an encrypted
                                    key, 32768 unless given: 65536 and 131072 are
                                    securesystemslib's other strengths)
  open-key KEY PASSWORD PUB         decrypt a cosign.key and check it is PUB's private key
  verify SOURCE DIGEST PUB IDENTITY check every signature under sha256-<hex>.sig
  verify-att SOURCE DIGEST PUB TYPE check the DSSE attestations under sha256-<hex>.att

SOURCE is http://HOST:PORT/REPO (a registry) or oci:DIR (an OCI layout).
"""

import base64
import hashlib
import json
import os
import sys
import urllib.request

import nacl.secret
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def pem(label, data):
    b64 = base64.b64encode(data).decode()
    lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, "\n".join(lines), label)


def unpem(text):
    lines = [l for l in text.strip().splitlines()]
    label = lines[0][len("-----BEGIN "):-len("-----")]
    return label, base64.b64decode("".join(lines[1:-1]))


def scrypt_key(password, salt, n, r, p):
    return hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=256 * 1024 * 1024, dklen=32)


def make_key(out, password, label, n="32768"):
    n = int(n)
    priv = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = priv.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())
    if label.startswith("ENCRYPTED"):
        salt, nonce = os.urandom(32), os.urandom(24)
        box = nacl.secret.SecretBox(scrypt_key(password.encode(), salt, n, 8, 1))
        sealed = box.encrypt(pkcs8, nonce).ciphertext
        doc = {"kdf": {"name": "scrypt", "params": {"N": n, "r": 8, "p": 1},
                       "salt": base64.b64encode(salt).decode()},
               "cipher": {"name": "nacl/secretbox", "nonce": base64.b64encode(nonce).decode()},
               "ciphertext": base64.b64encode(sealed).decode()}
        text = pem(label, json.dumps(doc, separators=(",", ":")).encode())
    elif label == "PRIVATE KEY":
        text = pem(label, pkcs8)
    else:
        text = priv.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption()).decode()
    with open(os.path.join(out, "key.pem"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "key.pub"), "wb") as f:
        f.write(priv.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo))


def open_key(key, password, pub):
    label, body = unpem(open(key).read())
    if label != "ENCRYPTED SIGSTORE PRIVATE KEY":
        fail("PEM type is %r" % label)
    doc = json.loads(body)
    if doc["kdf"]["name"] != "scrypt" or doc["cipher"]["name"] != "nacl/secretbox":
        fail("kdf/cipher names: %r" % doc)
    prm = doc["kdf"]["params"]
    k = scrypt_key(password.encode(), base64.b64decode(doc["kdf"]["salt"]), prm["N"], prm["r"], prm["p"])
    der = nacl.secret.SecretBox(k).decrypt(base64.b64decode(doc["ciphertext"]),
                                           base64.b64decode(doc["cipher"]["nonce"]))
    priv = serialization.load_der_private_key(der, password=None)
    want = serialization.load_pem_public_key(open(pub, "rb").read())
    if priv.public_key().public_numbers() != want.public_numbers():
        fail("the private key is not the public key's")
    print("ok: %s opens with the password and matches %s" % (key, pub))


class Source:
    def __init__(self, spec):
        self.spec = spec

    def manifest(self, tag):
        if self.spec.startswith("oci:"):
            d = self.spec[4:]
            index = json.load(open(os.path.join(d, "index.json")))
            for m in index["manifests"]:
                if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag:
                    return self.blob(m["digest"])
            fail("no %s in %s" % (tag, d))
        req = urllib.request.Request(self.url("manifests", tag), headers={"Accept": OCI_MANIFEST})
        return urllib.request.urlopen(req).read()

    def url(self, kind, ref):
        scheme, rest = self.spec.split("://", 1)
        host, repo = rest.split("/", 1)
        return "%s://%s/v2/%s/%s/%s" % (scheme, host, repo, kind, ref)

    def blob(self, digest):
        if self.spec.startswith("oci:"):
            data = open(os.path.join(self.spec[4:], "blobs", "sha256", digest[7:]), "rb").read()
        else:
            data = urllib.request.urlopen(self.url("blobs", digest)).read()
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            fail("blob %s does not match its digest" % digest)
        return data


def load_pub(path):
    return serialization.load_pem_public_key(open(path, "rb").read())


def ecdsa_ok(pub, sig, msg):
    try:
        pub.verify(sig, msg, ec.ECDSA(hashes.SHA256()))
        return True
    except Exception:
        return False


def verify(spec, digest, pub_path, identity):
    src, pub = Source(spec), load_pub(pub_path)
    tag = "sha256-%s.sig" % digest[7:]
    manifest = json.loads(src.manifest(tag))
    if manifest["mediaType"] != OCI_MANIFEST or manifest["config"]["mediaType"] != "application/vnd.oci.image.config.v1+json":
        fail("media types of %s: %r" % (tag, manifest))
    good = 0
    for layer in manifest["layers"]:
        if layer["mediaType"] != "application/vnd.dev.cosign.simplesigning.v1+json":
            fail("layer media type %r" % layer["mediaType"])
        payload = src.blob(layer["digest"])
        sig = base64.b64decode(layer["annotations"]["dev.cosignproject.cosign/signature"])
        if not ecdsa_ok(pub, sig, payload):
            continue
        doc = json.loads(payload)
        crit = doc["critical"]
        if crit["type"] != "cosign container image signature":
            fail("type %r" % crit["type"])
        if crit["image"]["docker-manifest-digest"] != digest:
            fail("signed digest %r" % crit["image"]["docker-manifest-digest"])
        if crit["identity"]["docker-reference"] != identity:
            fail("identity %r" % crit["identity"]["docker-reference"])
        if set(doc) != {"critical", "optional"}:
            fail("payload keys %r" % sorted(doc))
        good += 1
    if not good:
        fail("no signature verifies")
    print("ok: %d signature(s) verify" % good)


def verify_att(spec, digest, pub_path, predicate_type):
    src, pub = Source(spec), load_pub(pub_path)
    tag = "sha256-%s.att" % digest[7:]
    manifest = json.loads(src.manifest(tag))
    good = 0
    for layer in manifest["layers"]:
        if layer["mediaType"] != "application/vnd.dsse.envelope.v1+json":
            fail("layer media type %r" % layer["mediaType"])
        if layer["annotations"].get("predicateType") != predicate_type:
            continue
        env = json.loads(src.blob(layer["digest"]))
        body = base64.b64decode(env["payload"])
        pt = env["payloadType"]
        pae = b"DSSEv1 %d %s %d %s" % (len(pt), pt.encode(), len(body), body)
        if not any(ecdsa_ok(pub, base64.b64decode(s["sig"]), pae) for s in env["signatures"]):
            continue
        st = json.loads(body)
        if st["_type"] != "https://in-toto.io/Statement/v0.1" or st["predicateType"] != predicate_type:
            fail("statement header %r" % {k: st[k] for k in ("_type", "predicateType")})
        if [s["digest"]["sha256"] for s in st["subject"]] != [digest[7:]]:
            fail("subject %r" % st["subject"])
        good += 1
    if not good:
        fail("no attestation verifies")
    print("ok: %d attestation(s) verify" % good)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"make-key": make_key, "open-key": open_key, "verify": verify, "verify-att": verify_att}[cmd](*args)
