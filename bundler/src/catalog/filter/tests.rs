//! The filter's rules on a small catalog whose answers can be read off by hand; the real
//! catalogs are in `tests/catalog_filter.rs`.

use std::path::Path;

use super::*;
use crate::catalog::load::load_bytes;
use crate::grammar::mm_semver::LooseVersion;

/// `p`: stable 1.0.0 <- 1.1.0 <- 1.2.0 <- 2.0.0 (skipRange >=1.0.0 <2.0.0); fast 1.2.0 <-
/// 2.0.0 <- 2.1.0-rc.1; old 1.0.0 <- 1.1.0; deprecations of bundle 1.0.0, channel old and
/// the package. `q`: one bundle. `r`: a skipRange-heavy stable channel.
fn catalog() -> DeclarativeConfig {
    let mut s = String::new();
    let pkg = |s: &mut String, name: &str, default: &str| {
        s.push_str(&format!(
            "{{\"schema\":\"olm.package\",\"name\":\"{name}\",\"defaultChannel\":\"{default}\"}}\n"
        ))
    };
    let channel = |s: &mut String, pkg: &str, name: &str, entries: &str| {
        s.push_str(&format!(
            "{{\"schema\":\"olm.channel\",\"package\":\"{pkg}\",\"name\":\"{name}\",\"entries\":{entries}}}\n"
        ))
    };
    let bundle = |s: &mut String, pkg: &str, v: &str| {
        s.push_str(&format!(
            "{{\"schema\":\"olm.bundle\",\"package\":\"{pkg}\",\"name\":\"{pkg}.v{v}\",\"image\":\"quay.io/x/{pkg}:{v}\",\"properties\":[{{\"type\":\"olm.package\",\"value\":{{\"packageName\":\"{pkg}\",\"version\":\"{v}\"}}}}]}}\n"
        ))
    };
    pkg(&mut s, "p", "stable");
    channel(
        &mut s,
        "p",
        "stable",
        r#"[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0"},{"name":"p.v2.0.0","replaces":"p.v1.2.0","skipRange":">=1.0.0 <2.0.0"}]"#,
    );
    channel(
        &mut s,
        "p",
        "fast",
        r#"[{"name":"p.v1.2.0"},{"name":"p.v2.0.0","replaces":"p.v1.2.0"},{"name":"p.v2.1.0-rc.1","replaces":"p.v2.0.0"}]"#,
    );
    channel(
        &mut s,
        "p",
        "old",
        r#"[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}]"#,
    );
    for v in ["1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0-rc.1"] {
        bundle(&mut s, "p", v);
    }
    s.push_str(r#"{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1.0.0"},"message":"gone"},{"reference":{"schema":"olm.channel","name":"old"},"message":"old"},{"reference":{"schema":"olm.package"},"message":"pkg"}]}"#);
    s.push('\n');
    pkg(&mut s, "q", "alpha");
    channel(&mut s, "q", "alpha", r#"[{"name":"q.v0.1.0"}]"#);
    bundle(&mut s, "q", "0.1.0");
    pkg(&mut s, "r", "stable");
    channel(
        &mut s,
        "r",
        "stable",
        r#"[{"name":"r.v1.0.0"},{"name":"r.v1.1.0","replaces":"r.v1.0.0"},{"name":"r.v1.2.0","replaces":"r.v1.1.0","skipRange":"<1.2.0"},{"name":"r.v1.3.0","replaces":"r.v1.2.0"},{"name":"r.v1.4.0","replaces":"r.v1.3.0","skipRange":">=1.1.0 <1.4.0"}]"#,
    );
    for v in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"] {
        bundle(&mut s, "r", v);
    }
    load_bytes(Path::new("c.json"), s.as_bytes()).unwrap()
}

fn range(min: Option<&str>, max: Option<&str>) -> Bounds {
    let p = |s: Option<&str>| s.map(|s| LooseVersion::parse(s).unwrap());
    Bounds::new(p(min), p(max)).unwrap()
}

fn package(name: &str, select: Select, channels: &[&str]) -> PackageFilter {
    PackageFilter {
        name: name.into(),
        default_channel: None,
        select,
        channels: channels
            .iter()
            .map(|c| ChannelFilter {
                name: c.to_string(),
                range: None,
            })
            .collect(),
    }
}

fn run(full: bool, packages: Vec<PackageFilter>) -> Result<DeclarativeConfig, FilterError> {
    filter(catalog(), &FilterSpec::new(full, packages).unwrap())
}

/// `package/channel: entries` for every channel, and the bundles, sorted.
fn shape(cfg: &DeclarativeConfig) -> (Vec<String>, Vec<String>) {
    let mut channels: Vec<String> = cfg
        .channels
        .iter()
        .map(|c| {
            let entries: Vec<&str> = c.entries.iter().map(|e| e.name.as_str()).collect();
            format!("{}/{}: {}", c.package, c.name, entries.join(" "))
        })
        .collect();
    channels.sort();
    let bundles = cfg.bundles.iter().map(|b| b.name.clone()).collect();
    (channels, bundles)
}

#[test]
fn no_package_keeps_the_head_of_every_channel() {
    let out = run(false, vec![]).unwrap();
    let (channels, bundles) = shape(&out);
    assert_eq!(
        channels,
        [
            "p/fast: p.v2.1.0-rc.1",
            "p/old: p.v1.1.0",
            "p/stable: p.v2.0.0",
            "q/alpha: q.v0.1.0",
            "r/stable: r.v1.4.0"
        ]
    );
    assert_eq!(
        bundles,
        [
            "p.v1.1.0",
            "p.v2.0.0",
            "p.v2.1.0-rc.1",
            "q.v0.1.0",
            "r.v1.4.0"
        ]
    );
    // The deprecated bundle went, so its deprecation went too.
    let refs: Vec<&str> = out.deprecations[0]
        .entries
        .iter()
        .map(|e| e.reference.schema.as_str())
        .collect();
    assert_eq!(refs, ["olm.channel", "olm.package"]);
}

#[test]
fn full_without_packages_is_the_catalog() {
    assert_eq!(run(true, vec![]).unwrap(), catalog());
}

#[test]
fn a_package_alone_keeps_its_channel_heads_and_nothing_else() {
    let (channels, bundles) = shape(&run(false, vec![package("p", Select::Heads, &[])]).unwrap());
    assert_eq!(
        channels,
        [
            "p/fast: p.v2.1.0-rc.1",
            "p/old: p.v1.1.0",
            "p/stable: p.v2.0.0"
        ]
    );
    assert_eq!(bundles, ["p.v1.1.0", "p.v2.0.0", "p.v2.1.0-rc.1"]);
    let full = run(true, vec![package("p", Select::Heads, &["fast", "stable"])]).unwrap();
    assert_eq!(full.bundles.len(), 5);
    assert_eq!(full.channels.len(), 2);
}

#[test]
fn a_package_range_cuts_each_channel_and_drops_the_emptied_ones() {
    let r = Select::Range(range(Some("1.1.0"), Some("1.2.0")));
    let (channels, _) = shape(&run(false, vec![package("p", r, &[])]).unwrap());
    assert_eq!(
        channels,
        [
            "p/fast: p.v1.2.0",
            "p/old: p.v1.1.0",
            "p/stable: p.v1.1.0 p.v1.2.0"
        ]
    );
    // 2.0.0 and up: old has none (dropped), the prerelease is not matched.
    let r = Select::Range(range(Some("2.0.0"), None));
    let (channels, _) = shape(&run(false, vec![package("p", r, &[])]).unwrap());
    assert_eq!(channels, ["p/fast: p.v2.0.0", "p/stable: p.v2.0.0"]);
    let r = Select::Range(range(Some("2.0.0-0"), None));
    let (channels, _) = shape(&run(false, vec![package("p", r, &["fast", "stable"])]).unwrap());
    assert_eq!(
        channels,
        ["p/fast: p.v2.0.0 p.v2.1.0-rc.1", "p/stable: p.v2.0.0"]
    );
}

#[test]
fn a_range_that_empties_the_default_channel_is_an_error() {
    let r = Select::Range(range(None, Some("0.5")));
    let e = run(false, vec![package("p", r, &[])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "package \"p\" channel \"stable\" has version range \" <=0.5\" that results in an empty channel"
    );
}

#[test]
fn the_same_min_and_max_keep_that_one_bundle() {
    let r = Select::Range(range(Some("1.1.0"), Some("1.1.0")));
    let (channels, bundles) = shape(&run(false, vec![package("p", r, &[])]).unwrap());
    assert_eq!(channels, ["p/old: p.v1.1.0", "p/stable: p.v1.1.0"]);
    assert_eq!(bundles, ["p.v1.1.0"]);
    let r = Select::Range(range(Some("9.0.0"), Some("9.0.0")));
    let e = run(false, vec![package("p", r, &[])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "error finding specific bundle: specific version 9.0.0 not found in bundles"
    );
}

#[test]
fn the_default_channel_stays_or_is_named_anew() {
    let e = run(false, vec![package("p", Select::Heads, &["fast"])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid default channel configuration for package \"p\": the default channel \"stable\" was filtered out, a new default channel must be configured for this package"
    );
    let mut p = package("p", Select::Heads, &["fast"]);
    p.default_channel = Some("fast".into());
    let out = run(false, vec![p]).unwrap();
    assert_eq!(out.packages[0].default_channel, "fast");
    assert_eq!(shape(&out).0, ["p/fast: p.v2.1.0-rc.1"]);
    // The channel deprecation of `old` went with the channel; the bundle one with the bundle.
    assert_eq!(out.deprecations[0].entries.len(), 1);
    let mut p = package("p", Select::Heads, &["fast"]);
    p.default_channel = Some("old".into());
    assert_eq!(
        run(false, vec![p]).unwrap_err().to_string(),
        "invalid default channel configuration for package \"p\": specified default channel override \"old\" does not exist in the filtered output"
    );
}

#[test]
fn names_that_select_nothing_are_errors() {
    let e = run(false, vec![package("nope", Select::Heads, &[])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "package \"nope\" is not in the catalog (packages: p, q, r)"
    );
    let e = run(
        false,
        vec![package("p", Select::Heads, &["stable", "beta"])],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "channel \"beta\" is not in package \"p\" (channels: fast, old, stable)"
    );
}

#[test]
fn upgrade_from_keeps_the_walk_and_keeps_one_chain() {
    let from = |v: &str| Select::UpgradeFrom(Version::parse(v).unwrap());
    // 1.0.0 -> 2.0.0 by skipRange; fast offers nothing from 1.0.0 (dropped); old -> 1.1.0.
    let (channels, bundles) = shape(&run(false, vec![package("p", from("1.0.0"), &[])]).unwrap());
    assert_eq!(channels, ["p/old: p.v1.1.0", "p/stable: p.v2.0.0"]);
    assert_eq!(bundles, ["p.v1.1.0", "p.v2.0.0"]);
    // r: 1.0.0 -> 1.2.0 (skipRange, nearest the head) -> 1.4.0 (skipRange over 1.3.0): 1.4.0
    // now replaces 1.2.0, or 1.2.0 would be a second head.
    let out = run(false, vec![package("r", from("1.0.0"), &[])]).unwrap();
    let entries: Vec<(&str, &str)> = out.channels[0]
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.replaces.as_str()))
        .collect();
    assert_eq!(
        entries,
        [("r.v1.2.0", "r.v1.1.0"), ("r.v1.4.0", "r.v1.2.0")]
    );
    // From the head: the head.
    let (channels, _) = shape(&run(false, vec![package("r", from("1.4.0"), &[])]).unwrap());
    assert_eq!(channels, ["r/stable: r.v1.4.0"]);
    // The default channel with no way up is an error naming it.
    let e = run(false, vec![package("p", from("2.1.0-rc.1"), &[])]).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "package \"p\" channel \"stable\": p.v2.1.0-rc.1 (2.1.0-rc.1) has no update"
        ),
        "{e}"
    );
    let e = run(false, vec![package("p", from("7.0.0"), &[])]).unwrap_err();
    assert!(
        e.to_string()
            .contains("no bundle of package \"p\" is named or versioned \"7.0.0\""),
        "{e}"
    );
}

#[test]
fn channel_ranges_apply_to_their_channel_only() {
    let mut p = package("p", Select::Heads, &["stable", "old"]);
    p.channels[0].range = Some(range(Some("1.2.0"), None));
    let (channels, _) = shape(&run(false, vec![p]).unwrap());
    assert_eq!(channels, ["p/old: p.v1.1.0", "p/stable: p.v1.2.0 p.v2.0.0"]);
}

#[test]
fn pruning_while_reading_changes_nothing_but_memory() {
    let spec = FilterSpec::new(false, vec![package("q", Select::Heads, &[])]).unwrap();
    let mut pruned = catalog();
    prune_unselected(&mut pruned, &spec);
    assert_eq!(pruned.bundles.len(), 1);
    assert_eq!(
        pruned.packages.len(),
        3,
        "names stay, for the errors that list them"
    );
    assert_eq!(
        filter(pruned, &spec).unwrap(),
        filter(catalog(), &spec).unwrap()
    );
    let wrong = FilterSpec::new(false, vec![package("nope", Select::Heads, &[])]).unwrap();
    let mut pruned = catalog();
    prune_unselected(&mut pruned, &wrong);
    assert_eq!(
        filter(pruned, &wrong).unwrap_err().to_string(),
        "package \"nope\" is not in the catalog (packages: p, q, r)"
    );
}

/// Filters with an ImageSetConfiguration's policy, collecting the warnings.
fn run_ignoring(
    packages: Vec<PackageFilter>,
) -> (Result<DeclarativeConfig, FilterError>, Vec<String>) {
    let spec = FilterSpec::new(false, packages)
        .unwrap()
        .with_unknown_names(UnknownNames::Ignore);
    let mut warnings = Vec::new();
    let out = filter_reporting(catalog(), &spec, &mut |w| warnings.push(w));
    (out, warnings)
}

#[test]
fn unknown_names_of_a_configuration_are_left_out_with_a_warning_each() {
    let (out, warnings) = run_ignoring(vec![package("p", Select::Heads, &["stable", "beta"])]);
    assert_eq!(
        out.unwrap(),
        run(false, vec![package("p", Select::Heads, &["stable"])]).unwrap()
    );
    assert_eq!(
        warnings,
        [
            "channel \"beta\" is not in package \"p\" (channels: fast, old, stable): ignored, as oc-mirror does"
        ]
    );
    let (out, warnings) = run_ignoring(vec![
        package("nope", Select::Heads, &[]),
        package("q", Select::Heads, &[]),
    ]);
    assert_eq!(
        out.unwrap(),
        run(false, vec![package("q", Select::Heads, &[])]).unwrap()
    );
    assert_eq!(
        warnings,
        ["package \"nope\" is not in the catalog (packages: p, q, r): ignored, as oc-mirror does"]
    );
}

#[test]
fn unknown_names_that_leave_nothing_are_errors_either_way() {
    let (out, warnings) = run_ignoring(vec![package("p", Select::Heads, &["beta", "gamma"])]);
    assert_eq!(
        out.unwrap_err().to_string(),
        "channel \"beta\" is not in package \"p\" (channels: fast, old, stable)"
    );
    assert!(warnings.is_empty());
    let (out, _) = run_ignoring(vec![
        package("nope", Select::Heads, &[]),
        package("none", Select::Heads, &[]),
    ]);
    assert_eq!(
        out.unwrap_err().to_string(),
        "no package listed is in the catalog (none, nope; packages: p, q, r)"
    );
}

#[test]
fn where_oc_mirror_writes_an_invalid_catalog_the_error_says_so() {
    // A pin of a version a listed channel lacks: oc-mirror writes `fast` with no entry.
    let pin = Select::Range(range(Some("1.1.0"), Some("1.1.0")));
    let e = run(false, vec![package("p", pin.clone(), &["stable", "fast"])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "package \"p\" channel \"fast\" has version range \">=1.1.0 <=1.1.0\" that results in an empty channel; oc-mirror would write an invalid catalog here (it keeps the channel with no entry, which opm rejects)"
    );
    // A range that empties the channel defaultChannel names: oc-mirror drops the channel and
    // keeps the name.
    let mut p = package(
        "p",
        Select::Range(range(None, Some("1.1.0"))),
        &["stable", "fast"],
    );
    p.default_channel = Some("fast".into());
    let e = run(false, vec![p]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "package \"p\" channel \"fast\" has version range \" <=1.1.0\" that results in an empty channel; oc-mirror would write an invalid catalog here (it drops the channel and keeps it as the package's defaultChannel, which opm rejects)"
    );
    // The catalog's own default emptied by a range: oc-mirror refuses it too, in these words.
    let r = Select::Range(range(None, Some("0.5")));
    assert!(
        !run(false, vec![package("p", r, &[])])
            .unwrap_err()
            .to_string()
            .contains("oc-mirror")
    );
}
