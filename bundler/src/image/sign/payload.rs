//! What is signed: the simple-signing payload cosign signs for an image, and the in-toto
//! statement in a DSSE envelope cosign stores for an attestation. Bytes as Go's
//! `encoding/json` writes them (keys of maps sorted, `<`, `>`, `&` escaped, no newline), so
//! a payload we write is the one cosign would write for the same input.
//!
//! Read back as Go's `encoding/json` reads them into cosign's structs
//! ([`crate::grammar::go_json_read`]): field names matched case-insensitively, unknown fields
//! skipped, invalid UTF-8 as U+FFFD; a document with two keys on one field is refused, since
//! cosign would take the last and another reader the first.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SignError;
use crate::grammar::go_json_read::{self as go, GoJsonError, GoValue};

/// A document Go would read otherwise, or not at all, as a payload error.
fn refused(what: &'static str) -> impl Fn(GoJsonError) -> SignError {
    move |e| SignError::Payload {
        detail: format!("not {what} as cosign reads it: {e}"),
    }
}

/// The `type` every cosign image signature carries.
pub const SIGNATURE_TYPE: &str = "cosign container image signature";
/// DSSE's payload type for in-toto statements.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The statement type cosign writes.
pub const STATEMENT_V01: &str = "https://in-toto.io/Statement/v0.1";
const STATEMENT_V1: &str = "https://in-toto.io/Statement/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimpleSigning {
    pub critical: Critical,
    /// cosign writes `null` when there are no annotations.
    pub optional: Option<BTreeMap<String, Value>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Critical {
    pub identity: Identity,
    pub image: ImageDigest,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    #[serde(rename = "docker-reference")]
    pub docker_reference: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageDigest {
    #[serde(rename = "docker-manifest-digest")]
    pub docker_manifest_digest: String,
}

/// JSON as Go's `encoding/json` writes it ([`crate::grammar::go_json::marshal`]): object keys
/// sorted (Go maps), numbers as Go writes a `float64` (`1.0` is `1`), HTML characters escaped.
pub fn go_json(value: &Value) -> Vec<u8> {
    crate::grammar::go_json::marshal(value).into_bytes()
}

impl SimpleSigning {
    /// The payload for `digest` of the repository `identity`, with `annotations` (none:
    /// `null`).
    pub fn new(identity: &str, digest: &str, annotations: &BTreeMap<String, String>) -> Self {
        SimpleSigning {
            critical: Critical {
                identity: Identity {
                    docker_reference: identity.to_string(),
                },
                image: ImageDigest {
                    docker_manifest_digest: digest.to_string(),
                },
                kind: SIGNATURE_TYPE.to_string(),
            },
            optional: (!annotations.is_empty()).then(|| {
                annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect()
            }),
        }
    }

    /// The exact bytes cosign signs.
    pub fn to_bytes(&self) -> Vec<u8> {
        go_json(&serde_json::to_value(self).unwrap_or_default())
    }

    /// Reads a payload as cosign's `payload.SimpleContainerImage` (sigstore/sigstore) is
    /// read by `json.Unmarshal`.
    pub fn parse(bytes: &[u8]) -> Result<Self, SignError> {
        let bad = refused("a simple-signing payload");
        let doc = go::parse(bytes).map_err(&bad)?;
        let read = || -> Result<SimpleSigning, GoJsonError> {
            let top = go::fields(Some(&doc), ["critical", "optional"], "")?;
            let critical = top.object("critical", ["identity", "image", "type"])?;
            let identity = critical.object("identity", ["docker-reference"])?;
            let image = critical.object("image", ["docker-manifest-digest"])?;
            Ok(SimpleSigning {
                critical: Critical {
                    identity: Identity {
                        docker_reference: identity.string("docker-reference")?,
                    },
                    image: ImageDigest {
                        docker_manifest_digest: image.string("docker-manifest-digest")?,
                    },
                    kind: critical.string("type")?,
                },
                optional: top.any_map("optional")?,
            })
        };
        let p = read().map_err(&bad)?;
        if p.critical.kind != SIGNATURE_TYPE {
            return Err(SignError::Payload {
                detail: format!(
                    "critical.type is {:?}, not {SIGNATURE_TYPE:?}",
                    p.critical.kind
                ),
            });
        }
        Ok(p)
    }
}

/// The predicate type `cosign attest --type` means for its short names; any other value is a
/// URI used as is.
pub fn predicate_type(kind: &str) -> String {
    match kind {
        "slsaprovenance" => "https://slsa.dev/provenance/v0.2",
        "slsaprovenance02" => "https://slsa.dev/provenance/v0.2",
        "slsaprovenance1" => "https://slsa.dev/provenance/v1",
        "link" => "https://in-toto.io/Link/v1",
        "spdx" => "https://spdx.dev/Document",
        "spdxjson" => "https://spdx.dev/Document",
        "cyclonedx" => "https://cyclonedx.org/bom",
        "vuln" => "https://cosign.sigstore.dev/attestation/vuln/v1",
        "openvex" => "https://openvex.dev/ns",
        "custom" => "https://cosign.sigstore.dev/attestation/v1",
        uri => uri,
    }
    .to_string()
}

/// The predicate `cosign attest --type kind` makes of a predicate file's bytes: `custom` wraps
/// the file's text (any text, not only JSON) as `{"Data": ..., "Timestamp": ...}` with the
/// time in RFC 3339 UTC; `spdx` (tag-value) is the text as one JSON string; the other short
/// names take any JSON document; a predicate URI takes a JSON object. Invalid UTF-8 becomes
/// U+FFFD, as Go's encoder writes it.
pub fn predicate(kind: &str, file: &[u8], timestamp: &str) -> Result<Value, SignError> {
    let text = || String::from_utf8_lossy(file).into_owned();
    let json = || {
        serde_json::from_slice::<Value>(file).map_err(|e| SignError::Payload {
            detail: format!("not JSON: {e}"),
        })
    };
    match kind {
        "custom" => {
            let mut m = serde_json::Map::new();
            m.insert("Data".into(), Value::String(text()));
            m.insert("Timestamp".into(), Value::String(timestamp.into()));
            Ok(Value::Object(m))
        }
        "spdx" => Ok(Value::String(text())),
        "spdxjson" | "cyclonedx" | "slsaprovenance" | "slsaprovenance02" | "slsaprovenance1"
        | "link" | "vuln" | "openvex" => json(),
        uri => match json()? {
            v @ Value::Object(_) => Ok(v),
            _ => Err(SignError::Payload {
                detail: format!("not a JSON object, as a predicate of type {uri} must be"),
            }),
        },
    }
}

/// The in-toto statement (v0.1, as `cosign attest` writes) about one image.
pub fn statement(
    repository: &str,
    digest_hex: &str,
    predicate_type: &str,
    predicate: Value,
) -> Vec<u8> {
    // Field order is the struct's in Go (`_type`, `predicateType`, `subject`, `predicate`);
    // only the predicate (a Go map) has its keys sorted.
    let mut top = serde_json::Map::new();
    top.insert("_type".into(), Value::String(STATEMENT_V01.into()));
    top.insert("predicateType".into(), Value::String(predicate_type.into()));
    top.insert(
        "subject".into(),
        serde_json::json!([{"name": repository, "digest": {"sha256": digest_hex}}]),
    );
    let mut out = serde_json::to_vec(&Value::Object(top)).unwrap_or_default();
    // Splice the sorted predicate in as the last member.
    out.pop();
    out.extend_from_slice(b",\"predicate\":");
    out.extend_from_slice(&go_json(&predicate));
    out.push(b'}');
    out
}

/// DSSE's pre-authentication encoding: what is actually signed.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub payload_type: String,
    pub payload: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnvelopeSignature {
    #[serde(default)]
    pub keyid: String,
    pub sig: String,
}

impl Envelope {
    /// Reads an envelope as go-securesystemslib's `dsse.Envelope` is read by `json.Unmarshal`.
    pub fn parse(bytes: &[u8]) -> Result<Envelope, SignError> {
        let read = || -> Result<Envelope, GoJsonError> {
            let doc = go::parse(bytes)?;
            let top = go::fields(Some(&doc), ["payloadType", "payload", "signatures"], "")?;
            let signatures = top
                .array("signatures")?
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let s = go::fields(Some(s), ["keyid", "sig"], &format!("signatures[{i}]"))?;
                    Ok(EnvelopeSignature {
                        keyid: s.string("keyid")?,
                        sig: s.string("sig")?,
                    })
                })
                .collect::<Result<_, GoJsonError>>()?;
            Ok(Envelope {
                payload_type: top.string("payloadType")?,
                payload: top.string("payload")?,
                signatures,
            })
        };
        read().map_err(refused("a DSSE envelope"))
    }

    /// An envelope around `statement` with one signature.
    pub fn new(statement: &[u8], signature: &[u8]) -> Self {
        Envelope {
            payload_type: IN_TOTO_PAYLOAD_TYPE.into(),
            payload: STANDARD.encode(statement),
            signatures: vec![EnvelopeSignature {
                keyid: String::new(),
                sig: STANDARD.encode(signature),
            }],
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// A statement read back: its predicate type and the subject digests it names.
#[derive(Debug, Clone)]
pub struct Statement {
    pub predicate_type: String,
    pub subjects: Vec<(String, String)>,
    pub predicate: Value,
    /// `_type`.
    pub kind: String,
}

/// Reads a statement as in-toto-golang's `Statement` (`_type`, `predicateType`, `subject`
/// of `{name, digest: map[string]string}`, `predicate` any) is read by `json.Unmarshal`.
pub fn parse_statement(bytes: &[u8]) -> Result<Statement, SignError> {
    let read = || -> Result<Statement, GoJsonError> {
        let doc = go::parse(bytes)?;
        let top = go::fields(
            Some(&doc),
            ["_type", "predicateType", "subject", "predicate"],
            "",
        )?;
        let subjects = top
            .array("subject")?
            .iter()
            .enumerate()
            .map(|(i, s): (usize, &GoValue)| {
                let s = go::fields(Some(s), ["name", "digest"], &format!("subject[{i}]"))?;
                let sha256 = s
                    .string_map("digest")?
                    .and_then(|mut d| d.remove("sha256"))
                    .unwrap_or_default();
                Ok((s.string("name")?, sha256))
            })
            .collect::<Result<_, GoJsonError>>()?;
        Ok(Statement {
            predicate_type: top.string("predicateType")?,
            subjects,
            predicate: top.any("predicate")?,
            kind: top.string("_type")?,
        })
    };
    let st = read().map_err(refused("an in-toto statement"))?;
    if st.kind != STATEMENT_V01 && st.kind != STATEMENT_V1 {
        return Err(SignError::Payload {
            detail: format!("_type is {:?}, not an in-toto statement", st.kind),
        });
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_bytes_match_cosign() {
        let d = format!("sha256:{}", "a".repeat(64));
        let p = SimpleSigning::new("quay.io/org/app", &d, &BTreeMap::new());
        assert_eq!(
            String::from_utf8(p.to_bytes()).unwrap(),
            format!(
                r#"{{"critical":{{"identity":{{"docker-reference":"quay.io/org/app"}},"image":{{"docker-manifest-digest":"{d}"}},"type":"cosign container image signature"}},"optional":null}}"#
            )
        );
        let mut a = BTreeMap::new();
        a.insert("z".to_string(), "1".to_string());
        a.insert("a".to_string(), "<&>".to_string());
        let p = SimpleSigning::new("quay.io/org/app", &d, &a);
        let text = String::from_utf8(p.to_bytes()).unwrap();
        assert!(
            text.ends_with(r#""optional":{"a":"\u003c\u0026\u003e","z":"1"}}"#),
            "{text}"
        );
        assert_eq!(SimpleSigning::parse(&p.to_bytes()).unwrap(), p);
    }

    #[test]
    fn predicates_are_built_by_type_as_cosign_builds_them() {
        let t = "2023-11-14T22:13:20Z";
        // custom: the file's text (here not JSON) and the time; cosign's CosignPredicate.
        let p = predicate("custom", b"foo\n<bar>", t).unwrap();
        assert_eq!(
            String::from_utf8(go_json(&p)).unwrap(),
            r#"{"Data":"foo\n\u003cbar\u003e","Timestamp":"2023-11-14T22:13:20Z"}"#
        );
        let s = statement("r/a", "ab", &predicate_type("custom"), p);
        assert_eq!(
            String::from_utf8(s).unwrap(),
            r#"{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://cosign.sigstore.dev/attestation/v1","subject":[{"name":"r/a","digest":{"sha256":"ab"}}],"predicate":{"Data":"foo\n\u003cbar\u003e","Timestamp":"2023-11-14T22:13:20Z"}}"#
        );
        // spdx (tag-value): one string.
        let tv = b"SPDXVersion: SPDX-2.3\nDataLicense: CC0-1.0\n";
        assert_eq!(
            predicate("spdx", tv, t).unwrap(),
            Value::String(String::from_utf8(tv.to_vec()).unwrap())
        );
        // spdxjson: the document itself; a URI type: a JSON object only.
        assert_eq!(
            predicate("spdxjson", br#"{"b":1}"#, t).unwrap(),
            serde_json::json!({"b": 1})
        );
        assert!(predicate("spdxjson", b"SPDXVersion: 2", t).is_err());
        assert!(predicate("https://example.com/p", b"[1]", t).is_err());
        assert_eq!(
            predicate("https://example.com/p", br#"{"a":true}"#, t).unwrap(),
            serde_json::json!({"a": true})
        );
    }

    /// The issue's cases: a second key on one field, in any case and either order, is refused
    /// (cosign would read the last); one key in another case reads as cosign reads it.
    #[test]
    fn documents_go_reads_otherwise_are_refused() {
        let this = format!("sha256:{}", "a".repeat(64));
        let other = format!("sha256:{}", "b".repeat(64));
        let payload = |image: &str, extra: &str| {
            format!(
                r#"{{"critical":{{"identity":{{"docker-reference":"r/a"}},"image":{{{image}}},"type":"{SIGNATURE_TYPE}"}}{extra},"optional":null}}"#
            )
        };
        let digest = |d: &str, key: &str| format!(r#""{key}":"{d}""#);
        for (a, b) in [
            (
                digest(&this, "docker-manifest-digest"),
                digest(&other, "Docker-Manifest-Digest"),
            ),
            (
                digest(&this, "docker-manifest-digest"),
                digest(&other, "docker-manifest-digest"),
            ),
            (
                digest(&this, "docker-manifest-digest"),
                digest(&other, "doc\\u212aer-manifest-digest"),
            ),
        ] {
            for image in [format!("{a},{b}"), format!("{b},{a}")] {
                let e = SimpleSigning::parse(payload(&image, "").as_bytes()).unwrap_err();
                assert!(e.to_string().contains("both name field"), "{image}: {e}");
            }
        }
        let critical_twice = format!(
            r#"{{"critical":{{"type":"{SIGNATURE_TYPE}"}},"Critical":{{"type":"{SIGNATURE_TYPE}"}}}}"#
        );
        assert!(SimpleSigning::parse(critical_twice.as_bytes()).is_err());
        // One spelling, any case: read as Go reads it (cosign verifies it).
        let p =
            SimpleSigning::parse(payload(&digest(&this, "Docker-Manifest-DIGEST"), "").as_bytes())
                .unwrap();
        assert_eq!(p.critical.image.docker_manifest_digest, this);
        // Unknown members are skipped, as Go skips them.
        let p = SimpleSigning::parse(
            payload(&digest(&this, "docker-manifest-digest"), r#","x":1,"x":2"#).as_bytes(),
        )
        .unwrap();
        assert_eq!(p.critical.image.docker_manifest_digest, this);

        let statement = |subjects: &str| {
            format!(
                r#"{{"_type":"{STATEMENT_V01}","predicateType":"p",{subjects},"predicate":{{}}}}"#
            )
        };
        for subjects in [
            r#""subject":[{"name":"a","digest":{"sha256":"aa"}}],"Subject":[{"name":"b","digest":{"sha256":"bb"}}]"#,
            r#""Subject":[],"subject":[{"name":"a","digest":{"sha256":"aa"}}]"#,
            "\"subject\":[],\"\\u017fubject\":[]",
        ] {
            let e = parse_statement(statement(subjects).as_bytes()).unwrap_err();
            assert!(e.to_string().contains("both name field"), "{subjects}: {e}");
        }
        // A digest set is a Go map: its keys are exact and the last one wins.
        let st = parse_statement(
            statement(
                r#""subject":[{"name":"a","digest":{"sha256":"aa","SHA256":"cc","sha256":"bb"}}]"#,
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(st.subjects, vec![("a".to_string(), "bb".to_string())]);

        let e = Envelope::parse(
            br#"{"payloadType":"application/vnd.in-toto+json","payload":"e30=","Payload":"W10=","signatures":[]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("both name field"), "{e}");
        let env = Envelope::parse(
            br#"{"PayloadType":"t","PAYLOAD":"e30=","signatures":[{"KeyID":"k","Sig":"c2ln"},null]}"#,
        )
        .unwrap();
        assert_eq!(
            (env.payload_type.as_str(), env.payload.as_str()),
            ("t", "e30=")
        );
        assert_eq!(env.signatures.len(), 2);
        assert_eq!(
            (
                env.signatures[0].keyid.as_str(),
                env.signatures[0].sig.as_str()
            ),
            ("k", "c2ln")
        );
    }

    #[test]
    fn pae_is_dsse_v1() {
        assert_eq!(
            pae("application/vnd.in-toto+json", b"{}"),
            b"DSSEv1 28 application/vnd.in-toto+json 2 {}".to_vec()
        );
    }

    #[test]
    fn statement_keeps_go_field_order() {
        let s = statement(
            "r/a",
            "ab",
            "https://spdx.dev/Document",
            serde_json::json!({"b":1,"a":2}),
        );
        assert_eq!(
            String::from_utf8(s.clone()).unwrap(),
            r#"{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document","subject":[{"name":"r/a","digest":{"sha256":"ab"}}],"predicate":{"a":2,"b":1}}"#
        );
        let back = parse_statement(&s).unwrap();
        // Numbers as cosign (Go's float64) writes them.
        let s = statement(
            "r/a",
            "ab",
            "https://spdx.dev/Document",
            serde_json::json!({"v": 1.0, "w": 0.0000001}),
        );
        assert!(
            String::from_utf8(s)
                .unwrap()
                .ends_with(r#""predicate":{"v":1,"w":1e-7}}"#)
        );
        assert_eq!(back.subjects, vec![("r/a".to_string(), "ab".to_string())]);
    }
}
