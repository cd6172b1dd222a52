//! What a catalog browser shows of one package, read from the serve cache: the index (names,
//! channels, versions) and, per bundle, its CSV from the payload file; the package's icon and
//! description from its `olm.package` blob in catalogd's content.

use serde::Deserialize;
use serde_json::Value;

use crate::serve::proto::cache;
use crate::serve::runtime::store::{EntryView, Store, StoreError};

/// Icons larger than this (decoded) are left out: every grid card carries its icon inline.
pub const MAX_ICON_BYTES: usize = 256 << 10;

/// The media types an icon may have; anything else is dropped (never served as a data: URI).
const ICON_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/svg+xml"];

/// A package icon fit to be a `data:` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon {
    pub mediatype: &'static str,
    /// Standard base64, checked to decode.
    pub base64: String,
}

impl Icon {
    /// The icon when its media type is an image type we allow and its data is base64 of at
    /// most [`MAX_ICON_BYTES`] bytes.
    pub fn checked(mediatype: &str, data: &str) -> Option<Icon> {
        use base64::Engine;
        let mediatype = mediatype.trim().to_ascii_lowercase();
        let mediatype = ICON_TYPES.iter().find(|t| **t == mediatype)?;
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .ok()?;
        if bytes.is_empty() || bytes.len() > MAX_ICON_BYTES {
            return None;
        }
        Some(Icon {
            mediatype,
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }

    pub fn data_uri(&self) -> String {
        format!("data:{};base64,{}", self.mediatype, self.base64)
    }
}

/// A package's `olm.package` blob: the parts the browser shows.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PackageBlob {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub icon: Option<BlobIcon>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct BlobIcon {
    #[serde(default)]
    pub base64data: String,
    #[serde(default)]
    pub mediatype: String,
}

/// One channel: its head and whether it is the default.
#[derive(Debug, Clone)]
pub struct ChannelView {
    pub name: String,
    pub head: String,
    pub head_version: String,
    pub is_default: bool,
    pub deprecation: Option<String>,
    pub entries: usize,
}

/// One bundle of the package.
#[derive(Debug, Clone)]
pub struct VersionView {
    pub name: String,
    pub version: String,
    pub created_at: Option<String>,
    pub image: String,
    pub channels: Vec<String>,
    pub deprecation: Option<String>,
}

/// A CRD the head bundle owns, with its example from `alm-examples`.
#[derive(Debug, Clone)]
pub struct CrdView {
    pub name: String,
    pub version: String,
    pub kind: String,
    pub display_name: String,
    pub description: String,
    /// The example object as YAML.
    pub example: Option<String>,
}

/// Everything one package page shows (the grid card is a part of it).
#[derive(Debug, Clone, Default)]
pub struct PackageView {
    pub name: String,
    pub display_name: String,
    pub provider: String,
    pub short_description: String,
    /// Markdown, from the head CSV's `spec.description`, else the `olm.package` description.
    pub description: String,
    pub categories: Vec<String>,
    pub capability: String,
    pub keywords: Vec<String>,
    pub repository: String,
    pub icon: Option<Icon>,
    pub deprecation: Option<String>,
    pub default_channel: String,
    pub head_bundle: String,
    pub head_version: String,
    pub channels: Vec<ChannelView>,
    /// Newest first.
    pub versions: Vec<VersionView>,
    pub crds: Vec<CrdView>,
    pub related_images: Vec<(String, String)>,
    /// The install modes the head CSV supports (`AllNamespaces`, `OwnNamespace`, ...).
    pub install_modes: Vec<String>,
    /// The head bundle's manifests (JSON), for the installer RBAC.
    pub head_objects: Vec<String>,
}

fn text_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn deprecation(d: &Option<crate::serve::proto::api::Deprecation>) -> Option<String> {
    d.as_ref().map(|d| d.message.clone())
}

/// The `createdAt` annotation of a CSV, read without building the whole document.
fn created_at(csv_json: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Csv {
        #[serde(default)]
        metadata: Meta,
    }
    #[derive(Deserialize, Default)]
    struct Meta {
        #[serde(default)]
        annotations: std::collections::BTreeMap<String, Value>,
    }
    let csv: Csv = serde_json::from_str(csv_json).ok()?;
    let at = csv.metadata.annotations.get("createdAt")?.as_str()?.trim();
    (!at.is_empty()).then(|| at.to_string())
}

/// The view of package `p` of `store`; `blob` is its `olm.package` blob.
pub fn package_view(
    store: &Store,
    p: &cache::Package,
    blob: &PackageBlob,
) -> Result<PackageView, StoreError> {
    let name_of = |i: u32| {
        p.bundles
            .get(i as usize)
            .and_then(|b| b.base.as_ref())
            .map(|b| (b.csv_name.clone(), b.version.clone()))
            .unwrap_or_default()
    };
    let channels: Vec<ChannelView> = p
        .channels
        .iter()
        .map(|c| {
            let (head, head_version) = name_of(c.head);
            ChannelView {
                name: c.name.clone(),
                head,
                head_version,
                is_default: c.name == p.default_channel,
                deprecation: deprecation(&c.deprecation),
                entries: c.entries.len(),
            }
        })
        .collect();
    // The api.Bundle of each bundle through its first channel entry (payload read once).
    let mut first_entry: Vec<Option<EntryView<'_>>> = vec![None; p.bundles.len()];
    let mut in_channels: Vec<Vec<String>> = vec![Vec::new(); p.bundles.len()];
    for c in &p.channels {
        for e in &c.entries {
            let i = e.bundle as usize;
            let Some(bundle) = p.bundles.get(i) else {
                continue;
            };
            in_channels[i].push(c.name.clone());
            first_entry[i].get_or_insert(EntryView {
                package: p,
                channel: c,
                entry: e,
                bundle,
            });
        }
    }
    let head_index = p
        .channels
        .iter()
        .find(|c| c.name == p.default_channel)
        .or(p.channels.first())
        .map(|c| c.head as usize);
    let mut versions = Vec::new();
    let mut head = None;
    for (i, entry) in first_entry.iter().enumerate() {
        let Some(entry) = entry else { continue };
        let b = store.api_bundle(entry, true)?;
        if Some(i) == head_index {
            head = Some(b.clone());
        }
        versions.push(VersionView {
            name: b.csv_name.clone(),
            version: b.version.clone(),
            created_at: created_at(&b.csv_json),
            image: b.bundle_path.clone(),
            channels: std::mem::take(&mut in_channels[i]),
            deprecation: deprecation(&b.deprecation),
        });
    }
    versions.sort_by(|a, b| newest_first(&a.version, &b.version).then(a.name.cmp(&b.name)));
    let head = head.unwrap_or_default();
    let csv: Value = serde_json::from_str(&head.csv_json).unwrap_or(Value::Null);
    let annotation = |k: &str| text_at(&csv, &format!("/metadata/annotations/{k}")).trim();
    let split = |s: &str| -> Vec<String> {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut description = text_at(&csv, "/spec/description").to_string();
    if description.trim().is_empty() {
        description = blob.description.clone().unwrap_or_default();
    }
    let icon = blob
        .icon
        .as_ref()
        .and_then(|i| Icon::checked(&i.mediatype, &i.base64data))
        .or_else(|| {
            let i = csv.pointer("/spec/icon/0")?;
            Icon::checked(text_at(i, "/mediatype"), text_at(i, "/base64data"))
        });
    let display_name = match text_at(&csv, "/spec/displayName").trim() {
        "" => p.name.clone(),
        d => d.to_string(),
    };
    let related_images = csv
        .pointer("/spec/relatedImages")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        text_at(r, "/name").to_string(),
                        text_at(r, "/image").to_string(),
                    )
                })
                .filter(|(_, image)| !image.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let install_modes = csv
        .pointer("/spec/installModes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|m| m.get("supported").and_then(Value::as_bool) == Some(true))
                .map(|m| text_at(m, "/type").to_string())
                .collect()
        })
        .unwrap_or_default();
    let keywords = csv
        .pointer("/spec/keywords")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(PackageView {
        name: p.name.clone(),
        display_name,
        provider: text_at(&csv, "/spec/provider/name").trim().to_string(),
        short_description: annotation("description").to_string(),
        description,
        categories: split(annotation("categories")),
        capability: annotation("capabilities").to_string(),
        keywords,
        repository: annotation("repository").to_string(),
        icon,
        deprecation: deprecation(&p.deprecation),
        default_channel: p.default_channel.clone(),
        head_bundle: head.csv_name.clone(),
        head_version: head.version.clone(),
        channels,
        versions,
        crds: owned_crds(&csv),
        related_images,
        install_modes,
        head_objects: head.object,
    })
}

/// Semver order, newest first; versions that do not parse sort last, by text.
fn newest_first(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(a), Ok(b)) => b.cmp(&a),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => b.cmp(a),
    }
}

/// The CRDs the CSV owns, each with the first `alm-examples` object of its kind.
fn owned_crds(csv: &Value) -> Vec<CrdView> {
    let examples: Vec<Value> =
        serde_json::from_str(text_at(csv, "/metadata/annotations/alm-examples"))
            .unwrap_or_default();
    csv.pointer("/spec/customresourcedefinitions/owned")
        .and_then(Value::as_array)
        .map(|owned| {
            owned
                .iter()
                .map(|o| {
                    let name = text_at(o, "/name").to_string();
                    let kind = text_at(o, "/kind").to_string();
                    let group = name.split_once('.').map(|(_, g)| g).unwrap_or_default();
                    let example = examples
                        .iter()
                        .find(|e| {
                            text_at(e, "/kind") == kind
                                && text_at(e, "/apiVersion").split('/').next() == Some(group)
                        })
                        .or_else(|| examples.iter().find(|e| text_at(e, "/kind") == kind))
                        .and_then(|e| crate::yaml::to_yaml(e).ok());
                    CrdView {
                        version: text_at(o, "/version").to_string(),
                        display_name: text_at(o, "/displayName").to_string(),
                        description: text_at(o, "/description").to_string(),
                        name,
                        kind,
                        example,
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icons_are_checked() {
        assert!(Icon::checked("image/png", "iVBORw0KGgo=").is_some());
        assert!(Icon::checked("IMAGE/SVG+XML", "PHN2Zy8+").is_some());
        assert!(Icon::checked("text/html", "PHNjcmlwdD4=").is_none());
        assert!(Icon::checked("image/png\"><script>", "iVBORw0KGgo=").is_none());
        assert!(Icon::checked("image/png", "not base64!").is_none());
        assert!(Icon::checked("image/png", "").is_none());
    }

    #[test]
    fn created_at_is_read_from_the_annotations() {
        let csv = r#"{"metadata":{"annotations":{"createdAt":"2024-01-02T03:04:05Z"}},"spec":{}}"#;
        assert_eq!(created_at(csv).as_deref(), Some("2024-01-02T03:04:05Z"));
        assert_eq!(created_at("{}"), None);
        assert_eq!(created_at(""), None);
    }
}
