//! `olm catalog filter` on the real catalogs of ../shared/data: every selection oc-mirror v2
//! knows, `--upgrade-from`, the ImageSetConfiguration file, and the output directory.
//!
//! The expected bundles were worked out from the catalogs' data by reading oc-mirror's filter
//! (sherine-k/catalog-filter `mirror-config/v1alpha1`: head of each channel; a range walked
//! along the head's `replaces` chain, semver only, prereleases outside ranges that name
//! none; see each test) and are listed by name, or, for channel heads, computed here the
//! simple way (the entry no other entry replaces or skips). Every result must also pass
//! the catalog validator.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use olm_bundler::catalog::declcfg::DeclarativeConfig;
use olm_bundler::catalog::filter::{self, FilterFlags, FilterSpec};
use olm_bundler::catalog::{load, validate};

fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_dir());
    if found.is_none() {
        prerequisite::missing(&format!(
            "shared data not found beside {}",
            manifest.display()
        ));
    }
    found
}

const COMMUNITY: &str = "catalogs/community-operators-prod/catalogs/v4.20";
const CERTIFIED: &str = "catalogs/certified-operators/catalogs/v4.20";

fn catalog(rel: &str) -> Option<(PathBuf, DeclarativeConfig)> {
    let dir = shared()?.join(rel);
    let cfg = load::load_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    Some((dir, cfg))
}

/// Filters with the flags and checks the result with the catalog validator.
fn run(cfg: &DeclarativeConfig, flags: FilterFlags) -> Result<DeclarativeConfig, String> {
    let spec = FilterSpec::from_flags(&flags).map_err(|e| e.to_string())?;
    let out = filter::filter(cfg.clone(), &spec).map_err(|e| e.to_string())?;
    let report = validate::validate(&out);
    assert!(!report.has_errors(), "{}", report.to_text());
    Ok(out)
}

fn flags(package: &str) -> FilterFlags {
    FilterFlags {
        packages: vec![package.to_string()],
        ..Default::default()
    }
}

fn bundles(cfg: &DeclarativeConfig) -> BTreeSet<String> {
    cfg.bundles.iter().map(|b| b.name.clone()).collect()
}

fn entries(cfg: &DeclarativeConfig, package: &str, channel: &str) -> Vec<String> {
    let ch = cfg
        .channels
        .iter()
        .find(|c| c.package == package && c.name == channel)
        .unwrap_or_else(|| panic!("no channel {package}/{channel}"));
    ch.entries.iter().map(|e| e.name.clone()).collect()
}

fn channels(cfg: &DeclarativeConfig, package: &str) -> BTreeSet<String> {
    cfg.channels
        .iter()
        .filter(|c| c.package == package)
        .map(|c| c.name.clone())
        .collect()
}

fn names(prefix: &str, versions: &[&str]) -> BTreeSet<String> {
    versions.iter().map(|v| format!("{prefix}.v{v}")).collect()
}

/// Each channel's head, the simple way: the entry that no entry of the channel replaces or
/// skips.
fn heads(cfg: &DeclarativeConfig, package: Option<&str>) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for c in &cfg.channels {
        if package.is_some_and(|p| p != c.package) {
            continue;
        }
        let named: BTreeSet<&str> = c
            .entries
            .iter()
            .flat_map(|e| {
                std::iter::once(e.replaces.as_str()).chain(e.skips.iter().map(String::as_str))
            })
            .collect();
        let hs: Vec<&str> = c
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| !named.contains(n))
            .collect();
        assert_eq!(hs.len(), 1, "{}/{}", c.package, c.name);
        out.insert((format!("{}/{}", c.package, c.name), hs[0].to_string()));
    }
    out
}

fn kept_heads(cfg: &DeclarativeConfig) -> BTreeSet<(String, String)> {
    cfg.channels
        .iter()
        .map(|c| {
            assert_eq!(
                c.entries.len(),
                1,
                "{}/{} keeps one entry",
                c.package,
                c.name
            );
            (
                format!("{}/{}", c.package, c.name),
                c.entries[0].name.clone(),
            )
        })
        .collect()
}

#[test]
fn no_package_keeps_the_head_of_every_channel_of_every_package() {
    for rel in [COMMUNITY, CERTIFIED] {
        let Some((_, cfg)) = catalog(rel) else { return };
        let out = run(&cfg, FilterFlags::default()).unwrap();
        assert_eq!(kept_heads(&out), heads(&cfg, None), "{rel}");
        let want: BTreeSet<String> = heads(&cfg, None).into_iter().map(|(_, h)| h).collect();
        assert_eq!(bundles(&out), want, "{rel}");
        assert_eq!(out.packages.len(), cfg.packages.len());
    }
}

#[test]
fn full_without_packages_is_the_whole_catalog() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    let out = run(
        &cfg,
        FilterFlags {
            full: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out, cfg);
}

#[test]
fn a_package_alone_keeps_the_head_of_each_of_its_channels() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    let out = run(&cfg, flags("sailoperator")).unwrap();
    assert_eq!(kept_heads(&out), heads(&cfg, Some("sailoperator")));
    // By hand: ten channels, nine bundles (1.30.3 heads stable and stable-1.30).
    let s = "sailoperator";
    let mut want = names(
        s,
        &[
            "1.0.0", "1.25.2", "1.26.3", "1.27.3", "1.28.3", "1.29.2", "1.30.3", "0.1.0",
        ],
    );
    want.insert("sailoperator.v1.31.0-nightly-2026-08-22".into());
    assert_eq!(bundles(&out), want);
    assert_eq!(out.packages.len(), 1);
    assert_eq!(out.packages[0].default_channel, "stable");
}

#[test]
fn a_package_range_is_applied_in_each_channel_by_semver_not_by_skip_range() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    // kube-green: one channel, a plain replaces chain.
    let mut f = flags("kube-green");
    f.min_version = Some("0.5.0".into());
    f.max_version = Some("0.6.0".into());
    let out = run(&cfg, f).unwrap();
    assert_eq!(
        bundles(&out),
        names("kube-green", &["0.5.0", "0.5.1", "0.5.2", "0.6.0"])
    );
    // sailoperator: every stable entry has a skipRange (>=1.0.0 <itself) that the filter does
    // not consult: 1.28.0 to 1.29.1 keeps all six. Channels with nothing in range go; in
    // stable-1.29 the head 1.29.2 is above the range and goes.
    let mut f = flags("sailoperator");
    f.min_version = Some("1.28.0".into());
    f.max_version = Some("1.29.1".into());
    let out = run(&cfg, f).unwrap();
    let s = "sailoperator";
    assert_eq!(
        channels(&out, s),
        BTreeSet::from(["stable".into(), "stable-1.28".into(), "stable-1.29".into()])
    );
    let six: Vec<String> = names(
        s,
        &["1.28.0", "1.28.1", "1.28.2", "1.28.3", "1.29.0", "1.29.1"],
    )
    .into_iter()
    .collect();
    let mut stable = entries(&out, s, "stable");
    stable.sort();
    assert_eq!(stable, six);
    assert_eq!(
        entries(&out, s, "stable-1.29"),
        ["sailoperator.v1.29.0", "sailoperator.v1.29.1"]
    );
    assert_eq!(entries(&out, s, "stable-1.28").len(), 4);
    assert_eq!(bundles(&out), six.into_iter().collect());
}

#[test]
fn a_channel_alone_keeps_its_head() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    let mut f = flags("project-quay");
    f.channels = vec!["stable-3.10".into()];
    f.default_channel = Some("stable-3.10".into());
    let out = run(&cfg, f).unwrap();
    assert_eq!(
        bundles(&out),
        BTreeSet::from(["quay-operator.v3.10.25".to_string()])
    );
    assert_eq!(out.packages[0].default_channel, "stable-3.10");
    // Two channels, the package's default among them: no defaultChannel needed.
    let mut f = flags("project-quay");
    f.channels = vec!["stable-3.17".into(), "stable-3.6".into()];
    let out = run(&cfg, f).unwrap();
    let want = BTreeSet::from([
        "quay-operator.v3.17.4".to_string(),
        "quay-operator.v3.6.2".to_string(),
    ]);
    assert_eq!(bundles(&out), want);
}

#[test]
fn a_channel_range_walks_the_chain_and_its_skips() {
    let isc_dir = tempfile::tempdir().unwrap();
    let Some((_, cfg)) = catalog(CERTIFIED) else {
        return;
    };
    // stable-v1.25: 1.25.9 <- ... <- 1.25.6 <- 1.25.5 by replaces; 1.25.5 skips 1.25.0-1.25.4.
    // 1.25.2..1.25.7: the chain from 1.25.7 down to 1.25.5, and the skips in range.
    let dir = shared().unwrap().join(CERTIFIED);
    let isc = write_isc(
        isc_dir.path(),
        "cnpg",
        &format!(
            "  - catalog: {}\n    packages:\n    - name: cloud-native-postgresql\n      defaultChannel: stable-v1.25\n      channels:\n      - name: stable-v1.25\n        minVersion: 1.25.2\n        maxVersion: 1.25.7\n",
            dir.display()
        ),
    );
    let spec = spec_of(&isc);
    let out = filter::filter(cfg, &spec).unwrap();
    assert!(!validate::validate(&out).has_errors());
    let p = "cloud-native-postgresql";
    assert_eq!(
        bundles(&out),
        names(
            p,
            &["1.25.2", "1.25.3", "1.25.4", "1.25.5", "1.25.6", "1.25.7"]
        )
    );
    // The entries keep their edges as written: 1.25.2 still skips 1.25.0 and 1.25.1.
    let ch = out
        .channels
        .iter()
        .find(|c| c.name == "stable-v1.25")
        .unwrap();
    assert_eq!(ch.entries[0].skips.len(), 2);
}

#[test]
fn full_with_channels_keeps_every_bundle_of_those_channels() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    let mut f = flags("project-quay");
    f.channels = vec!["stable-3.16".into(), "stable-3.17".into()];
    f.full = true;
    let out = run(&cfg, f).unwrap();
    let mut want = names(
        "quay-operator",
        &["3.16.0", "3.16.1", "3.16.2", "3.16.3", "3.16.4", "3.16.5"],
    );
    want.extend(names(
        "quay-operator",
        &["3.17.0", "3.17.1", "3.17.2", "3.17.3", "3.17.4"],
    ));
    assert_eq!(bundles(&out), want);
}

#[test]
fn package_range_with_channels_applies_to_those_channels() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    let mut f = flags("project-quay");
    f.channels = vec!["stable-3.8".into(), "stable-3.9".into()];
    f.default_channel = Some("stable-3.9".into());
    f.min_version = Some("3.8.10".into());
    f.max_version = Some("3.9.2".into());
    let out = run(&cfg, f).unwrap();
    // stable-3.8 has no 3.8.9: 3.8.10 to 3.8.13; stable-3.9: 3.9.0 to 3.9.2.
    let mut want = names("quay-operator", &["3.8.10", "3.8.11", "3.8.12", "3.8.13"]);
    want.extend(names("quay-operator", &["3.9.0", "3.9.1", "3.9.2"]));
    assert_eq!(bundles(&out), want);
}

#[test]
fn prereleases_never_match_a_range_that_names_none() {
    let Some((_, cfg)) = catalog(CERTIFIED) else {
        return;
    };
    // stable-v1: 0.9.3 <- 1.0.0 <- 1.0.1 <- 1.1.0-1 <- 1.1.1-1 <- 1.2.0-3. From 1.0.0 up, only
    // 1.0.0 and 1.0.1 match: the prerelease head is not kept.
    let p = "openshift-fusion-access-operator";
    let mut f = flags(p);
    f.min_version = Some("1.0.0".into());
    let out = run(&cfg, f.clone()).unwrap();
    assert_eq!(bundles(&out), names(p, &["1.0.0", "1.0.1"]));
    // A bound with a prerelease lets prereleases in.
    f.min_version = Some("1.0.0-0".into());
    let out = run(&cfg, f).unwrap();
    assert_eq!(
        bundles(&out),
        names(p, &["1.0.0", "1.0.1", "1.1.0-1", "1.1.1-1", "1.2.0-3"])
    );
}

#[test]
fn the_same_min_and_max_keep_exactly_that_version() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    let mut f = flags("kube-green");
    f.min_version = Some("0.5.1".into());
    f.max_version = Some("0.5.1".into());
    let out = run(&cfg, f).unwrap();
    assert_eq!(bundles(&out), names("kube-green", &["0.5.1"]));
}

#[test]
fn the_errors_oc_mirror_gives() {
    let Some((_, cfg)) = catalog(COMMUNITY) else {
        return;
    };
    // A non-default channel without defaultChannel.
    let mut f = flags("project-quay");
    f.channels = vec!["stable-3.10".into()];
    assert_eq!(
        run(&cfg, f).unwrap_err(),
        "invalid default channel configuration for package \"project-quay\": the default channel \"stable-3.17\" was filtered out, a new default channel must be configured for this package"
    );
    // A range that empties the default channel.
    let mut f = flags("project-quay");
    f.min_version = Some("3.8.0".into());
    f.max_version = Some("3.9.0".into());
    assert_eq!(
        run(&cfg, f).unwrap_err(),
        "package \"project-quay\" channel \"stable-3.17\" has version range \">=3.8.0 <=3.9.0\" that results in an empty channel"
    );
    // full with a range.
    let mut f = flags("project-quay");
    f.full = true;
    f.min_version = Some("3.8.0".into());
    assert_eq!(
        run(&cfg, f).unwrap_err(),
        "Full: true cannot be mixed with versionRange"
    );
    // Names that select nothing.
    let mut f = flags("project-quay");
    f.channels = vec!["stable-9".into()];
    assert!(run(&cfg, f).unwrap_err().starts_with(
        "channel \"stable-9\" is not in package \"project-quay\" (channels: stable-3.10, "
    ));
    assert!(
        run(&cfg, flags("nope"))
            .unwrap_err()
            .starts_with("package \"nope\" is not in the catalog (packages: kube-green, ")
    );
}

#[test]
fn upgrade_from_keeps_only_what_olm_walks() {
    let Some((_, cfg)) = catalog(CERTIFIED) else {
        return;
    };
    // fast: 1.25.0 is skipped by name by 1.28.0 (and by the 1.25.1-1.27.1 entries, which
    // 1.28.0 skips, so OLM never offers them); then replaces up to 1.30.0.
    let p = "cloud-native-postgresql";
    let mut f = flags(p);
    f.channels = vec!["fast".into()];
    f.upgrade_from = Some("1.25.0".into());
    let out = run(&cfg, f).unwrap();
    assert_eq!(
        bundles(&out),
        names(
            p,
            &[
                "1.28.0", "1.28.1", "1.28.2", "1.29.0", "1.29.1", "1.29.2", "1.30.0"
            ]
        )
    );
    // All channels: those with no way up from 1.25.0 go (candidate, stable-v1.28..v1.30),
    // the others keep their walk: stable 1.28.0-1.29.0, stable-v1.25 1.25.5-1.25.9 (1.25.5
    // skips 1.25.0), stable-v1.26 its head (skipRange), stable-v1.27 1.27.2 (skipRange) up.
    let mut f = flags(p);
    f.upgrade_from = Some("1.25.0".into());
    let out = run(&cfg, f).unwrap();
    assert_eq!(
        channels(&out, p),
        [
            "fast",
            "stable",
            "stable-v1.25",
            "stable-v1.26",
            "stable-v1.27"
        ]
        .into_iter()
        .map(String::from)
        .collect()
    );
    assert_eq!(entries(&out, p, "stable").len(), 4);
    assert_eq!(
        entries(&out, p, "stable-v1.26"),
        ["cloud-native-postgresql.v1.26.3"]
    );
    assert_eq!(
        entries(&out, p, "stable-v1.27"),
        [
            "cloud-native-postgresql.v1.27.2",
            "cloud-native-postgresql.v1.27.3",
            "cloud-native-postgresql.v1.27.4"
        ]
    );
    assert_eq!(entries(&out, p, "stable-v1.25").len(), 5);
    // sailoperator stable: every entry's skipRange reaches back to 1.0.0, so from 1.25.0
    // OLM goes straight to the head.
    let mut f = flags("sailoperator");
    f.channels = vec!["stable".into()];
    f.upgrade_from = Some("1.25.0".into());
    let (_, community) = catalog(COMMUNITY).unwrap();
    let out = run(&community, f).unwrap();
    assert_eq!(bundles(&out), names("sailoperator", &["1.30.3"]));
}

// ---- the command and the ImageSetConfiguration file ----

fn olm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    let r = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    eprintln!("$ olm {}\n{}{}", args.join(" "), r.1, r.2);
    r
}

/// An ImageSetConfiguration with `operators` (YAML list items, two-space indented).
/// Writes an ImageSetConfiguration into `dir` (each test its own: tests run in parallel).
fn write_isc(dir: &Path, name: &str, operators: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    let text = format!(
        "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  platform:\n    channels:\n    - name: stable-4.20\n  operators:\n{operators}  blockedImages:\n  - name: alpine\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn spec_of(isc: &Path) -> FilterSpec {
    filter::isc::ImageSetConfig::load(isc).unwrap().catalogs[0]
        .spec
        .clone()
}

fn read_back(dir: &Path) -> DeclarativeConfig {
    let cfg = load::load_dir(dir).unwrap();
    assert!(!validate::validate(&cfg).has_errors());
    cfg
}

#[test]
fn the_command_writes_a_catalog_directory() {
    let Some(data) = shared() else { return };
    let src = data.join(COMMUNITY);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("filtered");
    let d = dir.to_str().unwrap();
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        src.to_str().unwrap(),
        "-o",
        d,
        "--package",
        "kube-green",
        "--package",
        "rabbitmq-cluster-operator",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("2 package(s), 2 channel(s), 2 bundle(s) in 2 file(s)"),
        "{err}"
    );
    assert!(dir.join("kube-green/catalog.json").is_file());
    let first = std::fs::read(dir.join("kube-green/catalog.json")).unwrap();
    assert_eq!(
        bundles(&read_back(&dir)),
        BTreeSet::from([
            "kube-green.v0.7.1".to_string(),
            "rabbitmq-cluster-operator.v2.22.3".to_string()
        ])
    );
    // Same input, same bytes; YAML on request; the directory is replaced as a whole.
    let (code, _, _) = olm(&[
        "catalog",
        "filter",
        src.to_str().unwrap(),
        "-o",
        d,
        "--package",
        "kube-green",
        "--output-format",
        "yaml",
    ]);
    assert_eq!(code, 0);
    assert!(!dir.join("rabbitmq-cluster-operator").exists());
    assert!(!dir.join("kube-green/catalog.json").exists());
    let yaml = std::fs::read_to_string(dir.join("kube-green/catalog.yaml")).unwrap();
    assert!(yaml.starts_with("---\n"));
    let (code, _, _) = olm(&[
        "catalog",
        "filter",
        src.to_str().unwrap(),
        "-o",
        d,
        "--package",
        "kube-green",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read(dir.join("kube-green/catalog.json")).unwrap(),
        first
    );
    // Validated by the command users run too.
    let (code, out_text, _) = olm(&["catalog", "validate", d]);
    assert_eq!(code, 0, "{out_text}");
    let leftovers: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary directory is left beside the output"
    );
}

#[test]
fn a_failed_filter_leaves_the_output_as_it_was() {
    let Some(data) = shared() else { return };
    let src = data.join(COMMUNITY);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("filtered");
    let d = dir.to_str().unwrap();
    let (code, _, _) = olm(&[
        "catalog",
        "filter",
        src.to_str().unwrap(),
        "-o",
        d,
        "--package",
        "kube-green",
    ]);
    assert_eq!(code, 0);
    let before = std::fs::read(dir.join("kube-green/catalog.json")).unwrap();
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        src.to_str().unwrap(),
        "-o",
        d,
        "--package",
        "project-quay",
        "--channel",
        "stable-3.10",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("a new default channel must be configured"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.join("kube-green/catalog.json")).unwrap(),
        before
    );
    // A directory of other files is never replaced.
    let other = out.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        src.to_str().unwrap(),
        "-o",
        other.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("notes.txt, which is not a catalog file"),
        "{err}"
    );
    assert!(other.join("notes.txt").exists());
}

#[test]
fn flag_mistakes_are_usage_errors() {
    let Some(data) = shared() else { return };
    let src = data.join(COMMUNITY);
    let out = tempfile::tempdir().unwrap();
    let d = out.path().join("f");
    let (s, d) = (src.to_str().unwrap(), d.to_str().unwrap());
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        d,
        "--package",
        "a",
        "--package",
        "b",
        "--channel",
        "c",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--channel applies to one package, and 2 are given: use --config"),
        "{err}"
    );
    let (code, _, err) = olm(&["catalog", "filter", s, "-o", d, "--min-version", "1.0.0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--min-version needs --package"), "{err}");
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        d,
        "--package",
        "a",
        "--max-version",
        "one",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--max-version \"one\" must respect semantic versioning notation"),
        "{err}"
    );
    let (code, _, _) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        d,
        "--config",
        "x.yaml",
        "--package",
        "a",
    ]);
    assert_eq!(code, 2);
}

#[test]
fn an_image_set_configuration_selects_as_oc_mirror() {
    let isc_dir = tempfile::tempdir().unwrap();
    let Some(data) = shared() else { return };
    let src = data.join(COMMUNITY);
    let s = src.to_str().unwrap();
    let isc = write_isc(
        isc_dir.path(),
        "community",
        &format!(
            "  - catalog: registry.example.com/community:v4.20\n    packages:\n    - name: kube-green\n  - catalog: {s}\n    targetTag: filtered\n    packages:\n    - name: kube-green\n      minVersion: 0.7.0\n    - name: sailoperator\n      defaultChannel: stable-1.29\n      channels:\n      - name: stable-1.29\n        maxVersion: 1.29.1\n      - name: candidates\n"
        ),
    );
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("f");
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        dir.to_str().unwrap(),
        "--config",
        isc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("mirror.platform is accepted as oc-mirror accepts it"),
        "{err}"
    );
    assert!(
        err.contains("mirror.blockedImages applies when images are mirrored"),
        "{err}"
    );
    let got = read_back(&dir);
    let mut want = names("kube-green", &["0.7.0", "0.7.1"]);
    want.extend(names("sailoperator", &["1.29.0", "1.29.1", "0.1.0"]));
    assert_eq!(bundles(&got), want);
    assert_eq!(
        got.packages
            .iter()
            .find(|p| p.name == "sailoperator")
            .unwrap()
            .default_channel,
        "stable-1.29"
    );
    // SOURCE names no entry of a file that lists several.
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        "/nonexistent/catalog",
        "-o",
        dir.to_str().unwrap(),
        "--config",
        isc.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no mirror.operators[] entry is for /nonexistent/catalog"),
        "{err}"
    );
    // Mistakes name the file and the field.
    let bad = write_isc(
        isc_dir.path(),
        "bad",
        "  - catalog: c\n    full: true\n    packages:\n    - name: p\n      maxVersion: 1.0.0\n",
    );
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        dir.to_str().unwrap(),
        "--config",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "{}: mirror.operators[0]: catalog \"c\": Full: true cannot be mixed with versionRange",
            bad.display()
        )),
        "{err}"
    );
}

/// Names the catalog does not have, in an ImageSetConfiguration: oc-mirror's filter keeps the
/// packages and channels listed that exist (sherine-k/catalog-filter
/// `filterByPackageAndChannels`), so each typo is left out with one warning and the result is
/// what the configuration without it selects; `--strict` refuses them. On the command line a
/// typo is an error.
#[test]
fn typos_in_a_configuration_are_left_out_as_oc_mirror_leaves_them() {
    let isc_dir = tempfile::tempdir().unwrap();
    let Some(data) = shared() else { return };
    let src = data.join(COMMUNITY);
    let s = src.to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let filter_with = |isc: &Path, name: &str, strict: bool| {
        let dir = out.path().join(name);
        let mut args = vec![
            "catalog",
            "filter",
            s,
            "-o",
            dir.to_str().unwrap(),
            "--config",
            isc.to_str().unwrap(),
        ];
        if strict {
            args.push("--strict");
        }
        let (code, _, err) = olm(&args);
        (code, err, dir)
    };
    let warnings = |err: &str| {
        err.lines()
            .filter(|l| l.contains("ignored, as oc-mirror does"))
            .count()
    };
    let cases = [
        (
            "channel",
            "    - name: kube-green\n      channels:\n      - name: alpha\n      - name: beta\n",
            "    - name: kube-green\n      channels:\n      - name: alpha\n",
            "channel \"beta\" is not in package \"kube-green\" (channels: alpha)",
        ),
        (
            "package",
            "    - name: kube-green\n    - name: kube-grene\n",
            "    - name: kube-green\n",
            "package \"kube-grene\" is not in the catalog (packages: ",
        ),
    ];
    for (name, typo, fixed, message) in cases {
        let typo = write_isc(
            isc_dir.path(),
            &format!("typo-{name}"),
            &format!("  - catalog: {s}\n    packages:\n{typo}"),
        );
        let fixed = write_isc(
            isc_dir.path(),
            &format!("fixed-{name}"),
            &format!("  - catalog: {s}\n    packages:\n{fixed}"),
        );
        let (code, err, got) = filter_with(&typo, &format!("{name}-typo"), false);
        assert_eq!(code, 0, "{err}");
        assert_eq!(warnings(&err), 1, "{err}");
        assert!(err.contains(&format!("{s}: {message}")), "{err}");
        let (code, err, want) = filter_with(&fixed, &format!("{name}-fixed"), false);
        assert_eq!((code, warnings(&err)), (0, 0), "{err}");
        let (got, want) = (read_back(&got), read_back(&want));
        assert!(!got.bundles.is_empty());
        assert!(
            got.to_json() == want.to_json(),
            "{name}: the typo changes the selection"
        );
        let (code, err, _) = filter_with(&typo, &format!("{name}-strict"), true);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(message) && !err.contains("ignored"), "{err}");
    }
    // Nothing left: an error either way.
    let none = write_isc(
        isc_dir.path(),
        "typo-all",
        &format!("  - catalog: {s}\n    packages:\n    - name: kube-grene\n"),
    );
    let (code, err, _) = filter_with(&none, "none", false);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no package listed is in the catalog (kube-grene; packages: "),
        "{err}"
    );
    // The flags: a typo is an error, and --strict goes with --config only.
    let dir = out.path().join("flags");
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        dir.to_str().unwrap(),
        "--package",
        "kube-green",
        "--channel",
        "beta",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("channel \"beta\" is not in package \"kube-green\" (channels: alpha)"),
        "{err}"
    );
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        s,
        "-o",
        dir.to_str().unwrap(),
        "--package",
        "kube-green",
        "--strict",
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_catalog_image_is_a_source_too() {
    let Some(data) = shared() else { return };
    let src = data.join(COMMUNITY);
    let tmp = tempfile::tempdir().unwrap();
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    // The served binary does not matter here: the filter reads the image's /configs.
    let (code, _, err) = olm(&[
        "catalog",
        "build",
        src.to_str().unwrap(),
        "-t",
        &layout,
        "--olm-binary",
        "/bin/sh",
    ]);
    assert_eq!(code, 0, "{err}");
    let dir = tmp.path().join("filtered");
    let (code, _, err) = olm(&[
        "catalog",
        "filter",
        &layout,
        "-o",
        dir.to_str().unwrap(),
        "--package",
        "kube-green",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(bundles(&read_back(&dir)), names("kube-green", &["0.7.1"]));
}
