//! Signing keys in cosign's files: `cosign.key` (a PKCS#8 ECDSA P-256 key, encrypted with
//! scrypt and NaCl secretbox in go-securesystemslib's JSON, PEM type
//! `ENCRYPTED SIGSTORE PRIVATE KEY`) and `cosign.pub` (PKIX `PUBLIC KEY` PEM). Keys made by
//! `cosign generate-key-pair` load here unchanged and cosign loads ours; plain PKCS#8
//! (`PRIVATE KEY`) and SEC1 (`EC PRIVATE KEY`) files load too.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use crypto_secretbox::XSalsa20Poly1305;
use crypto_secretbox::aead::{Aead as _, KeyInit as _};
use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::der::pem;
use p256::pkcs8::der::pem::LineEnding;
use p256::pkcs8::{
    DecodePrivateKey as _, DecodePublicKey as _, EncodePrivateKey as _, EncodePublicKey as _,
};
use rand_core::{OsRng, RngCore as _};
use serde::{Deserialize, Serialize};

use super::SignError;

/// The PEM type cosign writes for its encrypted private keys.
pub const SIGSTORE_PRIVATE_KEY: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// The older PEM type, still loaded.
pub const COSIGN_PRIVATE_KEY: &str = "ENCRYPTED COSIGN PRIVATE KEY";

/// scrypt's cost in the keys we write: go-securesystemslib's `Legacy` strength (N=2^15, r=8,
/// p=1), which every cosign release opens.
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
/// The only costs a key file may name, as go-securesystemslib's `CheckParams` allows them
/// (its `Legacy`, `Standard` and `OWASP` strengths: N=2^15, 2^16, 2^17 with r=8, p=1):
/// anything else is no cosign key, and a hostile file must not make us spend minutes or
/// gigabytes deriving one.
const ALLOWED_LOG_N: [u32; 3] = [15, 16, 17];
/// Key files are a few hundred bytes; anything past this is not one.
pub const MAX_KEY_FILE: u64 = 64 * 1024;

/// go-securesystemslib's encrypted JSON (its `[]byte` fields are standard base64).
#[derive(Serialize, Deserialize)]
struct Encrypted {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: KdfParams,
    salt: String,
}

#[derive(Serialize, Deserialize)]
struct KdfParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

/// A private key ready to sign.
pub struct PrivateKey {
    key: SigningKey,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateKey(..)")
    }
}

/// A public key to verify with.
#[derive(Debug, Clone)]
pub struct PublicKey {
    key: VerifyingKey,
}

/// A new key pair as file contents: the encrypted private key and the public key.
pub struct KeyPairFiles {
    pub private_pem: String,
    pub public_pem: String,
}

fn bad(what: &str, detail: impl std::fmt::Display) -> SignError {
    SignError::Key {
        what: what.to_string(),
        detail: detail.to_string(),
    }
}

fn scrypt_key(
    password: &[u8],
    salt: &[u8],
    log_n: u8,
    r: u32,
    p: u32,
) -> Result<[u8; 32], SignError> {
    let params = scrypt::Params::new(log_n, r, p, 32).map_err(|e| bad("scrypt parameters", e))?;
    let mut out = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut out).map_err(|e| bad("scrypt", e))?;
    Ok(out)
}

impl PrivateKey {
    /// A fresh P-256 key from the operating system's random numbers.
    pub fn generate() -> Self {
        PrivateKey {
            key: SigningKey::random(&mut OsRng),
        }
    }

    pub fn public(&self) -> PublicKey {
        PublicKey {
            key: *self.key.verifying_key(),
        }
    }

    /// ECDSA P-256 over SHA-256 of `message`, ASN.1 DER (what cosign stores, base64'd).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        let sig: Signature = self.key.sign(message);
        sig.to_der().as_bytes().to_vec()
    }

    /// cosign's `cosign.key`: PKCS#8, encrypted under `password`, in PEM.
    pub fn to_encrypted_pem(&self, password: &[u8]) -> Result<String, SignError> {
        let der = self.key.to_pkcs8_der().map_err(|e| bad("private key", e))?;
        let mut salt = [0u8; 32];
        let mut nonce = [0u8; 24];
        OsRng.fill_bytes(&mut salt);
        OsRng.fill_bytes(&mut nonce);
        let key = scrypt_key(password, &salt, SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P)?;
        let sealed = XSalsa20Poly1305::new(&key.into())
            .encrypt(&nonce.into(), der.as_bytes())
            .map_err(|e| bad("secretbox", e))?;
        let doc = Encrypted {
            kdf: Kdf {
                name: "scrypt".into(),
                params: KdfParams {
                    n: 1 << SCRYPT_LOG_N,
                    r: SCRYPT_R,
                    p: SCRYPT_P,
                },
                salt: STANDARD.encode(salt),
            },
            cipher: Cipher {
                name: "nacl/secretbox".into(),
                nonce: STANDARD.encode(nonce),
            },
            ciphertext: STANDARD.encode(sealed),
        };
        let json = serde_json::to_vec(&doc).map_err(|e| bad("private key", e))?;
        pem::encode_string(SIGSTORE_PRIVATE_KEY, LineEnding::LF, &json)
            .map_err(|e| bad("private key PEM", e))
    }

    /// Loads a private key file's text. `password` is asked for only when the key is
    /// encrypted; `file` names it in errors.
    pub fn from_pem(
        text: &[u8],
        file: &str,
        password: impl FnOnce() -> Result<Vec<u8>, SignError>,
    ) -> Result<Self, SignError> {
        let (label, body) =
            pem::decode_vec(text).map_err(|e| bad(file, format!("not a PEM key file: {e}")))?;
        let key = match label {
            SIGSTORE_PRIVATE_KEY | COSIGN_PRIVATE_KEY => {
                let der = decrypt(&body, &password()?, file)?;
                SigningKey::from_pkcs8_der(&der)
                    .map_err(|e| bad(file, format!("not an ECDSA P-256 PKCS#8 key: {e}")))?
            }
            "PRIVATE KEY" => SigningKey::from_pkcs8_der(&body)
                .map_err(|e| bad(file, format!("not an ECDSA P-256 PKCS#8 key: {e}")))?,
            "EC PRIVATE KEY" => p256::SecretKey::from_sec1_der(&body)
                .map(SigningKey::from)
                .map_err(|e| bad(file, format!("not an ECDSA P-256 SEC1 key: {e}")))?,
            other => {
                return Err(bad(
                    file,
                    format!(
                        "unsupported PEM type {other:?} (expected {SIGSTORE_PRIVATE_KEY:?}, \"PRIVATE KEY\" or \"EC PRIVATE KEY\")"
                    ),
                ));
            }
        };
        Ok(PrivateKey { key })
    }
}

/// Opens go-securesystemslib's encrypted JSON with `password`.
fn decrypt(body: &[u8], password: &[u8], file: &str) -> Result<Vec<u8>, SignError> {
    let doc: Encrypted = serde_json::from_slice(body)
        .map_err(|e| bad(file, format!("not an encrypted key (JSON): {e}")))?;
    if doc.kdf.name != "scrypt" {
        return Err(bad(
            file,
            format!("kdf.name: unsupported {:?}", doc.kdf.name),
        ));
    }
    if doc.cipher.name != "nacl/secretbox" {
        return Err(bad(
            file,
            format!("cipher.name: unsupported {:?}", doc.cipher.name),
        ));
    }
    let KdfParams { n, r, p } = doc.kdf.params;
    if !n.is_power_of_two() || !ALLOWED_LOG_N.contains(&n.trailing_zeros()) || r != 8 || p != 1 {
        return Err(bad(
            file,
            format!(
                "kdf.params: N={n} r={r} p={p} out of range (cosign keys use N=32768, 65536 or 131072 with r=8 p=1)"
            ),
        ));
    }
    let field = |name: &str, v: &str| {
        STANDARD
            .decode(v)
            .map_err(|e| bad(file, format!("{name}: not base64: {e}")))
    };
    let salt = field("kdf.salt", &doc.kdf.salt)?;
    let nonce: [u8; 24] = field("cipher.nonce", &doc.cipher.nonce)?
        .try_into()
        .map_err(|_| bad(file, "cipher.nonce: not 24 bytes"))?;
    let sealed = field("ciphertext", &doc.ciphertext)?;
    let key = scrypt_key(password, &salt, n.trailing_zeros() as u8, r, p)?;
    XSalsa20Poly1305::new(&key.into())
        .decrypt(&nonce.into(), sealed.as_slice())
        .map_err(|_| bad(file, "wrong password (the key does not decrypt)"))
}

impl PublicKey {
    /// Loads a `PUBLIC KEY` PEM (PKIX), as `cosign.pub`.
    pub fn from_pem(text: &[u8], file: &str) -> Result<Self, SignError> {
        let text =
            std::str::from_utf8(text).map_err(|_| bad(file, "not a PEM public key (not UTF-8)"))?;
        let key = VerifyingKey::from_public_key_pem(text.trim_start())
            .map_err(|e| bad(file, format!("not an ECDSA P-256 public key PEM: {e}")))?;
        Ok(PublicKey { key })
    }

    /// `PUBLIC KEY` PEM, as cosign writes it.
    pub fn to_pem(&self) -> Result<String, SignError> {
        self.key
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| bad("public key", e))
    }

    /// Whether `signature` (ASN.1 DER, or the raw 64-byte r||s some tools write) is this
    /// key's ECDSA P-256 SHA-256 signature of `message`.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        let sig = Signature::from_der(signature).or_else(|_| Signature::from_slice(signature));
        sig.is_ok_and(|s| self.key.verify(message, &s).is_ok())
    }
}

/// A new key pair's two files, the private key encrypted under `password`.
pub fn generate_key_pair(password: &[u8]) -> Result<KeyPairFiles, SignError> {
    let key = PrivateKey::generate();
    Ok(KeyPairFiles {
        private_pem: key.to_encrypted_pem(password)?,
        public_pem: key.public().to_pem()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encrypted_key_round_trips_and_refuses_wrong_password() {
        let key = PrivateKey::generate();
        let pem = key.to_encrypted_pem(b"pw").unwrap();
        assert!(pem.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
        let loaded = PrivateKey::from_pem(pem.as_bytes(), "k", || Ok(b"pw".to_vec())).unwrap();
        let sig = loaded.sign(b"msg");
        assert!(key.public().verify(b"msg", &sig));
        assert!(!key.public().verify(b"other", &sig));
        let err = PrivateKey::from_pem(pem.as_bytes(), "k", || Ok(b"no".to_vec())).unwrap_err();
        assert!(err.to_string().contains("wrong password"), "{err}");
    }

    #[test]
    fn hostile_kdf_costs_are_refused() {
        // Costs go-securesystemslib's CheckParams refuses: 2^30, and 2^20 or 16x the work
        // (r=32, p=16) that a looser bound let through.
        for (n, r, p) in [
            (1u64 << 30, 8, 1),
            (1 << 20, 8, 1),
            (1 << 15, 32, 1),
            (1 << 15, 8, 16),
            (1 << 14, 8, 1),
            (3 << 15, 8, 1),
        ] {
            let json = format!(
                r#"{{"kdf":{{"name":"scrypt","params":{{"N":{n},"r":{r},"p":{p}}},"salt":"AA=="}},"cipher":{{"name":"nacl/secretbox","nonce":"AA=="}},"ciphertext":"AA=="}}"#
            );
            let pem =
                pem::encode_string(SIGSTORE_PRIVATE_KEY, LineEnding::LF, json.as_bytes()).unwrap();
            let err = PrivateKey::from_pem(pem.as_bytes(), "k", || Ok(vec![])).unwrap_err();
            assert!(
                err.to_string().contains("out of range"),
                "N={n} r={r} p={p}: {err}"
            );
        }
    }

    #[test]
    fn public_key_pem_round_trips() {
        let key = PrivateKey::generate();
        let pem = key.public().to_pem().unwrap();
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        let back = PublicKey::from_pem(pem.as_bytes(), "p").unwrap();
        assert!(back.verify(b"m", &key.sign(b"m")));
    }
}
