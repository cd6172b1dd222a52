//! Synthetic catalogs in the shape of opm's own benchmark (300 packages, 450 channels, 3,000
//! bundles with icons and `olm.csv.metadata`), scaled by a factor, for benchmarks of loading,
//! validation and rendering. Output is deterministic (a fixed pseudo-random sequence), valid,
//! and sized like real catalog content (descriptions, CRD descriptors, alm-examples).
//!
//! Test and benchmark data, not part of the shipped library: the tests and benches include it
//! with `#[path]`, and `cargo run --release -p olm-bundler --example synthesize` writes one.

#![allow(dead_code)]

use std::path::Path;

use serde_json::json;

use olm_bundler::atomic_write::FileTree;
use olm_bundler::catalog::declcfg::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, Package, RelatedImage, SCHEMA_BUNDLE,
    SCHEMA_CHANNEL, SCHEMA_PACKAGE,
};
use olm_bundler::catalog::property::{CsvMetadata, Property, TYPE_CSV_METADATA};

/// Shape of a synthetic catalog.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub packages: usize,
    /// Bundles per package (opm's shape: 10).
    pub bundles_per_package: usize,
}

impl Shape {
    /// opm's benchmark shape times `scale`: 300·scale packages, 450·scale channels, 3,000·scale
    /// bundles.
    pub fn opm(scale: usize) -> Shape {
        Shape {
            packages: 300 * scale,
            bundles_per_package: 10,
        }
    }
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

const WORDS: &[&str] = &[
    "operator",
    "cluster",
    "managed",
    "reconcile",
    "storage",
    "network",
    "secure",
    "backup",
    "restore",
    "upgrade",
    "observability",
    "metrics",
    "scaling",
    "database",
    "cache",
    "queue",
    "gateway",
    "policy",
    "tenant",
    "workload",
    "automation",
    "lifecycle",
    "controller",
    "resource",
];

fn text(rng: &mut Lcg, words: usize) -> String {
    let mut s = String::with_capacity(words * 9);
    for i in 0..words {
        if i > 0 {
            s.push(if i % 14 == 0 { '\n' } else { ' ' });
        }
        s.push_str(WORDS[(rng.next() as usize) % WORDS.len()]);
    }
    s
}

/// Builds one package: package blob (with a ~4 KB icon), one or two channels (every second
/// package has two, giving 1.5 channels per package), and its bundles.
pub fn package(index: usize, shape: &Shape) -> DeclarativeConfig {
    let mut rng = Lcg(index as u64 * 7919 + 17);
    let name = format!("synthetic-operator-{index:05}");
    let icon: Vec<u8> = (0..3000).map(|_| (rng.next() & 0xff) as u8).collect();
    let mut cfg = DeclarativeConfig::default();
    cfg.packages.push(Package {
        schema: SCHEMA_PACKAGE.into(),
        name: name.clone(),
        default_channel: "stable".into(),
        icon: Some(Icon {
            data: olm_bundler::grammar::go_base64::encode(&icon),
            media_type: "image/png".into(),
        }),
        description: text(&mut rng, 120),
        ..Default::default()
    });
    let n = shape.bundles_per_package;
    let bundle_name = |i: usize| format!("{name}.v1.{i}.0");
    let mut stable = Vec::new();
    for i in 0..n {
        stable.push(ChannelEntry {
            name: bundle_name(i),
            replaces: if i > 0 {
                bundle_name(i - 1)
            } else {
                String::new()
            },
            skips: Vec::new(),
            skip_range: if i > 0 {
                format!(">=1.{}.0 <1.{i}.0", i - 1)
            } else {
                String::new()
            },
        });
    }
    cfg.channels.push(Channel {
        schema: SCHEMA_CHANNEL.into(),
        name: "stable".into(),
        package: name.clone(),
        entries: stable.clone(),
        ..Default::default()
    });
    if index.is_multiple_of(2) {
        let half = n / 2;
        let mut fast: Vec<ChannelEntry> = stable[half..].to_vec();
        if let Some(first) = fast.first_mut() {
            first.replaces.clear();
            first.skip_range.clear();
        }
        cfg.channels.push(Channel {
            schema: SCHEMA_CHANNEL.into(),
            name: "fast".into(),
            package: name.clone(),
            entries: fast,
            ..Default::default()
        });
    }
    let group = format!("{name}.example.com");
    for i in 0..n {
        let version = format!("1.{i}.0");
        let kinds = ["Backup", "Cluster", "Restore"];
        let mut props = Vec::new();
        for k in kinds {
            props.push(Property::gvk(&group, "v1", k));
        }
        props.push(Property::package(&name, &version));
        let owned: Vec<_> = kinds
            .iter()
            .map(|k| {
                json!({
                    "description": text(&mut rng, 20),
                    "displayName": k,
                    "kind": k,
                    "name": format!("{}s.{group}", k.to_lowercase()),
                    "specDescriptors": (0..4).map(|d| json!({
                        "description": text(&mut rng, 10),
                        "displayName": format!("Field {d}"),
                        "path": format!("spec.field{d}"),
                        "x-descriptors": ["urn:alm:descriptor:com.tectonic.ui:text"],
                    })).collect::<Vec<_>>(),
                    "version": "v1",
                })
            })
            .collect();
        let examples = serde_json::to_string(
            &kinds
                .iter()
                .map(|k| json!({"apiVersion": format!("{group}/v1"), "kind": k, "metadata": {"name": "example"}, "spec": {"size": 3, "note": text(&mut rng, 12)}}))
                .collect::<Vec<_>>(),
        )
        .unwrap_or_default();
        let mut meta = CsvMetadata {
            description: text(&mut rng, 220),
            display_name: format!("Synthetic Operator {index}"),
            keywords: vec!["synthetic".into(), "benchmark".into()],
            maturity: "stable".into(),
            min_kube_version: "1.25.0".into(),
            provider: json!({"name": "Benchmarks Inc."}),
            crd_descriptions: json!({"owned": owned}),
            install_modes: [
                "OwnNamespace",
                "SingleNamespace",
                "MultiNamespace",
                "AllNamespaces",
            ]
            .iter()
            .map(|m| json!({"supported": *m != "MultiNamespace", "type": m}))
            .collect(),
            links: vec![json!({"name": "Docs", "url": "https://example.com/docs"})],
            maintainers: vec![json!({"email": "team@example.com", "name": "Team"})],
            ..Default::default()
        };
        meta.annotations
            .insert("alm-examples".into(), examples.into());
        meta.annotations
            .insert("capabilities".into(), "Seamless Upgrades".into());
        meta.annotations.insert(
            "containerImage".into(),
            format!("quay.io/synthetic/{name}:v{version}").into(),
        );
        props.push(Property::build(TYPE_CSV_METADATA, &meta));
        cfg.bundles.push(Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: bundle_name(i),
            package: name.clone(),
            image: format!(
                "quay.io/synthetic/{name}-bundle@sha256:{:064x}",
                index * 1000 + i
            ),
            properties: props,
            related_images: vec![
                RelatedImage {
                    name: String::new(),
                    image: format!(
                        "quay.io/synthetic/{name}-bundle@sha256:{:064x}",
                        index * 1000 + i
                    ),
                },
                RelatedImage {
                    name: "manager".into(),
                    image: format!("quay.io/synthetic/{name}:v{version}"),
                },
            ],
            source: Default::default(),
        });
    }
    cfg
}

/// Output syntax of a generated catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Yaml,
    Json,
}

/// Writes a synthetic catalog as `<root>/<package>/catalog.{yaml,json}`; returns total bytes.
pub fn write(
    root: &Path,
    shape: &Shape,
    syntax: Syntax,
) -> Result<u64, olm_bundler::atomic_write::WriteError> {
    let mut total = 0u64;
    for i in 0..shape.packages {
        let cfg = package(i, shape);
        let (text, ext) = match syntax {
            Syntax::Json => (cfg.to_json(), "json"),
            Syntax::Yaml => (cfg.to_yaml().unwrap_or_default(), "yaml"),
        };
        total += text.len() as u64;
        let mut tree = FileTree::new();
        tree.insert(
            format!("{}/catalog.{ext}", cfg.packages[0].name),
            text.into_bytes(),
        );
        tree.write(root, &[])?;
    }
    Ok(total)
}
