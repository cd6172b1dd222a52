//! `olm catalog validate`: every rule `opm validate` applies (operator-registry
//! `declcfg_to_model.go` and `model.go`), with opm's verdict and message text, plus checks opm
//! does not make that catch real mistakes (unsatisfiable dependencies, a skipRange that covers
//! nothing, one image shipped as two bundles).
//!
//! Unlike opm, which stops at the first conversion error and prints the rest as an unordered
//! tree, every finding is collected, sorted, and located (file, line, package/channel/bundle)
//! with a hint on how to fix it.

use std::collections::{BTreeMap, BTreeSet, btree_map};
use std::path::Path;

use semver::Version;

use super::declcfg::{
    Bundle, Channel, DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, Source,
};
use super::diagnostic::{Diagnostic, Report, Severity};
use super::fast_hash::{FastHashMap, FastHashSet, map_with_capacity, set_with_capacity};
use super::load::{self, Keep, LoadErrors};
use super::property::{Gvk, PackageRequired, TypedProperty};
use crate::grammar::semver_range::{self, Range, SemverError};

/// The facts of a bundle that validation and the model need, parsed once.
#[derive(Debug, Clone, Default)]
pub struct BundleFacts {
    pub version: Option<Version>,
    pub release: Option<String>,
    pub provided: Vec<Gvk>,
    pub required_gvks: Vec<Gvk>,
    pub required_packages: Vec<PackageRequired>,
    pub has_objects: bool,
}

/// Parses the bundle's properties; errors become diagnostics.
pub fn bundle_facts(b: &Bundle, out: &mut Vec<Diagnostic>) -> BundleFacts {
    let mut facts = BundleFacts::default();
    let mut packages = Vec::new();
    let d = |rule, msg: String| {
        Diagnostic::new(Severity::Error, rule, &b.source, msg)
            .package(&b.package)
            .bundle(&b.name)
    };
    for (i, p) in b.properties.iter().enumerate() {
        // opm checks only that these large values are JSON (which a loaded value is); a full
        // typed parse would copy every CSV description for nothing.
        if p.ty == super::property::TYPE_CSV_METADATA || p.ty == super::property::TYPE_CONSTRAINT {
            if !p.is_object() {
                out.push(
                    d(
                        "bundle-property-invalid",
                        format!(
                            "parse properties for bundle {:?}: parse property[{i}] of type {:?}: value must be an object",
                            b.name, p.ty
                        ),
                    )
                    .fix(format!("make properties[{i}].value an object")),
                );
            }
            continue;
        }
        match p.parse(i) {
            Err(e) => out.push(
                d(
                    "bundle-property-invalid",
                    format!("parse properties for bundle {:?}: {e}", b.name),
                )
                .fix(format!(
                    "make properties[{i}] a {{type, value}} whose value matches the {:?} schema",
                    p.ty
                )),
            ),
            Ok(TypedProperty::Package(pp)) => packages.push(pp),
            Ok(TypedProperty::Gvk(g)) => facts.provided.push(g),
            Ok(TypedProperty::GvkRequired(g)) => facts.required_gvks.push(g),
            Ok(TypedProperty::PackageRequired(r)) => facts.required_packages.push(r),
            Ok(TypedProperty::BundleObject(_)) => facts.has_objects = true,
            Ok(_) => {}
        }
    }
    if packages.len() != 1 {
        out.push(
            d(
                "bundle-package-property-count",
                format!(
                    "package {:?} bundle {:?} must have exactly 1 \"olm.package\" property, found {}",
                    b.package,
                    b.name,
                    packages.len()
                ),
            )
            .fix("give the bundle exactly one olm.package property {packageName, version}"),
        );
        return facts;
    }
    let pp = &packages[0];
    if pp.package_name != b.package {
        out.push(
            d(
                "bundle-package-mismatch",
                format!(
                    "package {:?} does not match \"olm.package\" property {:?}",
                    b.package, pp.package_name
                ),
            )
            .fix("set the olm.package property's packageName to the bundle's package"),
        );
    }
    match semver_range::parse_version(&pp.version) {
        Ok(v) => {
            if let Some(rel) = &pp.release {
                if !v.build.is_empty() {
                    out.push(d(
                        "bundle-release-build-metadata",
                        "cannot use build metadata in version with a release version".into(),
                    ));
                }
                let expected = format!("{}-v{}-{}", b.package, pp.version, rel);
                if b.name != expected {
                    out.push(
                        d(
                            "bundle-release-name",
                            format!(
                                "name {:?} does not match normalized name {:?}",
                                b.name, expected
                            ),
                        )
                        .fix(format!("rename the bundle to {expected:?}")),
                    );
                }
            }
            facts.version = Some(v);
            facts.release = pp.release.clone();
        }
        Err(e) => out.push(
            d(
                "bundle-version-invalid",
                format!(
                    "error parsing bundle {:?} version {:?}: {e}",
                    b.name, pp.version
                ),
            )
            .fix("use a strict semantic version (MAJOR.MINOR.PATCH, no 'v' prefix)"),
        ),
    }
    facts
}

/// The bundle's image and related image references must be pullable specs.
fn image_checks(b: &Bundle, out: &mut Vec<Diagnostic>) {
    let located = |rule, msg: String| {
        Diagnostic::new(Severity::Error, rule, &b.source, msg)
            .package(&b.package)
            .bundle(&b.name)
    };
    if !b.image.is_empty()
        && let Err(e) = crate::grammar::image_ref::validate(&b.image)
    {
        out.push(
            located(
                "bundle-image-invalid",
                format!(
                    "package {:?} bundle {:?} image: invalid image pull spec {:?}: {e}",
                    b.package, b.name, b.image
                ),
            )
            .fix("use a pullable reference such as registry/repo/name@sha256:<digest>"),
        );
    }
    for (i, ri) in b.related_images.iter().enumerate() {
        if !ri.image.is_empty()
            && let Err(e) = crate::grammar::image_ref::validate(&ri.image)
        {
            out.push(
                located(
                    "bundle-related-image-invalid",
                    format!(
                        "package {:?} bundle {:?} relatedImages[{i}].image: invalid image pull spec {:?}: {e}",
                        b.package, b.name, ri.image
                    ),
                )
                .fix("use a pullable reference such as registry/repo/name@sha256:<digest>"),
            );
        }
    }
}

/// One bundle's findings and facts, from nothing but the bundle: its properties, version and
/// image references.
#[derive(Debug)]
pub struct BundleCheck {
    pub facts: BundleFacts,
    diags: Vec<Diagnostic>,
}

/// Checks what needs nothing but the bundle itself.
pub fn check_bundle(b: &Bundle) -> BundleCheck {
    let mut diags = Vec::new();
    let facts = bundle_facts(b, &mut diags);
    image_checks(b, &mut diags);
    BundleCheck { facts, diags }
}

/// A catalog whose bundles were checked one at a time as their files were read, each
/// bundle's properties and related images dropped once checked: validation reads them no
/// further, so a large catalog's are never all held at once.
#[derive(Debug)]
pub struct Checked {
    cfg: DeclarativeConfig,
    /// `checks[i]` is `cfg.bundles[i]`'s, without the APIs provided.
    checks: Vec<BundleCheck>,
    /// Every API some bundle provides, taken out of the checks: validation asks only whether
    /// an API is provided, and bundles provide a few APIs many times over (11,025 `olm.gvk`
    /// properties name 145 APIs in community-operators v4.20).
    provided: FastHashSet<Gvk>,
}

impl Checked {
    /// Loads the catalog files under `root` as [`Keep::Structure`] does, checking each file's
    /// bundles on the core that read it.
    pub fn load(root: &Path) -> Result<Checked, LoadErrors> {
        let (cfg, per_file) = load::load_dir_with(root, Keep::Structure, |_, file| {
            let mut provided = FastHashSet::default();
            let checks = file
                .bundles
                .iter_mut()
                .map(|b| {
                    let mut check = check_bundle(b);
                    provided.extend(std::mem::take(&mut check.facts.provided));
                    b.properties = Vec::new();
                    b.related_images = Vec::new();
                    check
                })
                .collect::<Vec<_>>();
            (checks, provided)
        })?;
        // Files merge in order, so their checks line up with the merged bundles.
        let mut checks = Vec::with_capacity(cfg.bundles.len());
        let mut provided = FastHashSet::default();
        for (file_checks, file_provided) in per_file {
            checks.extend(file_checks);
            provided.extend(file_provided);
        }
        debug_assert_eq!(checks.len(), cfg.bundles.len());
        Ok(Checked {
            cfg,
            checks,
            provided,
        })
    }

    /// Runs every other check: the sorted findings, and the catalog as loaded (without the
    /// properties and related images of its bundles). Taking the checks, it can run once.
    pub fn validate(self) -> (Report, DeclarativeConfig) {
        let (report, _) = validate_checked(&self.cfg, self.checks, &self.provided);
        (report, self.cfg)
    }
}

/// Runs every check and returns the sorted findings.
pub fn validate(cfg: &DeclarativeConfig) -> Report {
    validate_with_facts(cfg).0
}

/// [`validate`], also giving each bundle's facts (in `cfg.bundles` order) so the model can be
/// built without parsing every property a second time.
pub fn validate_with_facts(cfg: &DeclarativeConfig) -> (Report, Vec<BundleFacts>) {
    let checks = crate::parallel::map(&cfg.bundles, check_bundle);
    validate_checked(cfg, checks, &FastHashSet::default())
}

/// [`validate_with_facts`] with each bundle's own checks done already (`checks[i]` is
/// `cfg.bundles[i]`'s); `provided` holds APIs provided beyond those in the checks' facts.
fn validate_checked(
    cfg: &DeclarativeConfig,
    checks: Vec<BundleCheck>,
    provided: &FastHashSet<Gvk>,
) -> (Report, Vec<BundleFacts>) {
    let mut out: Vec<Diagnostic> = Vec::new();
    let err = |rule, src: &Source, msg: String| Diagnostic::new(Severity::Error, rule, src, msg);
    let warn = |rule, src: &Source, msg: String| Diagnostic::new(Severity::Warning, rule, src, msg);

    // Packages.
    let mut packages: BTreeMap<&str, &super::declcfg::Package> = BTreeMap::new();
    for p in &cfg.packages {
        if p.name.is_empty() {
            out.push(
                err(
                    "package-name-empty",
                    &p.source,
                    "config contains package with no name".into(),
                )
                .fix("set `name` on the olm.package blob"),
            );
            continue;
        }
        let btree_map::Entry::Vacant(slot) = packages.entry(p.name.as_str()) else {
            out.push(
                err(
                    "package-duplicate",
                    &p.source,
                    format!("duplicate package {:?}", p.name),
                )
                .package(&p.name)
                .fix("keep one olm.package blob per package"),
            );
            continue;
        };
        let errs = crate::grammar::k8s_names::dns1123_label(&p.name);
        if !errs.is_empty() {
            out.push(
                err(
                    "package-name-invalid",
                    &p.source,
                    format!("invalid package name {:?}: [{}]", p.name, errs.join(", ")),
                )
                .package(&p.name)
                .fix("use lowercase letters, digits and '-' only (a DNS-1123 label)"),
            );
        }
        slot.insert(p);
    }

    // Channels.
    let mut channels: BTreeMap<&str, BTreeMap<&str, &Channel>> = BTreeMap::new();
    for c in &cfg.channels {
        if !packages.contains_key(c.package.as_str()) {
            out.push(
                err(
                    "channel-unknown-package",
                    &c.source,
                    format!("unknown package {:?} for channel {:?}", c.package, c.name),
                )
                .package(&c.package)
                .channel(&c.name)
                .fix("add an olm.package blob for the package or fix the channel's `package`"),
            );
            continue;
        }
        if c.name.is_empty() {
            out.push(
                err(
                    "channel-name-empty",
                    &c.source,
                    format!("package {:?} contains channel with no name", c.package),
                )
                .package(&c.package)
                .fix("set `name` on the olm.channel blob"),
            );
            continue;
        }
        let pkg_channels = channels.entry(c.package.as_str()).or_default();
        let btree_map::Entry::Vacant(slot) = pkg_channels.entry(c.name.as_str()) else {
            out.push(
                err(
                    "channel-duplicate",
                    &c.source,
                    format!("package {:?} has duplicate channel {:?}", c.package, c.name),
                )
                .package(&c.package)
                .channel(&c.name)
                .fix("merge the entries into one olm.channel blob"),
            );
            continue;
        };
        let mut seen = set_with_capacity(c.entries.len());
        for e in &c.entries {
            if !seen.insert(e.name.as_str()) {
                out.push(
                    err(
                        "channel-duplicate-entry",
                        &c.source,
                        format!(
                            "invalid package {:?}, channel {:?}: duplicate entry {:?}",
                            c.package, c.name, e.name
                        ),
                    )
                    .package(&c.package)
                    .channel(&c.name)
                    .bundle(&e.name)
                    .fix("list each bundle once per channel"),
                );
            }
        }
        slot.insert(c);
    }

    // Bundles.
    let mut bundles: BTreeMap<&str, PkgBundles> = BTreeMap::new();
    // Each bundle's own checks were made up front (on all cores); their findings are placed
    // in catalog order below, where the loop reaches each bundle, so the report is the same
    // as checking them in the loop.
    let (per_bundle_diags, facts): (Vec<_>, Vec<_>) =
        checks.into_iter().map(|c| (c.diags, c.facts)).unzip();
    for ((b, diags), facts) in cfg.bundles.iter().zip(per_bundle_diags).zip(&facts) {
        if b.package.is_empty() {
            out.push(
                err(
                    "bundle-package-empty",
                    &b.source,
                    format!("package name must be set for bundle {:?}", b.name),
                )
                .bundle(&b.name)
                .fix("set `package` on the olm.bundle blob"),
            );
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            out.push(
                err(
                    "bundle-unknown-package",
                    &b.source,
                    format!("unknown package {:?} for bundle {:?}", b.package, b.name),
                )
                .package(&b.package)
                .bundle(&b.name)
                .fix("add an olm.package blob for the package or fix the bundle's `package`"),
            );
            continue;
        }
        if b.name.is_empty() {
            out.push(
                err("bundle-name-empty", &b.source, "name must be set".into())
                    .package(&b.package)
                    .fix("set `name` on the olm.bundle blob (by convention the CSV name)"),
            );
            continue;
        }
        let pkg_bundles = bundles.entry(b.package.as_str()).or_default();
        let btree_map::Entry::Vacant(slot) = pkg_bundles.entry(b.name.as_str()) else {
            out.push(
                err(
                    "bundle-duplicate",
                    &b.source,
                    format!("package {:?} has duplicate bundle {:?}", b.package, b.name),
                )
                .package(&b.package)
                .bundle(&b.name)
                .fix("keep one olm.bundle blob per bundle name"),
            );
            continue;
        };
        out.extend(diags);
        let located = |rule, msg: String| {
            err(rule, &b.source, msg)
                .package(&b.package)
                .bundle(&b.name)
        };
        if b.image.is_empty() && !facts.has_objects {
            out.push(
                located("bundle-image-empty", "bundle image must be set".into())
                    .fix("set `image` to the bundle image reference (or embed olm.bundle.object properties)"),
            );
        }
        slot.insert((b, facts));
    }

    // Bundles that no channel lists, and entries without bundles.
    for (pkg, pkg_bundles) in &bundles {
        let mut listed: FastHashSet<&str> = FastHashSet::default();
        if let Some(cs) = channels.get(pkg) {
            listed.reserve(cs.values().map(|c| c.entries.len()).sum());
            listed.extend(
                cs.values()
                    .flat_map(|c| c.entries.iter().map(|e| e.name.as_str())),
            );
        }
        for (name, (b, _)) in pkg_bundles {
            if !listed.contains(name) {
                out.push(
                    err(
                        "bundle-not-in-channel",
                        &b.source,
                        format!(
                            "package {pkg:?}, bundle {name:?} not found in any channel entries"
                        ),
                    )
                    .package(pkg)
                    .bundle(name)
                    .fix("add the bundle to a channel's entries, or remove the olm.bundle blob"),
                );
            }
        }
    }
    for (pkg, cs) in &channels {
        let pkg_bundles = bundles.get(pkg);
        for c in cs.values() {
            let missing: Vec<&str> = c
                .entries
                .iter()
                .map(|e| e.name.as_str())
                .filter(|n| pkg_bundles.is_none_or(|bs| !bs.contains_key(n)))
                .collect();
            if !missing.is_empty() {
                out.push(
                    err(
                        "channel-entry-missing-bundle",
                        &c.source,
                        format!(
                            "no olm.bundle blobs found in package {pkg:?} for olm.channel entries [{}]",
                            missing.join(" ")
                        ),
                    )
                    .package(pkg)
                    .channel(&c.name)
                    .fix("add the olm.bundle blobs (render the bundle images) or remove the entries"),
                );
            }
        }
    }

    // Per package: default channel, channels' graphs, duplicate versions.
    let mut skip_ranges = SkipRanges::default();
    for (name, p) in &packages {
        let pkg_channels = channels.get(name);
        let pkg_bundles = bundles.get(name);
        let perr = |rule, msg: String| err(rule, &p.source, msg).package(name);
        if p.default_channel.is_empty() {
            out.push(
                perr(
                    "package-default-channel-unset",
                    "default channel must be set".into(),
                )
                .fix("set `defaultChannel` on the olm.package blob"),
            );
        } else if pkg_channels.is_none_or(|cs| !cs.contains_key(p.default_channel.as_str())) {
            out.push(
                perr(
                    "package-default-channel-missing",
                    format!(
                        "default channel {:?} not found in channels list",
                        p.default_channel
                    ),
                )
                .fix("add an olm.channel blob with that name or point defaultChannel at an existing channel"),
            );
        }
        // With a default channel set, opm reports the missing default channel (above) instead.
        if pkg_channels.is_none_or(|cs| cs.is_empty()) && p.default_channel.is_empty() {
            out.push(
                perr(
                    "package-no-channels",
                    "package must contain at least one channel".into(),
                )
                .fix("add an olm.channel blob for the package"),
            );
        }
        if let Some(cs) = pkg_channels {
            for c in cs.values() {
                validate_channel(c, &mut skip_ranges, &mut out);
            }
        }
        if let Some(bs) = pkg_bundles {
            let mut by_version: BTreeMap<String, Vec<&str>> = BTreeMap::new();
            for (bname, (_, facts)) in bs {
                if let Some(v) = &facts.version {
                    // The full version (build metadata included), then any release.
                    let mut key = v.to_string();
                    if let Some(r) = &facts.release {
                        key.push('-');
                        key.push_str(r);
                    }
                    by_version.entry(key).or_default().push(bname);
                }
            }
            let dups: Vec<String> = by_version
                .iter()
                .filter(|(_, v)| v.len() > 1)
                .map(|(k, v)| format!("{{{k}: [{}]}}", v.join(", ")))
                .collect();
            if !dups.is_empty() {
                out.push(
                    perr(
                        "package-duplicate-versions",
                        format!("duplicate versions found in bundles: [{}]", dups.join(" ")),
                    )
                    .fix("give every bundle of the package a distinct version"),
                );
            }
        }
    }

    validate_deprecations(cfg, &packages, &channels, &bundles, &mut out);
    extra_warnings(
        cfg,
        &channels,
        &bundles,
        provided,
        &mut skip_ranges,
        &mut out,
        warn,
    );

    let mut report = Report { diagnostics: out };
    report.sort();
    (report, facts)
}

type PkgBundles<'a> = BTreeMap<&'a str, (&'a Bundle, &'a BundleFacts)>;

/// Each distinct `skipRange` parsed once: a channel's entries recur in the package's other
/// channels, and the ranges are checked, then matched against the package's versions.
type SkipRanges<'a> = FastHashMap<&'a str, Result<Range, SemverError>>;

fn parse_skip_range<'r, 'a>(
    ranges: &'r mut SkipRanges<'a>,
    range: &'a str,
) -> &'r Result<Range, SemverError> {
    ranges.entry(range).or_insert_with(|| Range::parse(range))
}

/// The channel head, or an error message with opm's text.
pub fn channel_head<'a>(
    entries: impl Iterator<Item = &'a super::declcfg::ChannelEntry> + Clone,
) -> Result<&'a super::declcfg::ChannelEntry, String> {
    let mut incoming: FastHashSet<&str> = set_with_capacity(entries.clone().size_hint().0);
    for e in entries.clone() {
        if !e.replaces.is_empty() {
            incoming.insert(&e.replaces);
        }
        for s in &e.skips {
            incoming.insert(s);
        }
    }
    let mut heads: Vec<&super::declcfg::ChannelEntry> = entries
        .filter(|e| !incoming.contains(e.name.as_str()))
        .collect();
    match heads.len() {
        0 => Err("no channel head found in graph".into()),
        1 => Ok(heads.remove(0)),
        _ => {
            let mut names: Vec<&str> = heads.iter().map(|e| e.name.as_str()).collect();
            names.sort();
            Err(format!(
                "multiple channel heads found in graph: {}",
                names.join(", ")
            ))
        }
    }
}

/// Follows `replaces` from the head (stopping at a name outside the channel or skipped by
/// any entry) and returns the chain, or opm's cycle message.
fn replaces_chain<'a>(
    head: &'a super::declcfg::ChannelEntry,
    by_name: &FastHashMap<&str, &'a super::declcfg::ChannelEntry>,
    skipped: &FastHashSet<&str>,
) -> Result<Vec<&'a str>, String> {
    let mut chain: Vec<&str> = vec![head.name.as_str()];
    let mut cur = head;
    loop {
        let next = cur.replaces.as_str();
        if next.is_empty() {
            break;
        }
        if let Some(pos) = chain.iter().position(|n| *n == next) {
            let mut cycle: Vec<&str> = chain[pos..].to_vec();
            cycle.push(next);
            return Err(format!(
                "detected cycle in replaces chain of upgrade graph: {}",
                cycle.join(" -> ")
            ));
        }
        chain.push(next);
        if skipped.contains(next) {
            break;
        }
        match by_name.get(next) {
            Some(e) => cur = e,
            None => break,
        }
    }
    Ok(chain)
}

fn validate_channel<'a>(
    c: &'a Channel,
    skip_ranges: &mut SkipRanges<'a>,
    out: &mut Vec<Diagnostic>,
) {
    let cerr = |rule, msg: String| {
        Diagnostic::new(Severity::Error, rule, &c.source, msg)
            .package(&c.package)
            .channel(&c.name)
    };
    if c.entries.is_empty() {
        out.push(
            cerr(
                "channel-empty",
                "channel must contain at least one bundle".into(),
            )
            .fix("add entries to the channel or remove it"),
        );
        return;
    }
    for e in &c.entries {
        for (i, s) in e.skips.iter().enumerate() {
            if s.is_empty() {
                out.push(
                    cerr("entry-skip-empty", format!("skip[{i}] is empty"))
                        .bundle(&e.name)
                        .fix("remove the empty name from `skips`"),
                );
            }
        }
        if !e.skip_range.is_empty()
            && let Err(er) = parse_skip_range(skip_ranges, &e.skip_range)
        {
            out.push(
                cerr(
                    "entry-skip-range-invalid",
                    format!("invalid skipRange {:?}: {er}", e.skip_range),
                )
                .bundle(&e.name)
                .fix("write a blang/semver range such as '>=1.0.0 <1.2.0' (space = AND, '||' = OR, no 'v' prefix)"),
            );
        }
    }
    let head = match channel_head(c.entries.iter()) {
        Ok(h) => h,
        Err(msg) => {
            let fix = if msg.starts_with("multiple") {
                "make every older entry reachable from one newest entry via `replaces`/`skips`"
            } else {
                "the newest entry must not be replaced or skipped by another entry"
            };
            out.push(cerr("channel-head", msg).fix(fix));
            return;
        }
    };
    let mut by_name: FastHashMap<&str, &super::declcfg::ChannelEntry> =
        map_with_capacity(c.entries.len());
    by_name.extend(c.entries.iter().map(|e| (e.name.as_str(), e)));
    let mut skipped: FastHashSet<&str> =
        set_with_capacity(c.entries.iter().map(|e| e.skips.len()).sum());
    skipped.extend(
        c.entries
            .iter()
            .flat_map(|e| e.skips.iter().map(String::as_str)),
    );
    match replaces_chain(head, &by_name, &skipped) {
        Err(msg) => out.push(
            cerr("channel-cycle", msg)
                .fix("break the cycle: an entry must not (indirectly) replace itself"),
        ),
        Ok(chain) => {
            let mut on_chain: FastHashSet<&str> = set_with_capacity(chain.len());
            on_chain.extend(chain);
            let mut stranded: Vec<&str> = c
                .entries
                .iter()
                .map(|e| e.name.as_str())
                .filter(|n| !on_chain.contains(n) && !skipped.contains(n))
                .collect();
            stranded.sort();
            if !stranded.is_empty() {
                out.push(
                    cerr(
                        "channel-stranded",
                        format!(
                            "channel contains one or more stranded bundles: {}",
                            stranded.join(", ")
                        ),
                    )
                    .fix(format!(
                        "link them into the replaces chain from the head {:?} (replaces or skips), or remove them",
                        head.name
                    )),
                );
            }
        }
    }
}

fn validate_deprecations(
    cfg: &DeclarativeConfig,
    packages: &BTreeMap<&str, &super::declcfg::Package>,
    channels: &BTreeMap<&str, BTreeMap<&str, &Channel>>,
    bundles: &BTreeMap<&str, PkgBundles>,
    out: &mut Vec<Diagnostic>,
) {
    let mut seen_pkgs = set_with_capacity(cfg.deprecations.len());
    for (i, d) in cfg.deprecations.iter().enumerate() {
        let derr = |rule, msg: String| {
            Diagnostic::new(Severity::Error, rule, &d.source, msg).package(&d.package)
        };
        if d.package.is_empty() {
            out.push(
                derr(
                    "deprecation-package-empty",
                    format!("package name must be set for deprecation item {i}"),
                )
                .fix("set `package` on the olm.deprecations blob"),
            );
            continue;
        }
        if !packages.contains_key(d.package.as_str()) {
            out.push(
                derr(
                    "deprecation-unknown-package",
                    format!(
                        "cannot apply deprecations to an unknown package {:?}",
                        d.package
                    ),
                )
                .fix("fix the package name or remove the olm.deprecations blob"),
            );
            continue;
        }
        if !seen_pkgs.insert(d.package.as_str()) {
            out.push(
                derr(
                    "deprecation-duplicate",
                    format!(
                        "expected a maximum of one deprecation per package: {:?}",
                        d.package
                    ),
                )
                .fix("merge the entries into one olm.deprecations blob"),
            );
            continue;
        }
        let mut refs = set_with_capacity(d.entries.len());
        for (j, e) in d.entries.iter().enumerate() {
            let r = &e.reference;
            if r.schema.is_empty() {
                out.push(
                    derr(
                        "deprecation-schema-empty",
                        format!(
                            "schema must be set for deprecation entry [{j}] for package {:?}",
                            d.package
                        ),
                    )
                    .fix("set reference.schema to olm.package, olm.channel or olm.bundle"),
                );
                continue;
            }
            if !refs.insert((r.schema.as_str(), r.name.as_str())) {
                out.push(derr(
                    "deprecation-duplicate-entry",
                    format!(
                        "duplicate deprecation entry declcfg.PackageScopedReference{{Schema:{:?}, Name:{:?}}} for package {:?}",
                        r.schema, r.name, d.package
                    ),
                ).fix("list each deprecated object once"));
                continue;
            }
            match r.schema.as_str() {
                SCHEMA_BUNDLE => {
                    if bundles
                        .get(d.package.as_str())
                        .is_none_or(|bs| !bs.contains_key(r.name.as_str()))
                    {
                        out.push(
                            derr(
                                "deprecation-unknown-bundle",
                                format!(
                                    "cannot deprecate bundle {:?} for package {:?}: bundle not found",
                                    r.name, d.package
                                ),
                            )
                            .bundle(&r.name)
                            .fix("reference an existing bundle name"),
                        );
                    }
                }
                SCHEMA_CHANNEL => {
                    if channels
                        .get(d.package.as_str())
                        .is_none_or(|cs| !cs.contains_key(r.name.as_str()))
                    {
                        out.push(
                            derr(
                                "deprecation-unknown-channel",
                                format!(
                                    "cannot deprecate channel {:?} for package {:?}: channel not found",
                                    r.name, d.package
                                ),
                            )
                            .channel(&r.name)
                            .fix("reference an existing channel name"),
                        );
                    }
                }
                SCHEMA_PACKAGE => {
                    if !r.name.is_empty() {
                        out.push(
                            derr(
                                "deprecation-package-name-set",
                                format!(
                                    "package name must be empty for deprecated package {:?} (specified {:?})",
                                    d.package, r.name
                                ),
                            )
                            .fix("drop reference.name for an olm.package deprecation"),
                        );
                    }
                }
                other => out.push(
                    derr(
                        "deprecation-schema-unknown",
                        format!(
                            "cannot deprecate object declcfg.PackageScopedReference{{Schema:{other:?}, Name:{:?}}} referenced by entry {j} for package {:?}: object schema unknown",
                            r.name, d.package
                        ),
                    )
                    .fix("use schema olm.package, olm.channel or olm.bundle"),
                ),
            }
            if e.message.is_empty() {
                out.push(
                    derr(
                        "deprecation-message-empty",
                        "invalid deprecation: message must be set".into(),
                    )
                    .fix("add a message telling users what to do instead"),
                );
            }
        }
    }
}

fn extra_warnings<'a>(
    cfg: &DeclarativeConfig,
    channels: &BTreeMap<&str, BTreeMap<&str, &'a Channel>>,
    bundles: &BTreeMap<&str, PkgBundles>,
    provided_elsewhere: &FastHashSet<Gvk>,
    skip_ranges: &mut SkipRanges<'a>,
    out: &mut Vec<Diagnostic>,
    warn: impl Fn(&'static str, &Source, String) -> Diagnostic,
) {
    // The APIs some bundle requires that no bundle provides (far fewer are required than
    // provided, so only those are kept, and the scan stops once all are found).
    let mut missing: FastHashSet<&Gvk> = FastHashSet::default();
    for bs in bundles.values() {
        for (_, f) in bs.values() {
            missing.extend(&f.required_gvks);
        }
    }
    let provided = bundles
        .values()
        .flat_map(|bs| bs.values())
        .flat_map(|(_, f)| &f.provided);
    for g in provided {
        if missing.is_empty() {
            break;
        }
        missing.remove(g);
    }
    missing.retain(|g| !provided_elsewhere.contains(*g));
    for (pkg, bs) in bundles {
        for (name, (b, f)) in bs {
            for g in &f.required_gvks {
                if missing.contains(g) {
                    out.push(
                        warn(
                            "dependency-gvk-unsatisfied",
                            &b.source,
                            format!("requires API {g} (olm.gvk.required) but no bundle in this catalog provides it"),
                        )
                        .package(pkg)
                        .bundle(name)
                        .fix("add the providing operator to the catalog, or make sure the API is installed on target clusters"),
                    );
                }
            }
            for r in &f.required_packages {
                let Some(deps) = bundles.get(r.package_name.as_str()) else {
                    out.push(
                        warn(
                            "dependency-package-unsatisfied",
                            &b.source,
                            format!(
                                "requires package {:?} {:?} (olm.package.required) but the catalog has no such package",
                                r.package_name, r.version_range
                            ),
                        )
                        .package(pkg)
                        .bundle(name)
                        .fix("add that package to the catalog or drop the dependency"),
                    );
                    continue;
                };
                match Range::parse(&r.version_range) {
                    Err(e) => out.push(
                        warn(
                            "dependency-range-invalid",
                            &b.source,
                            format!(
                                "olm.package.required versionRange {:?} for {:?} is not a valid range: {e}",
                                r.version_range, r.package_name
                            ),
                        )
                        .package(pkg)
                        .bundle(name)
                        .fix("write a blang/semver range such as '>=1.0.0 <2.0.0'"),
                    ),
                    Ok(range) => {
                        let any = deps
                            .values()
                            .any(|(_, df)| df.version.as_ref().is_some_and(|v| range.contains(v)));
                        if !any {
                            out.push(
                                warn(
                                    "dependency-package-unsatisfied",
                                    &b.source,
                                    format!(
                                        "requires package {:?} in range {:?} but no bundle of it has a version in that range",
                                        r.package_name, r.version_range
                                    ),
                                )
                                .package(pkg)
                                .bundle(name)
                                .fix("widen the range or add a matching bundle"),
                            );
                        }
                    }
                }
            }
        }
    }

    // skipRanges that cover no bundle of the package.
    for (pkg, cs) in channels {
        let Some(bs) = bundles.get(pkg) else { continue };
        for c in cs.values() {
            for e in &c.entries {
                if e.skip_range.is_empty() {
                    continue;
                }
                let Ok(range) = parse_skip_range(skip_ranges, &e.skip_range) else {
                    continue;
                };
                let covers = bs.iter().any(|(n, (_, f))| {
                    *n != e.name.as_str() && f.version.as_ref().is_some_and(|v| range.contains(v))
                });
                if !covers {
                    out.push(
                        warn(
                            "skip-range-covers-nothing",
                            &c.source,
                            format!(
                                "skipRange {:?} matches no other bundle version of the package",
                                e.skip_range
                            ),
                        )
                        .package(pkg)
                        .channel(&c.name)
                        .bundle(&e.name)
                        .fix("check the bounds (the range is matched against installed versions; this is fine for a package's first release)"),
                    );
                }
            }
        }
    }

    // One image published as several bundles.
    let mut by_image: BTreeMap<&str, Vec<&Bundle>> = BTreeMap::new();
    for b in &cfg.bundles {
        if !b.image.is_empty() {
            by_image.entry(&b.image).or_default().push(b);
        }
    }
    for (image, bs) in by_image {
        if bs.len() > 1 {
            let names: BTreeSet<String> = bs
                .iter()
                .map(|b| format!("{}/{}", b.package, b.name))
                .collect();
            let first = bs[0];
            out.push(
                warn(
                    "bundle-image-duplicate",
                    &first.source,
                    format!(
                        "image {image:?} is used by several bundles: {}",
                        names.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                )
                .package(&first.package)
                .bundle(&first.name)
                .fix("each bundle must point at its own bundle image"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::load::load_bytes;
    use std::path::Path;

    fn report(yaml: &str) -> Report {
        let cfg = load_bytes(Path::new("c.yaml"), yaml.as_bytes()).unwrap();
        let report = validate(&cfg);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.yaml"), yaml).unwrap();
        assert_same_as_checked(&report, dir.path(), &format!("{}/", dir.path().display()));
        report
    }

    /// Validation as `olm catalog validate` runs it (each bundle checked as its file is read,
    /// then stripped) must say exactly what validating the whole loaded catalog says.
    fn assert_same_as_checked(whole: &Report, dir: &Path, prefix: &str) {
        let (checked, _) = Checked::load(dir).unwrap().validate();
        assert_eq!(
            checked.to_json().replace(prefix, ""),
            whole.to_json().replace(prefix, ""),
            "{}",
            dir.display()
        );
    }

    #[test]
    fn checked_loads_agree_with_whole_validation() {
        // Findings from each bundle's own checks, spread over several files: a required API
        // provided only in another file, one provided nowhere, bad properties and images, a
        // bundle repeated in a second file (its own findings must not be reported twice).
        let dir = tempfile::tempdir().unwrap();
        let gvk = |kind: &str| {
            format!("- type: olm.gvk\n  value: {{group: x.io, kind: {kind}, version: v1}}\n")
        };
        let required = |kind: &str| {
            format!(
                "- type: olm.gvk.required\n  value: {{group: x.io, kind: {kind}, version: v1}}\n"
            )
        };
        let a = GOOD.replace(
            "value: {packageName: foo, version: 0.2.0}\n",
            &format!(
                "value: {{packageName: foo, version: 0.2.0}}\n{}{}{}- type: olm.package.required\n  value: {{packageName: nope, versionRange: '>=1.0.0'}}\nrelatedImages:\n- name: bad\n  image: 'not an image!'\n",
                gvk("A"),
                required("B"),
                required("Z")
            ),
        );
        std::fs::write(dir.path().join("a.yaml"), &a).unwrap();
        let b = format!(
            "schema: olm.package\nname: bar\ndefaultChannel: s\n---\nschema: olm.channel\nname: s\npackage: bar\nentries:\n- name: bar.v1.0.0\n- name: bar.v1.0.1\n  replaces: bar.v1.0.0\n---\nschema: olm.bundle\nname: bar.v1.0.0\npackage: bar\nimage: quay.io/x/bar:1\nproperties:\n- type: olm.package\n  value: {{packageName: bar, version: 1.0.0}}\n{}---\nschema: olm.bundle\nname: bar.v1.0.1\npackage: bar\nimage: 'Bad Image'\nproperties:\n- type: olm.package\n  value: {{packageName: bar, version: v1}}\n- type: olm.package.required\n  value: just-a-string\n---\nschema: olm.bundle\nname: foo.v0.1.0\npackage: foo\nimage: 'x y'\n",
            gvk("B")
        );
        std::fs::write(dir.path().join("b.yaml"), &b).unwrap();
        let whole = validate(&crate::catalog::load::load_dir(dir.path()).unwrap());
        let rules: BTreeSet<&str> = whole.diagnostics.iter().map(|d| d.rule).collect();
        for rule in [
            "dependency-gvk-unsatisfied",
            "dependency-package-unsatisfied",
            "bundle-related-image-invalid",
            "bundle-image-invalid",
            "bundle-property-invalid",
            "bundle-duplicate",
        ] {
            assert!(rules.contains(rule), "{rule}: {}", whole.to_text());
        }
        assert_eq!(
            whole
                .diagnostics
                .iter()
                .filter(|d| d.rule == "dependency-gvk-unsatisfied")
                .count(),
            1,
            "{}",
            whole.to_text()
        );
        assert_same_as_checked(&whole, dir.path(), "");

        // Every shared catalog.
        let Some(root) = crate::catalog::shared_catalogs() else {
            return;
        };
        let mut seen = 0;
        for repo in std::fs::read_dir(root).unwrap() {
            let versions = repo.unwrap().path().join("catalogs");
            for v in std::fs::read_dir(&versions).into_iter().flatten() {
                let dir = v.unwrap().path();
                let whole = validate(&crate::catalog::load::load_dir(&dir).unwrap());
                assert_same_as_checked(&whole, &dir, "");
                seen += 1;
            }
        }
        assert!(seen >= 5, "{seen}");
    }

    const GOOD: &str = r#"---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v0.1.0
- name: foo.v0.2.0
  replaces: foo.v0.1.0
  skipRange: ">=0.1.0 <0.2.0"
---
schema: olm.bundle
name: foo.v0.1.0
package: foo
image: quay.io/x/foo-bundle:v0.1.0
properties:
- type: olm.package
  value: {packageName: foo, version: 0.1.0}
---
schema: olm.bundle
name: foo.v0.2.0
package: foo
image: quay.io/x/foo-bundle:v0.2.0
properties:
- type: olm.package
  value: {packageName: foo, version: 0.2.0}
"#;

    #[test]
    fn good_catalog_passes() {
        let r = report(GOOD);
        assert!(!r.has_errors(), "{}", r.to_text());
    }

    #[test]
    fn required_apis_no_bundle_provides_are_named() {
        let props = |provided: &str, required: &[&str]| {
            let mut p = format!(
                "- type: olm.gvk\n  value: {{group: x.io, kind: {provided}, version: v1}}\n"
            );
            for k in required {
                p.push_str(&format!(
                    "- type: olm.gvk.required\n  value: {{group: x.io, kind: {k}, version: v1}}\n"
                ));
            }
            p
        };
        let yaml = GOOD
            .replace(
                "value: {packageName: foo, version: 0.1.0}\n",
                &format!(
                    "value: {{packageName: foo, version: 0.1.0}}\n{}",
                    props("A", &["B", "C"])
                ),
            )
            .replace(
                "value: {packageName: foo, version: 0.2.0}\n",
                &format!(
                    "value: {{packageName: foo, version: 0.2.0}}\n{}",
                    props("B", &["A", "C", "D"])
                ),
            );
        let r = report(&yaml);
        let w: Vec<_> = r
            .warnings()
            .map(|d| (d.bundle.as_str(), d.message.as_str()))
            .collect();
        let msg = |k| {
            format!(
                "requires API x.io/v1/{k} (olm.gvk.required) but no bundle in this catalog provides it"
            )
        };
        let (c, d) = (msg("C"), msg("D"));
        assert_eq!(
            w,
            [
                ("foo.v0.1.0", c.as_str()),
                ("foo.v0.2.0", c.as_str()),
                ("foo.v0.2.0", d.as_str())
            ],
            "{}",
            r.to_text()
        );
    }

    #[test]
    fn multiple_heads_are_named() {
        let bad = GOOD.replace(
            "  replaces: foo.v0.1.0\n  skipRange: \">=0.1.0 <0.2.0\"\n",
            "",
        );
        let r = report(&bad);
        let e: Vec<_> = r.errors().collect();
        assert_eq!(e.len(), 1, "{}", r.to_text());
        assert_eq!(
            e[0].message,
            "multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0"
        );
        assert_eq!(e[0].channel, "stable");
        assert!(e[0].location.starts_with("c.yaml:"));
    }

    #[test]
    fn cycle_message_matches_opm() {
        let mut cfg = DeclarativeConfig::default();
        let entries = vec![
            super::super::declcfg::ChannelEntry {
                name: "a.v3".into(),
                replaces: "a.v2".into(),
                ..Default::default()
            },
            super::super::declcfg::ChannelEntry {
                name: "a.v2".into(),
                replaces: "a.v1".into(),
                ..Default::default()
            },
            super::super::declcfg::ChannelEntry {
                name: "a.v1".into(),
                replaces: "a.v3".into(),
                ..Default::default()
            },
            super::super::declcfg::ChannelEntry {
                name: "a.v4".into(),
                replaces: "a.v3".into(),
                ..Default::default()
            },
        ];
        cfg.channels.push(Channel {
            name: "c".into(),
            package: "a".into(),
            entries,
            ..Default::default()
        });
        let mut out = Vec::new();
        validate_channel(&cfg.channels[0], &mut SkipRanges::default(), &mut out);
        assert_eq!(
            out[0].message,
            "detected cycle in replaces chain of upgrade graph: a.v3 -> a.v2 -> a.v1 -> a.v3"
        );
    }
}
