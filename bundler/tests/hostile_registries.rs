//! Registries that answer with hostile input: a manifest padded past the 4 MiB limit (with
//! its length announced, and streamed without one), blob requests redirected to another host
//! (credentials must not follow), a blob streamed past its descriptor's size, and a blob
//! altered in a real registry's storage.

#[path = "support/crafted.rs"]
mod crafted;
#[path = "support/fake_http.rs"]
mod fake_http;
#[path = "support/registry.rs"]
mod registry;

use std::process::Command;
use std::time::{Duration, Instant};

use fake_http::{Reply, Request, Server};

const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

fn olm(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn api_root(req: &Request) -> Option<Reply> {
    (req.path == "/v2/").then(|| {
        Reply::Full(
            200,
            vec![(
                "Docker-Distribution-API-Version".into(),
                "registry/2.0".into(),
            )],
            b"{}".to_vec(),
        )
    })
}

#[test]
fn oversized_manifests_from_a_registry_are_refused_quickly() {
    let server = Server::start(|req| {
        if let Some(r) = api_root(req) {
            return r;
        }
        let headers = vec![("Content-Type".to_string(), MANIFEST_TYPE.to_string())];
        let mut body = br#"{"schemaVersion":2,"layers":[]}"#.to_vec();
        if req.path.ends_with("/announced") {
            body.resize(64 << 20, b' ');
            Reply::Full(200, headers, body)
        } else {
            // 64 chunks of 1 MiB, no length: refused once past 4 MiB.
            Reply::Chunked(200, headers, vec![b' '; 1 << 20], 64)
        }
    });
    for (tag, size_text) in [
        ("announced", "67108864 bytes"),
        ("streamed", "over the 4 MiB"),
    ] {
        let reference = format!("{}/r:{tag}", server.addr);
        let started = Instant::now();
        let (code, _, err) = olm(&["image", "inspect", "--plain-http", &reference]);
        let took = started.elapsed();
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(&reference), "{err}");
        assert!(err.contains(size_text) && err.contains("4 MiB"), "{err}");
        assert!(took < Duration::from_secs(5), "{tag}: took {took:?}");
    }
}

#[test]
fn credentials_do_not_follow_a_blob_redirect_to_another_host() {
    // The image: one config, one layer, served by the "CDN" the registry redirects to.
    let layer = crafted::tar(&[crafted::Entry::File("hello".into(), b"hi".to_vec())]);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": crafted::host_arch(), "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [crafted::sha256(&layer)]},
    }))
    .unwrap();
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": crafted::sha256(&config), "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": crafted::sha256(&layer), "size": layer.len()}],
    }))
    .unwrap();
    let blobs = [
        (crafted::sha256(&config), config.clone()),
        (crafted::sha256(&layer), layer.clone()),
    ];
    let cdn = Server::start(move |req| {
        match blobs.iter().find(|(d, _)| req.path.ends_with(d.as_str())) {
            Some((_, b)) => Reply::Full(200, vec![], b.clone()),
            None => Reply::Full(404, vec![], vec![]),
        }
    });
    let cdn_addr = cdn.addr.clone();
    let registry = Server::start(move |req| {
        if req.header("authorization").is_none() {
            return Reply::Full(
                401,
                vec![("WWW-Authenticate".into(), "Basic realm=\"olm-test\"".into())],
                vec![],
            );
        }
        if let Some(r) = api_root(req) {
            return r;
        }
        if req.path.contains("/manifests/") {
            return Reply::Full(
                200,
                vec![("Content-Type".into(), MANIFEST_TYPE.into())],
                manifest.clone(),
            );
        }
        let digest = req.path.rsplit('/').next().unwrap_or("");
        Reply::Full(
            307,
            vec![(
                "Location".into(),
                format!("http://{cdn_addr}/storage/{digest}"),
            )],
            vec![],
        )
    });
    let tmp = tempfile::tempdir().unwrap();
    let dest = format!("oci:{}:t", tmp.path().join("out").display());
    let (code, out, err) = olm(&[
        "image",
        "copy",
        "--plain-http",
        "--creds",
        "user:s3cret-pass",
        &format!("{}/r:t", registry.addr),
        &dest,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("s3cret-pass") && !err.contains("s3cret-pass"));
    let blob_requests: Vec<_> = registry
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("/blobs/"))
        .collect();
    assert!(
        !blob_requests.is_empty(),
        "the blobs came from the registry"
    );
    assert!(
        blob_requests
            .iter()
            .any(|r| r.header("authorization").is_some()),
        "the registry itself was asked with credentials"
    );
    let at_cdn = cdn.requests();
    assert_eq!(at_cdn.len(), 2, "{at_cdn:?}");
    for r in &at_cdn {
        assert!(
            r.header("authorization").is_none(),
            "credentials followed the redirect to {}: {r:?}",
            cdn.addr
        );
    }
}

#[test]
fn a_blob_altered_in_registry_storage_is_refused() {
    let Some(reg) = registry::Registry::start(registry::Variant::Plain) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let layout = tmp.path().join("src");
    let layer = crafted::tar(&[crafted::Entry::File(
        "configs/x.json".into(),
        b"{\"schema\":\"olm.package\",\"name\":\"x\"}".to_vec(),
    )]);
    crafted::layout(&layout, "t", std::slice::from_ref(&layer), &[]);
    let image = reg.image("tampered/img:t");
    let (code, _, err) = olm(&[
        "image",
        "copy",
        &format!("oci:{}:t", layout.display()),
        &image,
    ]);
    assert_eq!(code, Some(0), "{err}");
    // Flip one byte of the layer where the registry keeps it.
    let hex = crafted::sha256(&layer)
        .trim_start_matches("sha256:")
        .to_string();
    let data = reg
        .storage()
        .join("docker/registry/v2/blobs/sha256")
        .join(&hex[..2])
        .join(&hex)
        .join("data");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[600] ^= 0xff;
    std::fs::write(&data, bytes).unwrap();
    for args in [
        vec!["image", "copy", &image, "PLACEHOLDER"],
        vec!["catalog", "render", &image],
    ] {
        let out_ref = format!("oci:{}:t", tmp.path().join("out").display());
        let args: Vec<&str> = args
            .into_iter()
            .map(|a| {
                if a == "PLACEHOLDER" {
                    out_ref.as_str()
                } else {
                    a
                }
            })
            .collect();
        let (code, _, err) = olm(&args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(err.contains(&hex), "{args:?}: {err}");
        assert!(err.contains("digest"), "{args:?}: {err}");
    }
    assert!(
        !tmp.path().join("out/blobs/sha256").join(&hex).exists(),
        "the altered blob was stored"
    );
}

/// A blob read stops at its descriptor's size: a registry that answers a 1 KiB layer with
/// an endless stream is cut off there, and the copy fails naming the blob.
#[test]
fn a_blob_longer_than_its_descriptor_is_cut_off() {
    let layer = crafted::tar(&[crafted::Entry::File("hello".into(), b"hi".to_vec())]);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": crafted::host_arch(), "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [crafted::sha256(&layer)]},
    }))
    .unwrap();
    let layer_digest = crafted::sha256(&layer);
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": crafted::sha256(&config), "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": layer.len()}],
    }))
    .unwrap();
    let config_digest = crafted::sha256(&config);
    let server = Server::start(move |req| {
        if let Some(r) = api_root(req) {
            return r;
        }
        if req.path.contains("/manifests/") {
            return Reply::Full(
                200,
                vec![("Content-Type".into(), MANIFEST_TYPE.into())],
                manifest.clone(),
            );
        }
        if req.path.ends_with(&config_digest) {
            return Reply::Full(200, vec![], config.clone());
        }
        // The layer: 64 MiB where 1 KiB or so was announced.
        Reply::Chunked(200, vec![], vec![0u8; 1 << 20], 64)
    });
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (code, _, err) = olm(&[
        "image",
        "copy",
        "--plain-http",
        "--retries",
        "0",
        &format!("{}/r:t", server.addr),
        &format!("oci:{}:t", tmp.path().join("out").display()),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(layer_digest.trim_start_matches("sha256:")),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
    let stored = tmp.path().join("out/blobs/sha256");
    assert!(
        !stored
            .join(layer_digest.trim_start_matches("sha256:"))
            .exists()
    );
}
