//! preflight's container policies (`internal/policy/container`,
//! `engine.InitializeContainerChecks`): HasLicense, HasUniqueTag, LayerCountAcceptable,
//! HasNoProhibitedPackages, HasRequiredLabel, HasNoProhibitedLabels, RunAsNonRoot,
//! HasModifiedFiles, BasedOnUbi, HasProhibitedContainerName, and the warning
//! HasSupportedRedHatBaseImage; the root and scratch policies leave some out, as preflight's
//! do.
//!
//! Every check reads [`ImageFacts`]: the config, the layers' scans and the unpacked root
//! file system (made by the confined unpacker). BasedOnUbi and HasSupportedRedHatBaseImage
//! ask Red Hat's API in preflight; here their verdict comes from the image itself (its rpm
//! database and os-release), and the note says so.

use crate::confined::{EntryKind, RelPath, Tree};
use std::collections::BTreeMap;
use std::path::Path;

use super::{Check, CheckResult, Level, timed};

pub mod dpkg;
pub mod layers;
pub mod modified;
pub mod rpm;
pub mod trademark;

const CERT_DOCS: &str = "https://access.redhat.com/documentation/en-us/red_hat_software_certification/8.69/html-single/red_hat_openshift_software_certification_policy_guide/index#assembly-requirements-for-container-images_openshift-sw-cert-policy-introduction";

pub static HAS_LICENSE: Check = Check {
    name: "HasLicense",
    description: "Checking if terms and conditions applicable to the software including open source licensing information are present. The license must be at /licenses",
    level: Level::Best,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasLicense encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Create a directory named /licenses and include all relevant licensing and/or terms and conditions as text file(s) in that directory.",
};

pub static HAS_UNIQUE_TAG: Check = Check {
    name: "HasUniqueTag",
    description: "Checking if container has a tag other than 'latest', so that the image can be uniquely identified.",
    level: Level::Best,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasUniqueTag encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Add a tag to your image. Consider using Semantic Versioning. https://semver.org/",
};

/// preflight's `acceptableLayerMax`.
pub const MAX_LAYERS: usize = 40;

pub static LAYER_COUNT: Check = Check {
    name: "LayerCountAcceptable",
    description: "Checking if container has less than 40 layers.  Too many layers within the container images can degrade container performance.",
    level: Level::Better,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check LayerCountAcceptable encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Optimize your Dockerfile to consolidate and minimize the number of layers. Each RUN command will produce a new layer. Try combining RUN commands using && where possible.",
};

pub static NO_PROHIBITED_PACKAGES: Check = Check {
    name: "HasNoProhibitedPackages",
    description: "Checks to ensure that the image in use does not include prohibited packages, such as Red Hat Enterprise Linux (RHEL) kernel packages.",
    level: Level::Best,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasNoProhibitedPackages encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Remove any RHEL packages that are not distributable outside of UBI",
};

pub static REQUIRED_LABEL: Check = Check {
    name: "HasRequiredLabel",
    description: "Checking if the required labels (name, vendor, version, release, summary, description, maintainer) are present in the container metadata and that they do not violate Red Hat trademark.",
    level: Level::Good,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasRequiredLabel encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Add the following labels to your Dockerfile or Containerfile: name, vendor, version, release, summary, description, maintainer and validate that they do not violate Red Hat trademark.",
};

pub static NO_PROHIBITED_LABELS: Check = Check {
    name: "HasNoProhibitedLabels",
    description: "Checking if the labels (name, vendor, maintainer) violate Red Hat trademark.",
    level: Level::Good,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasNoProhibitedLabelsCheck encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Ensure the name, vendor, and maintainer label on your image do not violate the Red Hat trademark.",
};

pub static RUN_AS_NON_ROOT: Check = Check {
    name: "RunAsNonRoot",
    description: "Checking if container runs as the root user because a container that does not specify a non-root user will fail the automatic certification, and will be subject to a manual review before the container can be approved for publication",
    level: Level::Best,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check RunAsNonRoot encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Indicate a specific USER in the dockerfile or containerfile",
};

pub static MODIFIED_FILES: Check = Check {
    name: "HasModifiedFiles",
    description: "Checks that no files installed via RPM in the base Red Hat layer have been modified",
    level: Level::Best,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasModifiedFiles encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Do not modify any files installed by RPM in the base Red Hat layer",
};

pub static BASED_ON_UBI: Check = Check {
    name: "BasedOnUbi",
    description: "Checking if the container's base image is based upon the Red Hat Universal Base Image (UBI)",
    level: Level::Best,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check BasedOnUbi encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Change the FROM directive in your Dockerfile or Containerfile, for the latest list of images and details refer to: https://catalog.redhat.com/software/base-images",
};

pub static SUPPORTED_BASE_IMAGE: Check = Check {
    name: "HasSupportedRedHatBaseImage",
    description: "Checking if the container's Red Hat base image repository is supported",
    level: Level::Warn,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasSupportedRedHatBaseImage encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Use a supported (non-Deprecated) Red Hat base image from https://catalog.redhat.com/software/containers/",
};

pub static PROHIBITED_CONTAINER_NAME: Check = Check {
    name: "HasProhibitedContainerName",
    description: "Checking if the container-name violates Red Hat trademark.",
    level: Level::Good,
    knowledge_base_url: CERT_DOCS,
    check_url: CERT_DOCS,
    help: "Check HasProhibitedContainerName encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Update container-name ie (quay.io/repo-name/container-name) to not violate Red Hat trademark.",
};

/// preflight's container policies: which checks a certification project runs (Red Hat
/// grants the root and scratch exceptions per project; here they are chosen by flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    #[default]
    Container,
    /// Runs as root (no RunAsNonRoot).
    Root,
    /// Built from scratch, no distribution: no package checks, no UBI checks.
    ScratchNonRoot,
    ScratchRoot,
}

impl Policy {
    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "container" => Policy::Container,
            "root" => Policy::Root,
            "scratch-nonroot" | "scratch" => Policy::ScratchNonRoot,
            "scratch-root" => Policy::ScratchRoot,
            other => {
                return Err(format!(
                    "unknown container policy {other:?}; known: container, root, scratch-nonroot, scratch-root"
                ));
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Container => "container",
            Policy::Root => "root",
            Policy::ScratchNonRoot => "scratch-nonroot",
            Policy::ScratchRoot => "scratch-root",
        }
    }

    /// The policy's checks in preflight's order.
    pub fn checks(self) -> Vec<&'static Check> {
        let all: [&'static Check; 11] = [
            &HAS_LICENSE,
            &HAS_UNIQUE_TAG,
            &LAYER_COUNT,
            &NO_PROHIBITED_PACKAGES,
            &REQUIRED_LABEL,
            &NO_PROHIBITED_LABELS,
            &RUN_AS_NON_ROOT,
            &MODIFIED_FILES,
            &BASED_ON_UBI,
            &SUPPORTED_BASE_IMAGE,
            &PROHIBITED_CONTAINER_NAME,
        ];
        let scratch = [
            &NO_PROHIBITED_PACKAGES,
            &MODIFIED_FILES,
            &BASED_ON_UBI,
            &SUPPORTED_BASE_IMAGE,
        ];
        all.into_iter()
            .filter(|c| match self {
                Policy::Container => true,
                Policy::Root => !std::ptr::eq(*c, &RUN_AS_NON_ROOT),
                Policy::ScratchNonRoot => !scratch.iter().any(|s| std::ptr::eq(*s, *c)),
                Policy::ScratchRoot => {
                    !scratch.iter().any(|s| std::ptr::eq(*s, *c))
                        && !std::ptr::eq(*c, &RUN_AS_NON_ROOT)
                }
            })
            .collect()
    }
}

/// Everything the container checks read about one image (one platform of it).
#[derive(Debug, Clone, Default)]
pub struct ImageFacts {
    /// The image as named (`quay.io/org/name:tag`, `oci:dir:tag`).
    pub reference: String,
    /// The repository's last path component is the container name.
    pub repository: String,
    /// The tag, or the digest when named by one.
    pub tag_or_digest: String,
    /// The repository's tags, listed when the image was named by digest or `latest`
    /// (preflight's HasUniqueTag asks the registry then); `Err` says why they could not be.
    pub listed_tags: Option<Result<Vec<String>, String>>,
    pub labels: BTreeMap<String, String>,
    pub user: String,
    pub layer_count: usize,
    /// The layers' digests, base first (for naming layers in fixes).
    pub layer_digests: Vec<String>,
    pub scans: Vec<layers::LayerScan>,
    /// The unpacked root file system, read confined to it.
    pub rootfs: Tree,
    /// The rpm database of `rootfs`, read once by the first check that asks.
    pub rpm: std::cell::OnceCell<Result<Option<Vec<rpm::Package>>, String>>,
}

impl ImageFacts {
    /// The image's rpm packages (`None` without an rpm database), read on first use.
    pub fn rpm_packages(&self) -> &Result<Option<Vec<rpm::Package>>, String> {
        self.rpm
            .get_or_init(|| rpm::read_under(&self.rootfs).map_err(|e| e.to_string()))
    }
}

/// Runs the policy's checks on `facts`, each timed; `tmp` is scratch space.
pub fn run(policy: Policy, facts: &ImageFacts, tmp: &Path) -> Vec<CheckResult> {
    policy
        .checks()
        .into_iter()
        .map(|c| timed(|| run_one(c, facts, tmp)))
        .collect()
}

fn run_one(check: &'static Check, f: &ImageFacts, tmp: &Path) -> CheckResult {
    match check.name {
        "HasLicense" => has_license(&f.rootfs),
        "HasUniqueTag" => has_unique_tag(f),
        "LayerCountAcceptable" => layer_count(f.layer_count),
        "HasNoProhibitedPackages" => no_prohibited_packages(f),
        "HasRequiredLabel" => required_label(&f.labels),
        "HasNoProhibitedLabels" => no_prohibited_labels(&f.labels),
        "RunAsNonRoot" => run_as_non_root(&f.user),
        "HasModifiedFiles" => modified_files(f, tmp),
        "BasedOnUbi" => based_on_ubi(f),
        "HasSupportedRedHatBaseImage" => supported_base_image(f),
        _ => prohibited_container_name(&f.repository),
    }
}

/// HasLicense: `/licenses` is a directory with at least one entry, one of them not empty
/// (sizes as `lstat` gives them, as Go's `DirEntry.Info`).
pub fn has_license(rootfs: &Tree) -> CheckResult {
    let check = &HAS_LICENSE;
    let fix = || {
        vec!["add a directory /licenses holding the license text(s) (olm image build --license FILE puts a file there)".to_string()]
    };
    let dir = RelPath::parse("licenses").expect("a constant relative path");
    match rootfs.symlink_metadata(&dir) {
        Ok(m) if m.kind == EntryKind::Dir => {}
        Ok(_) => {
            return CheckResult::failed(
                check,
                vec![
                    "/licenses is not a directory: make it one, holding the license text(s)".into(),
                ],
            );
        }
        Err(_) => return CheckResult::failed(check, fix()),
    }
    let entries = match rootfs.read_dir(&dir) {
        Ok(e) => e,
        Err(e) => {
            return CheckResult::error(
                check,
                format!("could not get license file list: could not read directory /licenses: {e}"),
            );
        }
    };
    let mut count = 0;
    let mut non_empty = false;
    for (name, _) in entries {
        count += 1;
        let size = dir
            .child(&name)
            .ok()
            .and_then(|rel| rootfs.symlink_metadata(&rel).ok())
            .map_or(0, |m| m.len);
        if size > 0 {
            non_empty = true;
        }
    }
    if count >= 1 && non_empty {
        CheckResult::passed(check).note(format!("{count} file(s) in /licenses"))
    } else if count == 0 {
        CheckResult::failed(
            check,
            vec!["/licenses is empty: put the license text(s) in it".into()],
        )
    } else {
        CheckResult::failed(
            check,
            vec!["every file in /licenses is empty: put the license text in it".into()],
        )
    }
}

/// HasUniqueTag: more than one tag, or one that is not `latest`. Named by digest or
/// `latest`, the repository's tags decide.
pub fn has_unique_tag(f: &ImageFacts) -> CheckResult {
    let check = &HAS_UNIQUE_TAG;
    let by_digest = f.tag_or_digest.starts_with("sha256:");
    let mut tags: Vec<String> = Vec::new();
    if by_digest || f.tag_or_digest == "latest" {
        match &f.listed_tags {
            Some(Ok(t)) => tags = t.clone(),
            Some(Err(e)) => {
                return CheckResult::error(
                    check,
                    format!("failed to get tags list for {}: {e}", f.repository),
                );
            }
            None => {}
        }
    }
    if tags.is_empty() {
        if by_digest {
            return CheckResult::error(
                check,
                format!(
                    "no tags found for {}: cannot assert tag from digest",
                    f.repository
                ),
            );
        }
        tags.push(f.tag_or_digest.clone());
    }
    let unique = tags.len() > 1 || (tags.len() == 1 && !tags[0].eq_ignore_ascii_case("latest"));
    if unique {
        CheckResult::passed(check)
    } else {
        CheckResult::failed(
            check,
            vec![format!(
                "{}: tag the image with a version (e.g. :v1.2.3), not only 'latest'",
                f.repository
            )],
        )
    }
}

/// LayerCountAcceptable: at most 40 layers.
pub fn layer_count(count: usize) -> CheckResult {
    let check = &LAYER_COUNT;
    if count <= MAX_LAYERS {
        CheckResult::passed(check).note(format!("{count} layer(s)"))
    } else {
        CheckResult::failed(
            check,
            vec![format!(
                "the image has {count} layers: merge build steps so it has at most {MAX_LAYERS}"
            )],
        )
    }
}

const PROHIBITED: [&str; 17] = [
    "grub",
    "grub2",
    "kernel",
    "kernel-core",
    "kernel-debug",
    "kernel-debug-core",
    "kernel-debug-modules",
    "kernel-debug-modules-extra",
    "kernel-debug-devel",
    "kernel-devel",
    "kernel-doc",
    "kernel-modules",
    "kernel-modules-extra",
    "kernel-tools",
    "kernel-tools-libs",
    "kmod-kvdo",
    "linux-firmware",
];

/// HasNoProhibitedPackages: no RHEL kernel, boot loader or firmware package in the rpm
/// database. An image without one is an error, as in preflight.
pub fn no_prohibited_packages(f: &ImageFacts) -> CheckResult {
    let check = &NO_PROHIBITED_PACKAGES;
    let pkgs = match f.rpm_packages() {
        Ok(Some(p)) => p,
        Ok(None) => {
            let mut r = CheckResult::error(
                check,
                "unable to get a list of all packages in the image: could not get rpm list: stat /var/lib/rpm/Packages: no such file or directory",
            );
            r.fixes.push(
                "an image without an rpm database is not UBI-based: base it on UBI, or certify it under the scratch policy (--policy scratch-nonroot)".into(),
            );
            return r;
        }
        Err(e) => {
            return CheckResult::error(
                check,
                format!(
                    "unable to get a list of all packages in the image: could not get rpm list: {e}"
                ),
            );
        }
    };
    let bad: Vec<String> = pkgs
        .iter()
        .filter(|p| PROHIBITED.contains(&p.name.as_str()) || p.name.starts_with("kpatch"))
        .map(|p| {
            format!(
                "remove package {} (not redistributable outside of UBI)",
                p.name
            )
        })
        .collect();
    CheckResult::by_fixes(check, bad).note(format!("{} rpm package(s)", pkgs.len()))
}

const REQUIRED_LABELS: [&str; 7] = [
    "name",
    "vendor",
    "version",
    "release",
    "summary",
    "description",
    "maintainer",
];
const TRADEMARK_LABELS: [&str; 3] = ["name", "vendor", "maintainer"];

fn trademark_fixes(labels: &BTreeMap<String, String>) -> Vec<String> {
    TRADEMARK_LABELS
        .iter()
        .filter(|l| trademark::violates(labels.get(**l).map(String::as_str).unwrap_or("")))
        .map(|l| {
            format!(
                "label {l}={:?}: must not start with or name \"Red Hat\" (\"... for Red Hat\" is allowed)",
                labels[*l]
            )
        })
        .collect()
}

/// HasRequiredLabel: the seven labels present and not empty, and name, vendor and
/// maintainer clear of the Red Hat trademark.
pub fn required_label(labels: &BTreeMap<String, String>) -> CheckResult {
    let mut fixes: Vec<String> = REQUIRED_LABELS
        .iter()
        .filter(|l| labels.get(**l).is_none_or(String::is_empty))
        .map(|l| format!("add label {l}=<value> (olm image build --label {l}=...)"))
        .collect();
    fixes.extend(trademark_fixes(labels));
    CheckResult::by_fixes(&REQUIRED_LABEL, fixes)
}

/// HasNoProhibitedLabels: name, vendor and maintainer clear of the Red Hat trademark.
pub fn no_prohibited_labels(labels: &BTreeMap<String, String>) -> CheckResult {
    CheckResult::by_fixes(&NO_PROHIBITED_LABELS, trademark_fixes(labels))
}

/// RunAsNonRoot: the config's user is set and is neither `0` nor `root`.
pub fn run_as_non_root(user: &str) -> CheckResult {
    let check = &RUN_AS_NON_ROOT;
    match user {
        "" => CheckResult::failed(
            check,
            vec!["the config has no USER (it runs as root): set one, e.g. 65532 (olm image build does)".into()],
        ),
        "0" | "root" => CheckResult::failed(
            check,
            vec![format!("USER is {user:?}: set a non-root user, e.g. 65532")],
        ),
        u => CheckResult::passed(check).note(format!("USER {u}")),
    }
}

fn read_os_release(rootfs: &Tree) -> Option<String> {
    let rel = RelPath::parse("etc/os-release").expect("a constant relative path");
    let data = rootfs.read_bounded(&rel, 1 << 20).ok()??;
    Some(String::from_utf8_lossy(&data).into_owned())
}

/// HasModifiedFiles: no package file changed by a later layer outside the package manager
/// (rpm as preflight; dpkg too). Without `/etc/os-release` it is an error, as in preflight.
pub fn modified_files(f: &ImageFacts, tmp: &Path) -> CheckResult {
    let check = &MODIFIED_FILES;
    let Some(os_release) = read_os_release(&f.rootfs) else {
        let mut r = CheckResult::error(
            check,
            "could not generate modified files list: could not open os-release: open /etc/os-release: no such file or directory",
        );
        r.fixes.push("the image has no /etc/os-release: base it on a distribution image that has one, or certify it under the scratch policy (--policy scratch-nonroot)".into());
        return r;
    };
    let dist = modified::package_dist(&os_release);
    let refs = modified::layer_refs(&f.scans, tmp);
    let mods = modified::modifications(&refs, &dist);
    let fixes = mods
        .iter()
        .map(|m| {
            let layer = f
                .layer_digests
                .get(m.layer)
                .map(|d| format!("layer {} ({d})", m.layer + 1))
                .unwrap_or_else(|| format!("layer {}", m.layer + 1));
            let manager = match m.source {
                modified::Source::Rpm => "dnf/rpm",
                modified::Source::Dpkg => "apt/dpkg",
            };
            format!(
                "{layer}: /{} of package {} {}; update or reinstall the package with {manager} instead of changing the file",
                m.file, m.package, m.why
            )
        })
        .collect();
    let owned: usize = refs.last().map(|r| r.owners.len()).unwrap_or(0);
    CheckResult::by_fixes(check, fixes).note(format!(
        "{owned} package file(s) in {} layer(s) compared (platform {dist})",
        refs.len()
    ))
}

/// The Red Hat Enterprise Linux major version of the image, when `/etc/os-release` says
/// `ID="rhel"` and its rpm database holds a `redhat-release` package.
fn rhel_major(f: &ImageFacts) -> Result<Option<u32>, String> {
    let Some(os) = read_os_release(&f.rootfs) else {
        return Ok(None);
    };
    let field = |k: &str| {
        os.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(|v| v.trim().trim_matches('"').to_string())
    };
    if field("ID").as_deref() != Some("rhel") {
        return Ok(None);
    }
    let pkgs = f.rpm_packages().clone()?.unwrap_or_default();
    if !pkgs
        .iter()
        .any(|p| p.name == "redhat-release" && p.vendor == "Red Hat, Inc.")
    {
        return Ok(None);
    }
    Ok(field("VERSION_ID").and_then(|v| v.split('.').next()?.parse().ok()))
}

const OFFLINE_NOTE: &str = "offline verdict: preflight asks Red Hat's certification API (Pyxis) whether a certified image holds one of this image's layers; olm reads the base from the image (os-release ID=rhel and Red Hat's redhat-release rpm)";

/// BasedOnUbi, offline: the image is RHEL (os-release) with Red Hat's `redhat-release`
/// package installed, which only Red Hat's base images carry.
pub fn based_on_ubi(f: &ImageFacts) -> CheckResult {
    let check = &BASED_ON_UBI;
    match rhel_major(f) {
        Err(e) => CheckResult::error(check, format!("unable to verify layer hashes: {e}")),
        Ok(Some(v)) => CheckResult::passed(check).note(format!("RHEL {v} base. {OFFLINE_NOTE}")),
        Ok(None) => CheckResult::failed(
            check,
            vec!["build FROM a UBI image (registry.access.redhat.com/ubi9/ubi-minimal or ubi-micro), or certify under the scratch policy if the image has no distribution".into()],
        )
        .note(OFFLINE_NOTE),
    }
}

/// HasSupportedRedHatBaseImage (a warning), offline: a RHEL 8, 9 or 10 base (UBI 7 is
/// past its end of life).
pub fn supported_base_image(f: &ImageFacts) -> CheckResult {
    let check = &SUPPORTED_BASE_IMAGE;
    match rhel_major(f) {
        Err(e) => CheckResult::error(check, format!("repository lifecycle query failed: {e}")),
        Ok(Some(v)) if v >= 8 => {
            CheckResult::passed(check).note(format!("RHEL {v}: a supported UBI"))
        }
        Ok(Some(v)) => CheckResult::failed(
            check,
            vec![format!(
                "the base is RHEL {v}, past its end of life: move to ubi9 (or ubi8)"
            )],
        ),
        Ok(None) => CheckResult::failed(
            check,
            vec!["no Red Hat base image found: build FROM a supported UBI (ubi9)".into()],
        ),
    }
    .note(OFFLINE_NOTE)
}

/// HasProhibitedContainerName: the repository's last component clear of the trademark.
pub fn prohibited_container_name(repository: &str) -> CheckResult {
    let check = &PROHIBITED_CONTAINER_NAME;
    let name = repository.rsplit('/').next().unwrap_or(repository);
    if trademark::violates(name) {
        CheckResult::failed(
            check,
            vec![format!(
                "rename the repository's last part {name:?}: it must not start with or name \"Red Hat\""
            )],
        )
    } else {
        CheckResult::passed(check)
    }
}
