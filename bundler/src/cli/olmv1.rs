//! `olm catalog validate --olmv1`: the per-package OLM v1 verdict, as text or JSON.

use std::fmt::Write as _;
use std::path::Path;

use olm_bundler::catalog::load;
use olm_bundler::catalog::olmv1::{self, PackageVerdict};

/// Loads the catalog with every bundle's metadata (validation drops it) and judges each
/// package's bundles.
pub fn check(dir: &Path, experimental: bool) -> anyhow::Result<Vec<PackageVerdict>> {
    let cfg = load::load_dir(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(olmv1::check(&cfg, None, experimental))
}

/// Whether any bundle has an error.
pub fn failed(verdicts: &[PackageVerdict]) -> bool {
    verdicts
        .iter()
        .any(|p| p.bundles.iter().any(|b| !b.installable()))
}

pub fn text(verdicts: &[PackageVerdict], experimental: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "OLM v1 ({} feature set):",
        if experimental {
            "experimental"
        } else {
            "standard"
        }
    );
    for p in verdicts {
        let _ = write!(
            s,
            "package {}: {} of {} bundle(s) installable",
            p.package,
            p.installable(),
            p.bundles.len()
        );
        match (&p.default_channel_head, p.head_installable()) {
            (Some(h), Some(true)) => {
                let _ = writeln!(s, "; default channel head {h}: installable");
            }
            (Some(h), Some(false)) => {
                let _ = writeln!(s, "; default channel head {h}: NOT installable");
            }
            _ => {
                let _ = writeln!(s);
            }
        }
        for b in &p.bundles {
            if b.findings.is_empty() {
                continue;
            }
            let partial = if b.metadata_only {
                " (olm.csv.metadata only: deployments, webhooks and CRDs not in the catalog)"
            } else {
                ""
            };
            let verdict = if b.installable() {
                "installable"
            } else {
                "not installable"
            };
            let _ = writeln!(s, "  {}{partial}: {verdict}", b.bundle);
            for f in &b.findings {
                let _ = writeln!(s, "    {f}");
                if let Some(h) = &f.hint {
                    let _ = writeln!(s, "        hint: {h}");
                }
            }
        }
    }
    s
}

/// The validation report's JSON with the verdicts added under `olmv1`.
pub fn json(report_json: &str, verdicts: &[PackageVerdict]) -> anyhow::Result<String> {
    let mut v: serde_json::Value = serde_json::from_str(report_json)?;
    let olmv1 = serde_json::to_value(verdicts)?;
    match v.as_object_mut() {
        Some(o) => {
            o.insert("olmv1".into(), olmv1);
        }
        None => v = serde_json::json!({ "validate": v, "olmv1": olmv1 }),
    }
    Ok(format!("{}\n", serde_json::to_string_pretty(&v)?))
}
