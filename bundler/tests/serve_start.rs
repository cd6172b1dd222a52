//! `olm catalog serve`'s start-up as a library call (`ops::serve`), no binary spawned: a
//! catalog directory served on port 0 with the cache built in process, the gRPC registry and
//! catalogd's HTTP API answering from it, a cache-only run, and the usage mistakes refused
//! before anything starts.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};

use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::ops::serve::{
    self, CacheBuilder, HttpApi, ServeRequest, ServeStartError, Started,
};
use olm_bundler::serve::proto::api::{self, registry_client::RegistryClient};

fn catalog() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog")
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn request(cache_dir: Option<PathBuf>) -> ServeRequest {
    ServeRequest {
        catalog: catalog(),
        confined_configs: None,
        grpc_addr: loopback(),
        cache_dir,
        cache_only: false,
        cache_scratch: false,
        cache_grpc_only: false,
        cache_site_name: None,
        cache_enforce_integrity: None,
        http: Some(HttpApi {
            addr: loopback(),
            catalog_name: Some("operatorhub".into()),
            tls: None,
        }),
        registry: RegistryOptions::default(),
        cache_builder: CacheBuilder::InProcess,
    }
}

fn http_get(addr: SocketAddr, path: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..split]).to_string();
    (head, out[split + 4..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_starts_as_a_library_call_and_answers_both_apis() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("cache");
    // A first start builds the cache (in process, as asked). With a cache dir, opm enforces
    // integrity by default, which would refuse the empty dir: rebuild instead.
    let mut req = request(Some(dir.clone()));
    req.cache_enforce_integrity = Some(false);
    let Started::Listening(server) = serve::start(req).await.unwrap() else {
        panic!("not listening");
    };
    assert!(server.cache_rebuilt, "a new cache dir is built");
    assert!(server.entries > 0);
    let (grpc, http) = (server.grpc_addr, server.http_addr.unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));

    let mut client = RegistryClient::connect(format!("http://{grpc}"))
        .await
        .unwrap();
    let mut names = Vec::new();
    let mut stream = client
        .list_packages(api::ListPackageRequest {})
        .await
        .unwrap()
        .into_inner();
    while let Some(p) = stream.message().await.unwrap() {
        names.push(p.name);
    }
    assert_eq!(names, ["reverse-words-operator"]);

    let (head, body) =
        tokio::task::spawn_blocking(move || http_get(http, "/catalogs/operatorhub/api/v1/all"))
            .await
            .unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("content-type: application/jsonl")
    );
    let first = body.split(|b| *b == b'\n').next().unwrap();
    let v: serde_json::Value = serde_json::from_slice(first).unwrap();
    assert_eq!(v["schema"], "olm.package");

    stop.send(()).unwrap();
    task.await.unwrap().unwrap();

    // The cache it built is fresh: a second start with integrity enforced opens it.
    let mut req = request(Some(dir));
    req.http = None;
    let Started::Listening(server) = serve::start(req).await.unwrap() else {
        panic!("not listening");
    };
    assert!(!server.cache_rebuilt);
}

#[tokio::test]
async fn cache_only_builds_and_stops() {
    let cache = tempfile::tempdir().unwrap();
    let mut req = request(Some(cache.path().join("c")));
    req.cache_only = true;
    match serve::start(req).await.unwrap() {
        Started::CacheBuilt { dir, stats } => {
            assert!(dir.join("olm-serve.v1").is_dir());
            assert_eq!(stats.packages, 1);
        }
        Started::Listening(_) => panic!("cache-only must not listen"),
    }
}

#[tokio::test]
async fn usage_mistakes_are_refused_before_start() {
    let mut req = request(None);
    req.cache_enforce_integrity = Some(true);
    let err = serve::start(req).await.err().unwrap();
    assert!(matches!(err, ServeStartError::Usage(_)), "{err}");
    assert!(err.to_string().contains("--cache-dir must be specified"));

    let mut req = request(None);
    req.catalog = PathBuf::from("./no-such-catalog");
    let err = serve::start(req).await.err().unwrap();
    assert!(
        err.to_string().contains("no such catalog directory"),
        "{err}"
    );

    // What the HTTP API needs is refused before the image is pulled (there is no registry
    // here: a pull would fail with another error).
    let mut req = request(None);
    req.catalog = PathBuf::from("registry.invalid/org/catalog:v1");
    req.http.as_mut().unwrap().catalog_name = Some("Not_A_Name".into());
    let err = serve::start(req).await.err().unwrap();
    assert!(matches!(err, ServeStartError::Catalogd { .. }), "{err}");
    let text = format!("{:#}", anyhow::Error::new(err));
    assert!(
        text.contains("\"Not_A_Name\"") && text.contains("--catalog-name"),
        "{text}"
    );
    let mut req = request(None);
    req.catalog = PathBuf::from("registry.invalid/org/catalog:v1");
    req.http.as_mut().unwrap().tls = Some(("/no/cert.pem".into(), "/no/key.pem".into()));
    let err = serve::start(req).await.err().unwrap();
    assert!(matches!(err, ServeStartError::Tls(_)), "{err}");
}
