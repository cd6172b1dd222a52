//! The SBOM `olm image build` writes, checked against independent sources: the image's files
//! as `olm image pull --rootfs` unpacks them (hashed here), the Debian package that owns
//! libc as `dpkg -S` and `dpkg-query` report it, and the crates of a `.dep-v0` section put
//! into a real binary with binutils' `objcopy`. An SPDX validator (`pyspdxtools`, from
//! spdx-tools; scripts/test.sh installs it) checks the document when it is there.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sha2::{Digest as _, Sha256};

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("SOURCE_DATE_EPOCH");
    c
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn have(tool: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()));
    if !found {
        prerequisite::missing(&format!("{tool} not installed"));
    }
    found
}

const DEPS: &str = r#"{"packages":[
{"name":"demo-operator","version":"0.3.0","source":"local","dependencies":[1,2],"root":true},
{"name":"serde","version":"1.0.228","source":"crates.io"},
{"name":"proc-macro2","version":"1.0.101","source":"crates.io","kind":"build"}
]}"#;

/// A copy of the host's dynamic `true` with a cargo-auditable section added.
fn auditable_binary(dir: &Path) -> PathBuf {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(DEPS.as_bytes()).unwrap();
    let section = dir.join("deps.zlib");
    std::fs::write(&section, z.finish().unwrap()).unwrap();
    let bin = dir.join("demo-operator");
    ok(
        Command::new("objcopy")
            .arg(format!("--add-section=.dep-v0={}", section.display()))
            .arg("/bin/true")
            .arg(&bin)
            .output()
            .unwrap(),
        "objcopy --add-section",
    );
    bin
}

fn files_of(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            files_of(root, &p, out);
        } else if meta.is_file() {
            let rel = format!("/{}", p.strip_prefix(root).unwrap().display());
            out.insert(rel, hex::encode(Sha256::digest(std::fs::read(&p).unwrap())));
        }
    }
}

fn purls(doc: &Value) -> Vec<String> {
    doc["packages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["externalRefs"].as_array().cloned().unwrap_or_default())
        .map(|r| r["referenceLocator"].as_str().unwrap().to_string())
        .collect()
}

/// pyspdxtools from PATH or the virtualenv scripts/test.sh makes.
fn spdx_validator() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/spdx-venv/bin/pyspdxtools");
    if venv.is_file() {
        return Some(venv);
    }
    have("pyspdxtools").then(|| PathBuf::from("pyspdxtools"))
}

/// `/bin/true`, the dynamic binary the images are built from (missing: fails under CI).
fn have_true() -> bool {
    let found = Path::new("/bin/true").is_file();
    if !found {
        prerequisite::missing("/bin/true");
    }
    found
}

#[test]
fn image_build_writes_an_spdx_sbom_of_every_file_package_and_crate() {
    if !have("objcopy") || !have_true() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = auditable_binary(tmp.path());
    let layout = tmp.path().join("operator");
    let dest = format!("oci:{}:v1", layout.display());
    let build = || {
        ok(
            olm()
                .args(["image", "build", "--binary"])
                .arg(&bin)
                .args(["-t", &dest])
                .output()
                .unwrap(),
            "olm image build",
        )
    };
    let pinned = build();
    let sbom_path = tmp.path().join("operator.spdx.json");
    let bytes = std::fs::read(&sbom_path).expect("the SBOM beside the layout");
    build();
    assert_eq!(
        std::fs::read(&sbom_path).unwrap(),
        bytes,
        "same image, same SBOM bytes"
    );
    let doc: Value = serde_json::from_slice(&bytes).unwrap();

    // The document's required shape.
    assert_eq!(doc["spdxVersion"], "SPDX-2.3");
    assert_eq!(doc["dataLicense"], "CC0-1.0");
    assert_eq!(doc["SPDXID"], "SPDXRef-DOCUMENT");
    let digest = pinned.trim().rsplit_once('@').unwrap().1;
    let hex = digest.strip_prefix("sha256:").unwrap();
    assert!(
        doc["documentNamespace"].as_str().unwrap().ends_with(hex),
        "{}",
        doc["documentNamespace"]
    );
    assert_eq!(doc["creationInfo"]["created"], "1970-01-01T00:00:00Z");
    assert!(
        doc["creationInfo"]["creators"][0]
            .as_str()
            .unwrap()
            .starts_with("Tool: olm-")
    );
    let root = &doc["packages"][0];
    assert_eq!(root["versionInfo"], digest);
    let rels = doc["relationships"].as_array().unwrap();
    assert!(rels.iter().any(|r| r["spdxElementId"] == "SPDXRef-DOCUMENT"
        && r["relationshipType"] == "DESCRIBES"
        && r["relatedSpdxElement"] == root["SPDXID"]));

    // Every file of the image, with its SHA-256, and nothing else.
    let rootfs = tmp.path().join("rootfs");
    ok(
        olm()
            .args(["image", "pull", &dest, "--rootfs"])
            .arg(&rootfs)
            .output()
            .unwrap(),
        "olm image pull --rootfs",
    );
    let mut on_disk = BTreeMap::new();
    files_of(&rootfs, &rootfs, &mut on_disk);
    let listed: BTreeMap<String, String> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let sums = f["checksums"].as_array().unwrap();
            assert_eq!(sums[0]["algorithm"], "SHA1");
            assert_eq!(sums[1]["algorithm"], "SHA256");
            (
                f["fileName"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches('.')
                    .to_string(),
                sums[1]["checksumValue"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(listed, on_disk);
    assert!(listed.contains_key("/usr/local/bin/demo-operator"));

    // The crates compiled in (the build-only proc-macro2 is not).
    let purls = purls(&doc);
    assert!(
        purls.contains(&"pkg:cargo/serde@1.0.228".to_string()),
        "{purls:?}"
    );
    assert!(
        purls.contains(&"pkg:cargo/demo-operator@0.3.0".to_string()),
        "{purls:?}"
    );
    assert!(
        !purls.iter().any(|p| p.contains("proc-macro2")),
        "{purls:?}"
    );

    // libc's Debian package and version, as dpkg itself reports them.
    let libc = listed
        .keys()
        .find(|p| p.ends_with("/libc.so.6"))
        .expect("libc in the image");
    if have("dpkg-query") {
        let owner = ok(
            Command::new("dpkg").args(["-S", libc]).output().unwrap(),
            "dpkg -S",
        );
        let package = owner.split(':').next().unwrap().trim().to_string();
        assert_eq!(package, "libc6", "{owner}");
        let q = ok(
            Command::new("dpkg-query")
                .args(["-W", "-f=${Version} ${Architecture}", "libc6"])
                .output()
                .unwrap(),
            "dpkg-query",
        );
        let (version, arch) = q.trim().split_once(' ').unwrap();
        let escaped = version.replace('+', "%2B").replace(':', "%3A");
        let want = format!("pkg:deb/debian/libc6@{escaped}?arch={arch}");
        assert!(
            purls.iter().any(|p| p.starts_with(&want)),
            "{want} in {purls:?}"
        );
        let pkg = doc["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "libc6")
            .unwrap();
        assert_eq!(pkg["versionInfo"], version);
        let libc_id = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["fileName"] == format!(".{libc}"))
            .unwrap()["SPDXID"]
            .clone();
        assert!(rels.iter().any(|r| r["spdxElementId"] == pkg["SPDXID"]
            && r["relationshipType"] == "CONTAINS"
            && r["relatedSpdxElement"] == libc_id));
    }

    if let Some(validator) = spdx_validator() {
        ok(
            Command::new(validator)
                .arg("-i")
                .arg(&sbom_path)
                .output()
                .unwrap(),
            "pyspdxtools -i (SPDX validation)",
        );
    }
}

#[test]
fn sbom_flags_place_or_skip_it() {
    if !have_true() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("elsewhere/sbom.json");
    let layout = tmp.path().join("img");
    ok(
        olm()
            .args(["image", "build", "--binary", "/bin/true", "-t"])
            .arg(format!("oci:{}", layout.display()))
            .arg("--sbom")
            .arg(&out)
            .output()
            .unwrap(),
        "build --sbom",
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["name"], "true");
    assert!(!tmp.path().join("img.spdx.json").exists());
    let layout2 = tmp.path().join("img2");
    ok(
        olm()
            .args(["image", "build", "--binary", "/bin/true", "--no-sbom", "-t"])
            .arg(format!("oci:{}", layout2.display()))
            .output()
            .unwrap(),
        "build --no-sbom",
    );
    assert!(!tmp.path().join("img2.spdx.json").exists());
    let both = olm()
        .args([
            "image",
            "build",
            "--binary",
            "/bin/true",
            "--no-sbom",
            "--sbom",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
}
