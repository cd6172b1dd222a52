//! `olm check container` end to end on OCI layouts built here: the image is read through the
//! copy engine and the confined unpacker, its layers scanned, and each crafted image fails
//! exactly the check it breaks, by name; results.json, the JUnit file and the text summary
//! come out as preflight lays them out.

use std::collections::BTreeMap;
use std::path::Path;

use olm_bundler::certify::Verdict;
use olm_bundler::certify::container::Policy;
use olm_bundler::image::layer::{LayerBuilder, Owner};
use olm_bundler::image::model::{Artifact, ImageBuilder};
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::transfer;
use olm_bundler::ops::check::ArtifactOptions;
use olm_bundler::ops::check::container::{ContainerRequest, check};

const LABELS: [(&str, &str); 7] = [
    ("name", "acme-operator"),
    ("vendor", "Acme"),
    ("version", "1.2.3"),
    ("release", "1"),
    ("summary", "The Acme operator"),
    ("description", "Runs Acme."),
    ("maintainer", "Acme <ops@acme.example>"),
];

/// An image description: each layer's files (path, content, mode), labels, user.
struct Spec {
    layers: Vec<Vec<(&'static str, Vec<u8>, u32)>>,
    labels: Vec<(&'static str, &'static str)>,
    user: &'static str,
}

fn good() -> Spec {
    Spec {
        layers: vec![
            vec![("licenses/LICENSE", b"Apache-2.0".to_vec(), 0o644)],
            vec![("usr/local/bin/op", b"\x7fELF".to_vec(), 0o755)],
        ],
        labels: LABELS.to_vec(),
        user: "65532",
    }
}

async fn store(dir: &Path, name: &str, tag: &str, spec: &Spec) -> String {
    let mut b = ImageBuilder::new(
        "linux",
        olm_bundler::image::layout::host_platform()
            .architecture
            .as_str(),
        0,
    );
    for files in &spec.layers {
        let mut l = LayerBuilder::new(0);
        for (path, data, mode) in files {
            l.file(path, data.clone(), *mode, Owner::Root).unwrap();
        }
        b = b.layer(l.finish().unwrap(), "test");
    }
    for (k, v) in &spec.labels {
        b = b.label(*k, *v);
    }
    if !spec.user.is_empty() {
        b = b.user(spec.user);
    }
    let reference = format!("oci:{}:{tag}", dir.join(name).display());
    transfer::store(
        &ImageRef::parse(&reference).unwrap(),
        &Artifact::Image(b.build()),
        &RegistryOptions::default(),
    )
    .await
    .unwrap();
    reference
}

async fn verdicts(reference: &str, policy: Policy) -> BTreeMap<&'static str, String> {
    let req = ContainerRequest {
        image: reference.to_string(),
        policy,
        ..Default::default()
    };
    let report = check(&req).await.unwrap();
    report
        .results
        .iter()
        .map(|r| {
            let v = match &r.verdict {
                Verdict::Passed => "pass".to_string(),
                Verdict::Failed => "fail".to_string(),
                Verdict::Error(_) => "error".to_string(),
                Verdict::NotRun(_) => "not run".to_string(),
            };
            (r.check.name, v)
        })
        .collect()
}

fn all_pass(policy: Policy) -> BTreeMap<&'static str, String> {
    policy
        .checks()
        .into_iter()
        .map(|c| (c.name, "pass".to_string()))
        .collect()
}

#[tokio::test]
async fn a_scratch_image_passes_the_scratch_policy_and_not_the_container_one() {
    let dir = tempfile::tempdir().unwrap();
    let r = store(dir.path(), "acme-operator", "v1.2.3", &good()).await;
    assert_eq!(
        verdicts(&r, Policy::ScratchNonRoot).await,
        all_pass(Policy::ScratchNonRoot)
    );
    // preflight's container policy on an image with no distribution: no rpm database and no
    // os-release are errors, and it is not UBI-based.
    let full = verdicts(&r, Policy::Container).await;
    assert_eq!(full["HasNoProhibitedPackages"], "error");
    assert_eq!(full["HasModifiedFiles"], "error");
    assert_eq!(full["BasedOnUbi"], "fail");
    assert_eq!(full["HasSupportedRedHatBaseImage"], "fail");
    assert_eq!(full["HasLicense"], "pass");
}

#[tokio::test]
async fn crafted_images_fail_exactly_the_check_they_break() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::ScratchNonRoot;
    let mut no_license = good();
    no_license.layers[0] = vec![("etc/motd", b"hi".to_vec(), 0o644)];
    let mut empty_license = good();
    empty_license.layers[0] = vec![("licenses/LICENSE", Vec::new(), 0o644)];
    let mut unlabeled = good();
    unlabeled.labels.retain(|(k, _)| *k != "maintainer");
    let mut trademark = good();
    trademark.labels.push(("vendor", "Red Hat"));
    let mut root = good();
    root.user = "root";
    let mut no_user = good();
    no_user.user = "";
    let mut many = good();
    for i in 0..40 {
        let path: &'static str = Box::leak(format!("layer{i}").into_boxed_str());
        many.layers.push(vec![(path, b"x".to_vec(), 0o644)]);
    }
    let cases: Vec<(&str, &str, &str, Spec, Vec<&str>)> = vec![
        ("HasLicense", "acme", "v1", no_license, vec!["HasLicense"]),
        (
            "HasLicense (empty)",
            "acme",
            "v1",
            empty_license,
            vec!["HasLicense"],
        ),
        (
            "HasRequiredLabel",
            "acme",
            "v1",
            unlabeled,
            vec!["HasRequiredLabel"],
        ),
        (
            "trademark",
            "acme",
            "v1",
            trademark,
            vec!["HasRequiredLabel", "HasNoProhibitedLabels"],
        ),
        ("RunAsNonRoot", "acme", "v1", root, vec!["RunAsNonRoot"]),
        (
            "RunAsNonRoot (unset)",
            "acme",
            "v1",
            no_user,
            vec!["RunAsNonRoot"],
        ),
        (
            "HasUniqueTag",
            "acme",
            "latest",
            good(),
            vec!["HasUniqueTag"],
        ),
        (
            "LayerCountAcceptable",
            "acme",
            "v1",
            many,
            vec!["LayerCountAcceptable"],
        ),
        (
            "HasProhibitedContainerName",
            "redhat-operator",
            "v1",
            good(),
            vec!["HasProhibitedContainerName"],
        ),
    ];
    for (i, (what, name, tag, spec, failing)) in cases.into_iter().enumerate() {
        let sub = dir.path().join(i.to_string());
        let r = store(&sub, name, tag, &spec).await;
        let mut want = all_pass(policy);
        for f in failing {
            want.insert(f, "fail".into());
        }
        assert_eq!(verdicts(&r, policy).await, want, "{what}");
    }
}

#[tokio::test]
async fn debian_package_files_changed_by_a_later_layer_fail_has_modified_files() {
    let dir = tempfile::tempdir().unwrap();
    let status = b"Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\nArchitecture: amd64\nMaintainer: Debian\n".to_vec();
    let base = vec![
        (
            "etc/os-release",
            b"ID=debian\nVERSION_ID=\"12\"\n".to_vec(),
            0o644,
        ),
        ("var/lib/dpkg/status", status, 0o644),
        (
            "var/lib/dpkg/info/libc6:amd64.list",
            b"/usr\n/usr/lib\n/usr/lib/libc.so.6\n".to_vec(),
            0o644,
        ),
        ("usr/lib/libc.so.6", b"libc".to_vec(), 0o755),
        ("licenses/LICENSE", b"MIT".to_vec(), 0o644),
    ];
    let clean = Spec {
        layers: vec![
            base.clone(),
            vec![("usr/local/bin/op", b"op".to_vec(), 0o755)],
        ],
        ..good()
    };
    let r = store(dir.path(), "clean", "v1", &clean).await;
    assert_eq!(
        verdicts(&r, Policy::Container).await["HasModifiedFiles"],
        "pass"
    );
    let changed = Spec {
        layers: vec![
            base,
            vec![("usr/lib/libc.so.6", b"patched".to_vec(), 0o755)],
        ],
        ..good()
    };
    let r = store(dir.path(), "changed", "v1", &changed).await;
    let req = ContainerRequest {
        image: r.clone(),
        policy: Policy::Container,
        ..Default::default()
    };
    let report = check(&req).await.unwrap();
    let m = report
        .results
        .iter()
        .find(|x| x.check.name == "HasModifiedFiles")
        .unwrap();
    assert_eq!(m.verdict, Verdict::Failed);
    assert!(
        m.fixes[0].contains("layer 2")
            && m.fixes[0].contains("/usr/lib/libc.so.6")
            && m.fixes[0].contains("libc6-2.36-9"),
        "{:?}",
        m.fixes
    );
}

#[tokio::test]
async fn artifacts_are_written_as_preflight_lays_them_out() {
    let dir = tempfile::tempdir().unwrap();
    let r = store(dir.path(), "acme", "v1", &good()).await;
    let artifacts = dir.path().join("artifacts");
    let req = ContainerRequest {
        image: r.clone(),
        policy: Policy::ScratchNonRoot,
        artifacts: ArtifactOptions {
            dir: Some(artifacts.clone()),
            junit: true,
        },
        ..Default::default()
    };
    let report = check(&req).await.unwrap();
    assert!(report.passed());
    let arch = olm_bundler::image::layout::host_platform().architecture;
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(artifacts.join(&arch).join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["passed"], true);
    assert_eq!(json["image"], r);
    assert_eq!(json["results"]["passed"].as_array().unwrap().len(), 7);
    let junit = std::fs::read_to_string(artifacts.join(&arch).join("results-junit.xml")).unwrap();
    assert!(
        junit.starts_with("<testsuites>\n\t<testsuite tests=\"7\" failures=\"0\" warnings=\"0\"")
    );
    assert!(artifacts.join(&arch).join("checks.log").is_file());
}
