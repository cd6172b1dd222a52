//! The SPDX 2.3 JSON document (spdx-spec v2.3, the JSON schema's field names), as syft
//! writes it for an image: the image as the described package, every file with its SHA1
//! (required by SPDX 2.3) and SHA256, the packages found with their purls, and the
//! relationships between them. Field order is fixed by the structs and every list is
//! sorted, so the same image gives the same bytes.

use serde::Serialize;

pub const SPDX_VERSION: &str = "SPDX-2.3";
pub const DATA_LICENSE: &str = "CC0-1.0";
pub const DOCUMENT_ID: &str = "SPDXRef-DOCUMENT";
pub const NOASSERTION: &str = "NOASSERTION";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    pub spdx_version: &'static str,
    pub data_license: &'static str,
    #[serde(rename = "SPDXID")]
    pub spdx_id: &'static str,
    pub name: String,
    pub document_namespace: String,
    pub creation_info: CreationInfo,
    pub packages: Vec<Package>,
    pub files: Vec<File>,
    pub relationships: Vec<Relationship>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreationInfo {
    pub creators: Vec<String>,
    /// RFC 3339 UTC.
    pub created: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub name: String,
    #[serde(rename = "SPDXID")]
    pub spdx_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_info: Option<String>,
    pub supplier: String,
    pub download_location: &'static str,
    /// True for a package that CONTAINS files of the document (the image, a Debian
    /// package), which then carries their verification code; false for one known only from
    /// metadata (a crate).
    pub files_analyzed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package_verification_code: Option<VerificationCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_info: Option<String>,
    pub license_concluded: &'static str,
    pub license_declared: &'static str,
    pub copyright_text: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub external_refs: Vec<ExternalRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_package_purpose: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationCode {
    pub package_verification_code_value: String,
}

impl VerificationCode {
    /// SPDX's package verification code: the SHA1 of the package's files' SHA1 hex values,
    /// sorted and concatenated.
    pub fn of<'a>(file_sha1s: impl IntoIterator<Item = &'a str>) -> Self {
        use sha1::Digest as _;
        let mut sums: Vec<&str> = file_sha1s.into_iter().collect();
        sums.sort_unstable();
        VerificationCode {
            package_verification_code_value: hex::encode(sha1::Sha1::digest(sums.concat())),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalRef {
    pub reference_category: &'static str,
    pub reference_type: &'static str,
    pub reference_locator: String,
}

impl ExternalRef {
    pub fn purl(locator: String) -> Self {
        ExternalRef {
            reference_category: "PACKAGE-MANAGER",
            reference_type: "purl",
            reference_locator: locator,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct File {
    pub file_name: String,
    #[serde(rename = "SPDXID")]
    pub spdx_id: String,
    pub checksums: Vec<Checksum>,
    pub license_concluded: &'static str,
    pub copyright_text: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checksum {
    pub algorithm: &'static str,
    pub checksum_value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Relationship {
    pub spdx_element_id: String,
    pub relationship_type: &'static str,
    pub related_spdx_element: String,
}

impl Relationship {
    pub fn new(from: &str, kind: &'static str, to: &str) -> Self {
        Relationship {
            spdx_element_id: from.to_string(),
            relationship_type: kind,
            related_spdx_element: to.to_string(),
        }
    }
}

impl Package {
    /// A package whose licenses and download location we do not assert.
    pub fn new(name: &str, spdx_id: String, version: Option<&str>) -> Self {
        Package {
            name: name.to_string(),
            spdx_id,
            version_info: version.map(str::to_string),
            supplier: NOASSERTION.to_string(),
            download_location: NOASSERTION,
            files_analyzed: false,
            package_verification_code: None,
            source_info: None,
            license_concluded: NOASSERTION,
            license_declared: NOASSERTION,
            copyright_text: NOASSERTION,
            external_refs: Vec::new(),
            primary_package_purpose: None,
        }
    }
}

impl Document {
    /// Pretty JSON with a final newline (a file a person may read and diff).
    pub fn to_json(&self) -> Vec<u8> {
        // Serialising plain structs of strings cannot fail.
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

/// An SPDX identifier: `SPDXRef-<kind>-<readable part>-<16 hex of sha256(key)>`, with the
/// readable part reduced to the characters SPDX allows (letters, digits, `.` and `-`) and the
/// hash keeping ids of different keys apart.
pub fn id(kind: &str, readable: &str, key: &str) -> String {
    use sha2::Digest as _;
    let clean: String = readable
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_matches('-');
    let hash = hex::encode(sha2::Sha256::digest(key.as_bytes()));
    format!("SPDXRef-{kind}-{clean}-{}", &hash[..16])
}

/// Percent-encodes a purl component: everything but ASCII letters, digits and `.-_~` (the
/// purl spec's unreserved set; a Debian version's `+` becomes `%2B`, its epoch's `:` `%3A`).
pub fn purl_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_use_only_spdx_characters_and_stay_distinct() {
        let a = id("File", "/usr/lib/libc.so.6", "x/usr/lib/libc.so.6");
        assert!(a.starts_with("SPDXRef-File-usr-lib-libc.so.6-"), "{a}");
        assert!(
            a["SPDXRef-".len()..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        );
        assert_ne!(a, id("File", "/usr/lib/libc.so.6", "y/usr/lib/libc.so.6"));
        assert_eq!(purl_escape("1:2.3+b1 x"), "1%3A2.3%2Bb1%20x");
    }

    #[test]
    fn verification_code_sorts_then_hashes() {
        // sha1("ab") with the inputs in either order.
        let want = "da23614e02469a0d7c7bd1bdab5c9c474b1904dc";
        assert_eq!(
            VerificationCode::of(["b", "a"]).package_verification_code_value,
            want
        );
        assert_eq!(
            VerificationCode::of(["a", "b"]).package_verification_code_value,
            want
        );
    }

    #[test]
    fn document_fields_are_spdx_json_names() {
        let doc = Document {
            spdx_version: SPDX_VERSION,
            data_license: DATA_LICENSE,
            spdx_id: DOCUMENT_ID,
            name: "n".into(),
            document_namespace: "https://example.invalid/n".into(),
            creation_info: CreationInfo {
                creators: vec!["Tool: olm".into()],
                created: "1970-01-01T00:00:00Z".into(),
            },
            packages: vec![Package::new("p", "SPDXRef-Package-p".into(), Some("1"))],
            files: Vec::new(),
            relationships: vec![Relationship::new(
                DOCUMENT_ID,
                "DESCRIBES",
                "SPDXRef-Package-p",
            )],
        };
        let v: serde_json::Value = serde_json::from_slice(&doc.to_json()).unwrap();
        assert_eq!(v["spdxVersion"], "SPDX-2.3");
        assert_eq!(v["SPDXID"], "SPDXRef-DOCUMENT");
        assert_eq!(v["packages"][0]["filesAnalyzed"], false);
        assert_eq!(v["packages"][0]["versionInfo"], "1");
        assert_eq!(
            v["relationships"][0]["relatedSpdxElement"],
            "SPDXRef-Package-p"
        );
    }
}
