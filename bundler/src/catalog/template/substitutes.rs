//! The `olm.template.substitutes` catalog template (operator-registry
//! `alpha/template/substitutes`): a complete FBC (`entries`) plus `substitutions`, each naming
//! a bundle image (`name`) that takes the place of an existing bundle (`base`) in every channel
//! listing it. The substitute inherits the base's `replaces`, `skips` and `skipRange` and
//! skips the base; entries that replaced the base replace the substitute instead (and skip the
//! base); entries that skipped the base skip the substitute.

use std::cmp::Ordering;
use std::path::Path;

use serde_json::Value;

use super::{BundleResolver, SCHEMA_SUBSTITUTES, TemplateError, field};
use crate::catalog::declcfg::{Bundle, ChannelEntry, DeclarativeConfig};
use crate::catalog::property::PackageProperty;

/// One substitution: the bundle image `name` replaces the bundle named `base`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Substitution {
    pub name: String,
    pub base: String,
}

fn invalid(path: &Path, message: impl Into<String>) -> TemplateError {
    TemplateError::Invalid {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Renders the template: loads `entries`, checks they form a valid catalog, then applies the
/// substitutions in order, checking the catalog after each.
pub fn render_substitutes(
    path: &Path,
    tpl: &Value,
    resolver: &BundleResolver,
) -> Result<DeclarativeConfig, TemplateError> {
    let Some(obj) = tpl.as_object() else {
        return Err(invalid(
            path,
            "render: unable to parse template: template must be an object",
        ));
    };
    let schema = field(obj, "schema").and_then(Value::as_str).unwrap_or("");
    if schema != SCHEMA_SUBSTITUTES {
        return Err(invalid(
            path,
            format!(
                "render: unable to parse template: template has unknown schema ({schema:?}), should be {SCHEMA_SUBSTITUTES:?}"
            ),
        ));
    }
    let mut cfg = DeclarativeConfig::default();
    let src = crate::catalog::declcfg::Source::new(std::sync::Arc::from(path), 0);
    for (i, e) in field(obj, "entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if !e.is_object() {
            return Err(invalid(path, format!("entries[{i}] must be an object")));
        }
        crate::catalog::load::add_blob(&mut cfg, e.clone(), src.clone())?;
    }
    cfg.clear_sources();
    check_model(&cfg)
        .map_err(|e| invalid(path, format!("render: entries are not valid FBC: {e}")))?;

    let mut subs = Vec::new();
    for (i, s) in field(obj, "substitutions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(o) = s.as_object() else {
            return Err(invalid(
                path,
                format!("substitutions[{i}] must be an object"),
            ));
        };
        let text = |k| {
            field(o, k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        subs.push(Substitution {
            name: text("name"),
            base: text("base"),
        });
    }
    let base_dir = path.parent().unwrap_or(Path::new("."));
    for s in &subs {
        apply(&mut cfg, s, resolver, base_dir).map_err(|e| {
            invalid(
                path,
                format!(
                    "render: error processing substitution {}->{}: {e}",
                    s.base, s.name
                ),
            )
        })?;
    }
    Ok(cfg)
}

/// opm's `ConvertToModel` check: the catalog builds a model (its errors as one line each).
fn check_model(cfg: &DeclarativeConfig) -> Result<(), String> {
    match crate::catalog::model::Model::from_declcfg(cfg) {
        Ok(_) => Ok(()),
        Err(report) => Err(report.to_text().trim_end().to_string()),
    }
}

/// Applies one substitution to `cfg`.
fn apply(
    cfg: &mut DeclarativeConfig,
    s: &Substitution,
    resolver: &BundleResolver,
    base_dir: &Path,
) -> Result<(), String> {
    if s.name.is_empty() {
        return Err("substitution name cannot be empty".into());
    }
    if s.base.is_empty() {
        return Err("substitution base cannot be empty".into());
    }
    if s.name == s.base {
        return Err("substitution name and base cannot be the same".into());
    }
    let substitute = resolver
        .resolve(&s.name, base_dir)
        .map_err(|e| format!("failed to render bundle image reference {:?}: {e}", s.name))?
        .bundle;
    let sub_version = version_release(&substitute).map_err(|e| {
        format!(
            "failed to get composite version for substitute bundle {:?}: {e}",
            s.name
        )
    })?;
    let Some(base) = cfg.bundles.iter().find(|b| b.name == s.base) else {
        return Err(format!(
            "base bundle {:?} does not exist in catalog",
            s.base
        ));
    };
    let base_version = version_release(base).map_err(|e| {
        format!(
            "failed to get composite version for base bundle {:?}: {e}",
            s.base
        )
    })?;
    if compare_version_release(&base_version, &sub_version) != Ordering::Less {
        return Err(format!(
            "base bundle {:?} is not less than substitute bundle {:?}",
            s.base, s.name
        ));
    }

    for channel in &mut cfg.channels {
        let targets: Vec<usize> = channel
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.name == s.base)
            .map(|(i, _)| i)
            .collect();
        for &i in targets.iter().rev() {
            let old = &mut channel.entries[i];
            let mut skips = std::mem::take(&mut old.skips);
            skips.push(s.base.clone());
            let entry = ChannelEntry {
                name: substitute.name.clone(),
                replaces: std::mem::take(&mut old.replaces),
                skips,
                skip_range: std::mem::take(&mut old.skip_range),
            };
            channel.entries.push(entry);
        }
        let originals = channel.entries.len() - targets.len();
        for e in &mut channel.entries[..originals] {
            if e.replaces == s.base {
                e.replaces = substitute.name.clone();
                e.skips.push(s.base.clone());
            } else if e.skips.contains(&s.base) {
                e.skips.push(substitute.name.clone());
                e.skips.retain(|k| *k != s.base);
            }
        }
    }
    cfg.bundles.push(substitute);
    check_model(cfg).map_err(|e| format!("resulting config is not valid FBC: {e}"))
}

/// A bundle's version and release (opm `Bundle.VersionRelease`).
fn version_release(b: &Bundle) -> Result<(semver::Version, Vec<String>), String> {
    let pkgs: Vec<PackageProperty> = b
        .properties
        .iter()
        .filter(|p| p.ty == crate::catalog::property::TYPE_PACKAGE)
        .map(|p| p.value_as::<PackageProperty>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("parse properties for bundle {:?}: {e}", b.name))?;
    let [p] = pkgs.as_slice() else {
        return Err(format!(
            "bundle {:?} must have exactly 1 \"olm.package\" property, found {}",
            b.name,
            pkgs.len()
        ));
    };
    let v = crate::grammar::semver_range::parse_version(&p.version).map_err(|e| {
        format!(
            "bundle {:?} has invalid version {:?}: {e}",
            b.name, p.version
        )
    })?;
    let release = match p.release.as_deref() {
        None | Some("") => Vec::new(),
        Some(r) => r.split('.').map(str::to_string).collect(),
    };
    Ok((v, release))
}

/// Version first, then release (no release sorts before any release; identifiers compare as
/// semver pre-release identifiers).
fn compare_version_release(
    a: &(semver::Version, Vec<String>),
    b: &(semver::Version, Vec<String>),
) -> Ordering {
    crate::grammar::semver_range::compare(&a.0, &b.0).then_with(|| {
        match (a.1.is_empty(), b.1.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => {
                for (x, y) in a.1.iter().zip(&b.1) {
                    let o = match (x.parse::<u64>(), y.parse::<u64>()) {
                        (Ok(x), Ok(y)) => x.cmp(&y),
                        (Ok(_), Err(_)) => Ordering::Less,
                        (Err(_), Ok(_)) => Ordering::Greater,
                        (Err(_), Err(_)) => x.cmp(y),
                    };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.1.len().cmp(&b.1.len())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::declcfg::{Channel, Package, SCHEMA_BUNDLE};
    use crate::catalog::property::Property;

    fn bundle(v: &str) -> Bundle {
        Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: format!("foo.v{v}"),
            package: "foo".into(),
            image: format!("quay.io/x/foo:{v}"),
            properties: vec![Property::package("foo", v)],
            ..Default::default()
        }
    }

    fn template(entries: Vec<Value>, subs: Value) -> Value {
        serde_json::json!({"schema": "olm.template.substitutes", "entries": entries, "substitutions": subs})
    }

    fn base_entries() -> Vec<Value> {
        let pkg = Package {
            schema: "olm.package".into(),
            name: "foo".into(),
            default_channel: "stable".into(),
            ..Default::default()
        };
        let ch = Channel {
            schema: "olm.channel".into(),
            name: "stable".into(),
            package: "foo".into(),
            entries: vec![
                ChannelEntry {
                    name: "foo.v1.0.0".into(),
                    ..Default::default()
                },
                ChannelEntry {
                    name: "foo.v1.1.0".into(),
                    replaces: "foo.v1.0.0".into(),
                    skip_range: "<1.1.0".into(),
                    ..Default::default()
                },
                ChannelEntry {
                    name: "foo.v1.2.0".into(),
                    replaces: "foo.v1.1.0".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let mut v = vec![
            serde_json::to_value(&pkg).unwrap(),
            serde_json::to_value(&ch).unwrap(),
        ];
        for b in ["1.0.0", "1.1.0", "1.2.0"] {
            v.push(serde_json::to_value(bundle(b)).unwrap());
        }
        v
    }

    fn resolver() -> BundleResolver {
        let mut r = BundleResolver::default();
        let b = bundle("1.1.1");
        r.existing.insert(b.image.clone(), b);
        r
    }

    #[test]
    fn substitute_takes_over_the_base_edges() {
        let p = Path::new("t.yaml");
        let t = template(
            base_entries(),
            serde_json::json!([{"name": "quay.io/x/foo:1.1.1", "base": "foo.v1.1.0"}]),
        );
        let cfg = render_substitutes(p, &t, &resolver()).unwrap();
        let e = &cfg.channels[0].entries;
        assert_eq!(e.len(), 4);
        assert_eq!((e[1].replaces.as_str(), e[1].skip_range.as_str()), ("", ""));
        assert_eq!(e[2].replaces, "foo.v1.1.1");
        assert_eq!(e[2].skips, vec!["foo.v1.1.0".to_string()]);
        assert_eq!(e[3].name, "foo.v1.1.1");
        assert_eq!(e[3].replaces, "foo.v1.0.0");
        assert_eq!(e[3].skips, vec!["foo.v1.1.0".to_string()]);
        assert_eq!(e[3].skip_range, "<1.1.0");
        assert_eq!(cfg.bundles.len(), 4);
    }

    #[test]
    fn substitution_errors_name_the_pair() {
        let p = Path::new("t.yaml");
        let cases = [
            (
                serde_json::json!([{"name": "", "base": "foo.v1.1.0"}]),
                "substitution name cannot be empty",
            ),
            (
                serde_json::json!([{"name": "x", "base": ""}]),
                "substitution base cannot be empty",
            ),
            (
                serde_json::json!([{"name": "quay.io/x/foo:1.1.1", "base": "foo.v9"}]),
                "base bundle \"foo.v9\" does not exist in catalog",
            ),
            (
                serde_json::json!([{"name": "quay.io/x/foo:1.1.1", "base": "foo.v1.2.0"}]),
                "is not less than substitute bundle",
            ),
        ];
        for (subs, want) in cases {
            let e =
                render_substitutes(p, &template(base_entries(), subs), &resolver()).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            assert!(
                e.to_string()
                    .contains("render: error processing substitution"),
                "{e}"
            );
        }
        let e = render_substitutes(p, &serde_json::json!({"schema": "olm.semver"}), &resolver())
            .unwrap_err();
        assert!(e.to_string().contains("template has unknown schema"), "{e}");
    }
}
