//! The objects operator-sdk scorecard creates to run a test of another image in a cluster,
//! as pure builders: the bundle as a gzipped tarball in a ConfigMap (`binaryData["bundle.tar.gz"]`),
//! and per test a Pod whose init container untars it into an emptyDir mounted read-only at
//! `/bundle` in the test container, labelled `testrun=<configmap>` so one delete by label
//! cleans every pod of the run.

use std::io::Write as _;

use serde_json::{Value, json};

use crate::bundle::scorecard::TestConfiguration;
use crate::confined::{EntryKind, RelPath, Tree};

/// The directory holding the bundle inside a test pod.
pub const POD_BUNDLE_ROOT: &str = "/bundle";
/// The test container's name; its log is the result.
pub const TEST_CONTAINER: &str = "scorecard-test";
/// operator-sdk's default untar image (its `--untar-image`).
pub const DEFAULT_UNTAR_IMAGE: &str = "quay.io/operator-framework/scorecard-untar@sha256:2e728c5e67a7f4dec0df157a322dd5671212e8ae60f69137463bd4fdfbff8747";
/// A ConfigMap holds at most 1 MiB.
pub const MAX_BUNDLE_TARBALL: usize = 1024 * 1024;

/// Why the bundle could not be packed.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the bundle packs to {0} bytes, more than a ConfigMap's 1 MiB")]
    TooLarge(usize),
}

/// The characters apimachinery's `rand.String` draws from.
const RAND_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `scorecard-test-` and four characters from `seed`'s bytes (the caller supplies randomness,
/// so the builders stay pure).
pub fn object_name(seed: [u8; 4]) -> String {
    let suffix: String = seed
        .iter()
        .map(|b| RAND_ALPHABET[*b as usize % RAND_ALPHABET.len()] as char)
        .collect();
    format!("scorecard-test-{suffix}")
}

/// The bundle directory as operator-sdk tars it: every directory and regular file under it,
/// named relative to it, in name order. Symlinks and other special files are left out (a
/// bundle from an image is not trusted to point anywhere); times and owners are zeroed so the
/// same bundle packs to the same bytes.
pub fn bundle_tarball(tree: &Tree) -> Result<Vec<u8>, PackError> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut size = 0usize;
    walk(tree, &RelPath::root(), &mut tar, &mut size)?;
    let io = |source| PackError::Io {
        path: tree.shown_root(),
        source,
    };
    let mut gz = tar.into_inner().map_err(io)?;
    gz.flush().map_err(io)?;
    let bytes = gz.finish().map_err(io)?;
    if bytes.len() > MAX_BUNDLE_TARBALL {
        return Err(PackError::TooLarge(bytes.len()));
    }
    Ok(bytes)
}

/// How deep the bundle's directories may nest.
const MAX_DEPTH: usize = 32;

/// `filepath.Walk`'s order: each entry in name order, a directory's contents right after it.
fn walk<W: std::io::Write>(
    tree: &Tree,
    dir: &RelPath,
    tar: &mut tar::Builder<W>,
    size: &mut usize,
) -> Result<(), PackError> {
    let io = |rel: &RelPath| {
        let path = tree.shown(rel);
        move |source| PackError::Io { path, source }
    };
    // A bundle is a few levels deep; a crafted one must not recurse without end.
    if dir.names().count() > MAX_DEPTH {
        return Err(PackError::Io {
            path: tree.shown(dir),
            source: std::io::Error::other(format!(
                "nested more than {MAX_DEPTH} directories deep; a bundle is not"
            )),
        });
    }
    for (name, kind) in tree.read_dir(dir).map_err(io(dir))? {
        let Ok(rel) = dir.child(&name) else {
            continue;
        };
        let child = rel.to_string_lossy().into_owned();
        let mut h = tar::Header::new_gnu();
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        match kind {
            EntryKind::Dir => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                tar.append_data(&mut h, &child, std::io::empty())
                    .map_err(io(&rel))?;
                walk(tree, &rel, tar, size)?;
            }
            EntryKind::File => {
                // Uncompressed input far past what could compress under the limit.
                let left = (MAX_BUNDLE_TARBALL * 16).saturating_sub(*size) as u64;
                let data = tree
                    .read_bounded(&rel, left)
                    .map_err(io(&rel))?
                    .ok_or(PackError::TooLarge(MAX_BUNDLE_TARBALL * 16 + 1))?;
                *size += data.len();
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(0o644);
                h.set_size(data.len() as u64);
                tar.append_data(&mut h, &child, data.as_slice())
                    .map_err(io(&rel))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The ConfigMap holding the bundle tarball.
pub fn config_map(name: &str, namespace: &str, tarball: &[u8]) -> Value {
    use base64::Engine as _;
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": "scorecard-test"},
        },
        "binaryData": {
            "bundle.tar.gz": base64::engine::general_purpose::STANDARD.encode(tarball),
        },
    })
}

/// Where and how the test pods run.
#[derive(Debug, Clone)]
pub struct PodSettings {
    pub namespace: String,
    pub service_account: String,
    pub untar_image: String,
    /// operator-sdk's `--pod-security=restricted`: non-root, no privilege escalation, all
    /// capabilities dropped, the runtime's default seccomp profile.
    pub restricted: bool,
}

/// The Pod running `test` against the bundle in ConfigMap `config_map`.
pub fn test_pod(name: &str, config_map: &str, test: &TestConfiguration, s: &PodSettings) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": s.namespace,
            "labels": {"app": "scorecard-test", "testrun": config_map},
        },
        "spec": {
            "serviceAccountName": s.service_account,
            "restartPolicy": "Never",
            "containers": [{
                "name": TEST_CONTAINER,
                "image": test.image,
                "imagePullPolicy": "IfNotPresent",
                "command": test.entrypoint,
                "volumeMounts": [{"mountPath": POD_BUNDLE_ROOT, "name": "scorecard-untar", "readOnly": true}],
                "env": [{
                    "name": "SCORECARD_NAMESPACE",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                }],
            }],
            "initContainers": [{
                "name": "scorecard-untar",
                "image": s.untar_image,
                "imagePullPolicy": "IfNotPresent",
                "args": ["tar", "xvzf", "/scorecard/bundle.tar.gz", "-C", "/scorecard-bundle"],
                "volumeMounts": [
                    {"mountPath": "/scorecard", "name": "scorecard-bundle", "readOnly": true},
                    {"mountPath": "/scorecard-bundle", "name": "scorecard-untar"},
                ],
            }],
            "volumes": [
                {"name": "scorecard-bundle", "configMap": {"name": config_map}},
                {"name": "scorecard-untar", "emptyDir": {}},
            ],
        },
    });
    if test.entrypoint.is_empty() {
        pod["spec"]["containers"][0]
            .as_object_mut()
            .expect("container")
            .remove("command");
    }
    if s.restricted {
        let ctx = json!({
            "runAsNonRoot": true,
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
        });
        pod["spec"]["securityContext"] =
            json!({"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}});
        pod["spec"]["containers"][0]["securityContext"] = ctx.clone();
        pod["spec"]["initContainers"][0]["securityContext"] = ctx;
    }
    pod
}

/// The label selector that finds every pod of a run.
pub fn run_selector(config_map: &str) -> String {
    format!("testrun={config_map}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> PodSettings {
        PodSettings {
            namespace: "ns".into(),
            service_account: "default".into(),
            untar_image: DEFAULT_UNTAR_IMAGE.into(),
            restricted: false,
        }
    }

    #[test]
    fn names_use_apimachinerys_alphabet() {
        assert_eq!(object_name([0, 1, 2, 26]), "scorecard-test-bcd9");
        let n = object_name([200, 201, 202, 203]);
        assert_eq!(n.len(), "scorecard-test-".len() + 4);
    }

    #[test]
    fn the_pod_is_operator_sdks() {
        let t = TestConfiguration {
            image: "quay.io/x/custom:v1".into(),
            entrypoint: vec!["custom-scorecard-tests".into(), "customtest1".into()],
            ..Default::default()
        };
        let p = test_pod(
            "scorecard-test-abcd",
            "scorecard-test-wxyz",
            &t,
            &settings(),
        );
        assert_eq!(p["metadata"]["labels"]["testrun"], "scorecard-test-wxyz");
        assert_eq!(p["spec"]["restartPolicy"], "Never");
        assert_eq!(p["spec"]["serviceAccountName"], "default");
        let c = &p["spec"]["containers"][0];
        assert_eq!(c["name"], "scorecard-test");
        assert_eq!(
            c["command"],
            json!(["custom-scorecard-tests", "customtest1"])
        );
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/bundle");
        assert_eq!(
            p["spec"]["initContainers"][0]["args"],
            json!([
                "tar",
                "xvzf",
                "/scorecard/bundle.tar.gz",
                "-C",
                "/scorecard-bundle"
            ])
        );
        assert_eq!(
            p["spec"]["volumes"][0]["configMap"]["name"],
            "scorecard-test-wxyz"
        );
        assert!(p["spec"].get("securityContext").is_none());
        let mut s = settings();
        s.restricted = true;
        let p = test_pod("a", "b", &t, &s);
        assert_eq!(
            p["spec"]["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert_eq!(
            p["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"],
            json!(["ALL"])
        );
        // The objects read as the typed Kubernetes API.
        let _: k8s_openapi::api::core::v1::Pod = serde_json::from_value(p).unwrap();
    }

    #[test]
    fn the_bundle_packs_reproducibly_and_without_symlinks() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("manifests")).unwrap();
        std::fs::create_dir_all(d.path().join("metadata")).unwrap();
        std::fs::write(d.path().join("manifests/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(
            d.path().join("metadata/annotations.yaml"),
            "annotations: {}\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("manifests/evil")).unwrap();
        let one = bundle_tarball(&Tree::confined(d.path()).unwrap()).unwrap();
        assert_eq!(
            one,
            bundle_tarball(&Tree::confined(d.path()).unwrap()).unwrap()
        );
        let mut names = Vec::new();
        let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(one.as_slice()));
        for e in ar.entries().unwrap() {
            names.push(e.unwrap().path().unwrap().to_string_lossy().into_owned());
        }
        assert_eq!(
            names,
            [
                "manifests",
                "manifests/a.yaml",
                "metadata",
                "metadata/annotations.yaml"
            ]
        );
        let cm = config_map("scorecard-test-abcd", "ns", &one);
        assert_eq!(cm["metadata"]["labels"]["app"], "scorecard-test");
        let _: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(cm).unwrap();
    }
}
