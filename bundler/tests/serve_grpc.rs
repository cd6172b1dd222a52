//! `api.Registry` through a real tonic client against a server on 127.0.0.1, on the real
//! catalogs in shared/data/catalogs and on a synthetic one; results checked against the model.

#[path = "support/prerequisite.rs"]
mod prerequisite;

#[path = "support/synth.rs"]
mod synth;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use olm_bundler::catalog::model::Model;
use olm_bundler::confined::Tree;
use olm_bundler::serve::index::build;
use olm_bundler::serve::index::cache::{self, CacheError, Integrity};
use olm_bundler::serve::proto::api::{self, registry_client::RegistryClient};
use olm_bundler::serve::runtime::server;
use olm_bundler::serve::runtime::store::Store;
use tokio::sync::oneshot;
use tonic::transport::Channel;

/// shared/data/catalogs beside the repository (CI) or beside the worktree directory.
fn shared() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir())
    .unwrap_or_else(|| manifest.join("../../shared/data"))
    .join("catalogs")
}

/// Every catalog root of the shared data (one per OpenShift version directory).
fn roots() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        let dir = shared().join(repo).join("catalogs");
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            out.push(e.path());
        }
    }
    out.sort();
    out
}

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn client(&self) -> RegistryClient<Channel> {
        RegistryClient::connect(format!("http://{}", self.addr))
            .await
            .expect("connect")
            .max_decoding_message_size(64 << 20)
    }

    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.await.expect("server task");
    }
}

async fn start(store: Store) -> Running {
    let listener = server::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server::serve(Arc::new(store), listener, async {
            let _ = rx.await;
        })
        .await
        .expect("serve");
    });
    Running {
        addr,
        stop: Some(tx),
        task,
    }
}

/// Serves `root` from a freshly built cache directory (the production path).
async fn start_cached(root: &Path, cache_dir: &Path) -> Running {
    cache::build_cache(&Tree::host(root), cache_dir).expect("build cache");
    let (store, stats) =
        cache::open(&Tree::host(root), cache_dir, Integrity::Enforce).expect("open cache");
    assert!(!stats.rebuilt);
    start(store).await
}

async fn collect<T>(s: tonic::Streaming<T>) -> Vec<T> {
    s.map(|r| r.expect("stream item")).collect().await
}

type Key = (String, String, String);

async fn channel(addr: SocketAddr) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap()
}

/// Checks every RPC against the model of `root`.
#[allow(deprecated)] // GetBundleForChannel is deprecated upstream but still served.
async fn check_catalog(root: &Path) {
    let (model, _) = Model::load(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let tmp = tempfile::tempdir().unwrap();
    let srv = start_cached(root, tmp.path()).await;
    let mut c = srv.client().await;
    let ctx = root.display().to_string();

    // ListPackages: every package, sorted.
    let names: Vec<String> = collect(
        c.list_packages(api::ListPackageRequest {})
            .await
            .unwrap()
            .into_inner(),
    )
    .await
    .into_iter()
    .map(|p| p.name)
    .collect();
    let want: Vec<String> = model.packages().map(|p| p.name.clone()).collect();
    assert_eq!(names, want, "{ctx}: ListPackages");
    assert!(!names.is_empty(), "{ctx}: empty catalog");

    // GetPackage: channels sorted, csvName = head, default channel, deprecation.
    for p in model.packages() {
        let got = c
            .get_package(api::GetPackageRequest {
                name: p.name.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.default_channel_name, p.default_channel, "{ctx}");
        let chans: Vec<(String, String)> = got
            .channels
            .iter()
            .map(|ch| (ch.name.clone(), ch.csv_name.clone()))
            .collect();
        let want: Vec<(String, String)> = p
            .channels
            .values()
            .map(|ch| (ch.name.clone(), ch.head().name.clone()))
            .collect();
        assert_eq!(chans, want, "{ctx}: GetPackage {}", p.name);
        assert_eq!(
            got.deprecation.map(|d| d.message),
            p.deprecation.clone(),
            "{ctx}"
        );
    }

    // ListBundles: one per channel entry with that entry's edges.
    let listed = collect(
        c.list_bundles(api::ListBundlesRequest {})
            .await
            .unwrap()
            .into_inner(),
    )
    .await;
    let mut seen: BTreeMap<Key, api::Bundle> = BTreeMap::new();
    for b in listed {
        let key = (
            b.package_name.clone(),
            b.channel_name.clone(),
            b.csv_name.clone(),
        );
        assert!(seen.insert(key, b).is_none(), "{ctx}: duplicate bundle");
    }
    let entries: Vec<_> = model.entries().collect();
    assert_eq!(seen.len(), entries.len(), "{ctx}: ListBundles count");
    for (r, e, b) in &entries {
        let key = (
            r.package.to_string(),
            r.channel.to_string(),
            r.bundle.to_string(),
        );
        let got = seen
            .get(&key)
            .unwrap_or_else(|| panic!("{ctx}: missing {key:?}"));
        assert_eq!(
            got.replaces,
            e.replaces.clone().unwrap_or_default(),
            "{key:?}"
        );
        assert_eq!(got.skips, e.skips, "{key:?}");
        assert_eq!(
            got.skip_range,
            e.skip_range
                .as_ref()
                .map(|x| x.as_str().to_string())
                .unwrap_or_default(),
            "{key:?}"
        );
        assert_eq!(got.bundle_path, b.image, "{key:?}");
        let version = semver::Version::parse(&got.version).expect("version");
        assert_eq!(version, b.version, "{key:?}");
        // The two large properties never travel.
        assert!(
            got.properties
                .iter()
                .all(|p| p.r#type != "olm.bundle.object" && p.r#type != "olm.csv.metadata"),
            "{key:?}"
        );
        assert!(got.properties.iter().any(|p| p.r#type == "olm.package"));
        let provided: BTreeSet<(String, String, String)> = got
            .provided_apis
            .iter()
            .map(|g| (g.group.clone(), g.version.clone(), g.kind.clone()))
            .collect();
        let want: BTreeSet<(String, String, String)> = b
            .provided_gvks
            .iter()
            .map(|g| (g.group.clone(), g.version.clone(), g.kind.clone()))
            .collect();
        assert_eq!(provided, want, "{key:?}");
        assert_eq!(got.required_apis.len(), b.required_gvks.len(), "{key:?}");
        assert_eq!(
            got.dependencies.len(),
            b.required_gvks.len() + b.required_packages.len(),
            "{key:?}"
        );
        assert_eq!(
            got.deprecation.as_ref().map(|d| &d.message),
            b.deprecation.as_ref()
        );
        if !got.bundle_path.is_empty() {
            assert!(got.csv_json.is_empty() && got.object.is_empty(), "{key:?}");
        }
    }

    // GetBundle for every entry: trimmed edges, CSV present.
    for (r, e, b) in &entries {
        let got = c
            .get_bundle(api::GetBundleRequest {
                pkg_name: r.package.to_string(),
                channel_name: r.channel.to_string(),
                csv_name: r.bundle.to_string(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.csv_name, r.bundle);
        assert_eq!(got.channel_name, r.channel);
        assert!(got.replaces.is_empty() && got.skips.is_empty());
        let has_csv = b.csv_json().is_some() || b.csv_metadata().is_some();
        assert_eq!(!got.csv_json.is_empty(), has_csv, "{ctx}: {}", r.bundle);
        if has_csv {
            let v: serde_json::Value = serde_json::from_str(&got.csv_json).unwrap();
            assert_eq!(v["kind"], "ClusterServiceVersion");
            assert!(!got.object.is_empty());
            if b.csv_json().is_none() {
                // Synthesised: named after the bundle, deployment strategy stub.
                assert_eq!(v["metadata"]["name"], r.bundle);
                assert_eq!(v["spec"]["install"]["strategy"], "deployment");
            }
        }
        let _ = e;
    }

    // GetBundleForChannel = head; GetBundleThatReplaces follows the edges.
    for p in model.packages() {
        for ch in p.channels.values() {
            let got = c
                .get_bundle_for_channel(api::GetBundleInChannelRequest {
                    pkg_name: p.name.clone(),
                    channel_name: ch.name.clone(),
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(got.csv_name, ch.head().name, "{ctx}");
            for e in &ch.entries {
                let Some(rep) = &e.replaces else { continue };
                let got = c
                    .get_bundle_that_replaces(api::GetReplacementRequest {
                        csv_name: rep.clone(),
                        pkg_name: p.name.clone(),
                        channel_name: ch.name.clone(),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                let by = ch.entry(&got.csv_name).expect("replacing entry in channel");
                assert!(
                    by.replaces.as_deref() == Some(rep.as_str()) || by.skips.contains(rep),
                    "{ctx}: {} does not replace {rep}",
                    got.csv_name
                );
                let replacing: BTreeSet<Key> = collect(
                    c.get_channel_entries_that_replace(api::GetAllReplacementsRequest {
                        csv_name: rep.clone(),
                    })
                    .await
                    .unwrap()
                    .into_inner(),
                )
                .await
                .into_iter()
                .map(|x| (x.package_name, x.channel_name, x.bundle_name))
                .collect();
                assert!(replacing.contains(&(p.name.clone(), ch.name.clone(), e.name.clone())));
            }
        }
    }

    // Providers: all entries, heads only, default bundle.
    let gvks: BTreeSet<_> = model
        .packages()
        .flat_map(|p| p.bundles.values())
        .flat_map(|b| b.provided_gvks.clone())
        .collect();
    for g in gvks.iter().take(25) {
        let all: BTreeSet<Key> = collect(
            c.get_channel_entries_that_provide(api::GetAllProvidersRequest {
                group: g.group.clone(),
                version: g.version.clone(),
                kind: g.kind.clone(),
                plural: String::new(),
            })
            .await
            .unwrap()
            .into_inner(),
        )
        .await
        .into_iter()
        .map(|x| (x.package_name, x.channel_name, x.bundle_name))
        .collect();
        let want: BTreeSet<Key> = model
            .providers_of(g)
            .map(|(r, _, _)| (r.package.into(), r.channel.into(), r.bundle.into()))
            .collect();
        assert_eq!(all, want, "{ctx}: providers of {g}");

        let heads: BTreeSet<Key> = model
            .packages()
            .flat_map(|p| p.channels.values().map(move |ch| (p, ch)))
            .filter(|(p, ch)| {
                p.bundle(&ch.head().name)
                    .is_some_and(|b| b.provided_gvks.contains(g))
            })
            .map(|(p, ch)| (p.name.clone(), ch.name.clone(), ch.head().name.clone()))
            .collect();
        let latest = c
            .get_latest_channel_entries_that_provide(api::GetLatestProvidersRequest {
                group: g.group.clone(),
                version: g.version.clone(),
                kind: g.kind.clone(),
                plural: String::new(),
            })
            .await;
        let default = c
            .get_default_bundle_that_provides(api::GetDefaultProviderRequest {
                group: g.group.clone(),
                version: g.version.clone(),
                kind: g.kind.clone(),
                plural: String::new(),
            })
            .await;
        if heads.is_empty() {
            let err = latest.unwrap_err();
            assert!(
                err.message()
                    .starts_with("no channel entries found that provide")
            );
            assert!(default.is_err());
            continue;
        }
        let latest: BTreeSet<Key> = collect(latest.unwrap().into_inner())
            .await
            .into_iter()
            .map(|x| (x.package_name, x.channel_name, x.bundle_name))
            .collect();
        assert_eq!(latest, heads, "{ctx}: latest providers of {g}");
        let want_default = heads
            .iter()
            .find(|(p, ch, _)| model.package(p).is_some_and(|p| &p.default_channel == ch));
        match (want_default, default) {
            (Some((_, ch, b)), Ok(got)) => {
                let got = got.into_inner();
                assert_eq!((&got.channel_name, &got.csv_name), (ch, b), "{ctx}: {g}");
            }
            (None, Err(e)) => assert!(e.message().starts_with("no entry found that provides")),
            (w, g2) => panic!("{ctx}: default provider of {g}: want {w:?}, got {g2:?}"),
        }
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rpc_matches_the_model_on_the_shared_catalogs() {
    let roots = roots();
    if roots.is_empty() {
        prerequisite::missing(&format!("{} not found", shared().display()));
        return;
    }
    for root in roots {
        check_catalog(&root).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rpc_matches_the_model_on_a_synthetic_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let mut shape = synth::Shape::opm(1);
    shape.packages = 20;
    synth::write(dir.path(), &shape, synth::Syntax::Yaml).unwrap();
    check_catalog(dir.path()).await;
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/serve/catalog")
}

fn status_of<T: std::fmt::Debug>(r: Result<tonic::Response<T>, tonic::Status>) -> tonic::Status {
    r.expect_err("want an error")
}

#[tokio::test]
async fn errors_use_opm_codes_and_messages() {
    let (model, _) = Model::load(&fixture()).unwrap();
    let srv = start(build::in_memory(&model, &[])).await;
    let mut c = srv.client().await;

    let s = status_of(
        c.get_package(api::GetPackageRequest {
            name: "nope".into(),
        })
        .await,
    );
    assert_eq!(s.code(), tonic::Code::Unknown);
    assert_eq!(s.message(), "package \"nope\" not found");
    let s = status_of(
        c.get_package(api::GetPackageRequest {
            name: String::new(),
        })
        .await,
    );
    assert_eq!(s.message(), "package \"\" not found");

    let s = status_of(
        c.get_bundle(api::GetBundleRequest {
            pkg_name: "etcd".into(),
            channel_name: "nope".into(),
            csv_name: "x".into(),
        })
        .await,
    );
    assert_eq!(s.message(), "package \"etcd\", channel \"nope\" not found");
    let s = status_of(
        c.get_bundle(api::GetBundleRequest {
            pkg_name: "etcd".into(),
            channel_name: "stable".into(),
            csv_name: "x".into(),
        })
        .await,
    );
    assert_eq!(
        s.message(),
        "package \"etcd\", channel \"stable\", bundle \"x\" not found"
    );
    let s = status_of(
        c.get_bundle_that_replaces(api::GetReplacementRequest {
            csv_name: "x".into(),
            pkg_name: "nope".into(),
            channel_name: "stable".into(),
        })
        .await,
    );
    assert_eq!(s.message(), "package nope not found");
    let s = status_of(
        c.get_bundle_that_replaces(api::GetReplacementRequest {
            csv_name: "x".into(),
            pkg_name: "etcd".into(),
            channel_name: "stable".into(),
        })
        .await,
    );
    assert_eq!(
        s.message(),
        "no entry found for package \"etcd\", channel \"stable\""
    );
    let s = status_of(
        c.get_channel_entries_that_replace(api::GetAllReplacementsRequest {
            csv_name: "x".into(),
        })
        .await,
    );
    assert_eq!(s.message(), "no channel entries found that replace x");
    let s = status_of(
        c.get_channel_entries_that_provide(api::GetAllProvidersRequest {
            group: "g".into(),
            version: "v".into(),
            kind: "K".into(),
            plural: String::new(),
        })
        .await,
    );
    assert_eq!(
        s.message(),
        "no channel entries found that provide group:\"g\" version:\"v\" kind:\"K\""
    );

    // A 1 MiB name: refused with a bounded message, server unharmed.
    let huge = "a".repeat(1 << 20);
    let s = status_of(c.get_package(api::GetPackageRequest { name: huge }).await);
    assert_eq!(s.code(), tonic::Code::Unknown);
    assert!(s.message().len() < 2048, "{}", s.message().len());
    // Bigger than the 4 MiB message limit: rejected by the transport, server unharmed.
    let huger = "a".repeat(5 << 20);
    let s = status_of(c.get_package(api::GetPackageRequest { name: huger }).await);
    assert_ne!(s.code(), tonic::Code::Ok);
    let mut c = srv.client().await;
    let got = c
        .get_package(api::GetPackageRequest {
            name: "etcd".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.default_channel_name, "stable");
    srv.stop().await;
}

#[tokio::test]
async fn fixture_bundle_fields_are_filled_like_opm() {
    let (model, _) = Model::load(&fixture()).unwrap();
    let srv = start(build::in_memory(&model, &[])).await;
    let mut c = srv.client().await;
    let pkg = c
        .get_package(api::GetPackageRequest {
            name: "etcd".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let chans: Vec<_> = pkg
        .channels
        .iter()
        .map(|c| (c.name.as_str(), c.csv_name.as_str()))
        .collect();
    assert_eq!(
        chans,
        vec![("alpha", "etcd.v0.2.0"), ("stable", "etcd.v0.2.0")]
    );
    assert_eq!(
        pkg.channels[0]
            .deprecation
            .as_ref()
            .map(|d| d.message.as_str()),
        Some("alpha is gone")
    );

    let all = collect(
        c.list_bundles(api::ListBundlesRequest {})
            .await
            .unwrap()
            .into_inner(),
    )
    .await;
    let v2 = all
        .iter()
        .find(|b| b.csv_name == "etcd.v0.2.0" && b.channel_name == "stable")
        .unwrap();
    assert_eq!(v2.replaces, "etcd.v0.1.0");
    assert_eq!(v2.skips, vec!["etcd.v0.1.1".to_string()]);
    assert_eq!(v2.skip_range, "<0.2.0");
    assert_eq!(v2.version, "0.2.0");
    assert_eq!(v2.bundle_path, "quay.io/example/etcd-bundle:v0.2.0");
    assert!(v2.csv_json.is_empty() && v2.object.is_empty());
    assert_eq!(v2.dependencies.len(), 2);
    assert_eq!(v2.dependencies[0].r#type, "olm.gvk");
    assert_eq!(
        v2.dependencies[0].value,
        r#"{"group":"example.com","kind":"Backup","version":"v1"}"#
    );
    assert_eq!(v2.dependencies[1].r#type, "olm.package");
    assert_eq!(
        v2.dependencies[1].value,
        r#"{"packageName":"backup","version":">=1.0.0"}"#
    );
    assert_eq!(v2.required_apis[0].kind, "Backup");
    assert_eq!(v2.provided_apis[0].kind, "EtcdCluster");
    assert!(v2.provided_apis[0].plural.is_empty());

    // Without an image, ListBundles carries the manifests (OLM installs from them).
    let v1 = all.iter().find(|b| b.csv_name == "etcd.v0.1.0").unwrap();
    assert!(v1.bundle_path.is_empty());
    assert_eq!(v1.object.len(), 2);
    let csv: serde_json::Value = serde_json::from_str(&v1.csv_json).unwrap();
    assert_eq!(csv["metadata"]["name"], "etcd.v0.1.0");
    assert_eq!(v1.deprecation.as_ref().unwrap().message, "use 0.2.0");

    // GetBundle with an image still carries the CSV (synthesised from olm.csv.metadata here).
    let b = c
        .get_bundle(api::GetBundleRequest {
            pkg_name: "etcd".into(),
            channel_name: "stable".into(),
            csv_name: "etcd.v0.2.0".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(b.replaces.is_empty() && b.skips.is_empty());
    assert_eq!(b.skip_range, "<0.2.0");
    let csv: serde_json::Value = serde_json::from_str(&b.csv_json).unwrap();
    assert_eq!(csv["spec"]["displayName"], "etcd");
    assert_eq!(csv["spec"]["version"], "0.2.0");
    assert_eq!(csv["spec"]["icon"][0]["mediatype"], "image/svg+xml");
    assert_eq!(b.object, vec![b.csv_json.clone()]);

    // Skips become extra provider entries.
    let prov = collect(
        c.get_channel_entries_that_provide(api::GetAllProvidersRequest {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "EtcdCluster".into(),
            plural: String::new(),
        })
        .await
        .unwrap()
        .into_inner(),
    )
    .await;
    assert!(
        prov.iter()
            .any(|e| e.bundle_name == "etcd.v0.2.0" && e.replaces == "etcd.v0.1.1")
    );

    // Custom schemas through the experimental API.
    use olm_bundler::serve::proto::api::experimental_registry_client::ExperimentalRegistryClient;
    let cfg = olm_bundler::catalog::load::load_dir(&fixture()).unwrap();
    let srv2 = start(build::in_memory(&model, &cfg.others)).await;
    let mut x = ExperimentalRegistryClient::connect(format!("http://{}", srv2.addr))
        .await
        .unwrap();
    let blobs = collect(
        x.experimental_list_package_custom_schemas(
            api::ExperimentalListPackageCustomSchemasRequest {
                schema: "vendor.example.notes".into(),
                package_name: "etcd".into(),
            },
        )
        .await
        .unwrap()
        .into_inner(),
    )
    .await;
    assert_eq!(blobs.len(), 1);
    assert!(blobs[0].fields.contains_key("text"));
    srv2.stop().await;
    srv.stop().await;
}

#[tokio::test]
async fn health_and_reflection_answer() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    let (model, _) = Model::load(&fixture()).unwrap();
    let srv = start(build::in_memory(&model, &[])).await;
    let mut h = HealthClient::new(channel(srv.addr).await);
    for service in ["", "Registry", "api.Registry"] {
        let r = h
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.status, 1, "SERVING for {service:?}");
    }

    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let mut r = ServerReflectionClient::new(channel(srv.addr).await);
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut resp = r
        .server_reflection_info(futures::stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let msg = resp.next().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = msg.message_response else {
        panic!("unexpected reflection answer");
    };
    let names: BTreeSet<String> = list.service.into_iter().map(|s| s.name).collect();
    for want in ["api.Registry", "grpc.health.v1.Health"] {
        assert!(names.contains(want), "{names:?}");
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_list_bundles_streams() {
    let root = shared().join("community-operators-prod/catalogs/v4.20");
    let root = if root.exists() { root } else { fixture() };
    let (model, _) = Model::load(&root).unwrap();
    let want = model.entries().count();
    let srv = start(build::in_memory(&model, &[])).await;
    let addr = srv.addr;
    let mut tasks = Vec::new();
    for _ in 0..200 {
        tasks.push(tokio::spawn(async move {
            let mut c = RegistryClient::connect(format!("http://{addr}"))
                .await
                .unwrap();
            let s = c
                .list_bundles(api::ListBundlesRequest {})
                .await
                .unwrap()
                .into_inner();
            collect(s).await.len()
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), want);
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_mid_stream_does_not_hurt_the_server() {
    let root = shared().join("community-operators-prod/catalogs/v4.20");
    let root = if root.exists() { root } else { fixture() };
    let (model, _) = Model::load(&root).unwrap();
    let want = model.entries().count();
    let srv = start(build::in_memory(&model, &[])).await;
    for _ in 0..5 {
        let mut c = srv.client().await;
        let mut s = c
            .list_bundles(api::ListBundlesRequest {})
            .await
            .unwrap()
            .into_inner();
        let first = s.next().await.unwrap().unwrap();
        assert!(!first.csv_name.is_empty());
        drop(s);
        drop(c);
    }
    let mut c = srv.client().await;
    let all = collect(
        c.list_bundles(api::ListBundlesRequest {})
            .await
            .unwrap()
            .into_inner(),
    )
    .await;
    assert_eq!(all.len(), want);
    srv.stop().await;
}

#[test]
fn cache_integrity_is_enforced_and_rebuilt() {
    let src = tempfile::tempdir().unwrap();
    let cat = src.path().join("catalog.yaml");
    std::fs::copy(fixture().join("catalog.yaml"), &cat).unwrap();
    let cache_dir = tempfile::tempdir().unwrap();

    // Nothing cached yet: enforcing fails clearly, rebuilding works.
    let err = cache::open(
        &Tree::host(src.path()),
        cache_dir.path(),
        Integrity::Enforce,
    )
    .unwrap_err();
    assert!(matches!(err, CacheError::Missing(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("integrity check failed: read existing cache digest")
    );
    let (_, stats) = cache::open(
        &Tree::host(src.path()),
        cache_dir.path(),
        Integrity::Rebuild,
    )
    .unwrap();
    assert!(stats.rebuilt);
    let (_, stats) = cache::open(
        &Tree::host(src.path()),
        cache_dir.path(),
        Integrity::Enforce,
    )
    .unwrap();
    assert!(!stats.rebuilt);
    assert!(cache::is_fresh(&Tree::host(src.path()), cache_dir.path()).unwrap());

    // Edit the catalog: stale.
    let text = std::fs::read_to_string(&cat).unwrap();
    std::fs::write(&cat, text.replace("alpha is gone", "alpha is really gone")).unwrap();
    assert!(!cache::is_fresh(&Tree::host(src.path()), cache_dir.path()).unwrap());
    let err = cache::open(
        &Tree::host(src.path()),
        cache_dir.path(),
        Integrity::Enforce,
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "integrity check failed: cache requires rebuild: cache reports digest as \""
        ),
        "{msg}"
    );
    assert!(msg.contains("but computed digest is"), "{msg}");
    let (store, stats) = cache::open(
        &Tree::host(src.path()),
        cache_dir.path(),
        Integrity::Rebuild,
    )
    .unwrap();
    assert!(stats.rebuilt);
    assert_eq!(
        store
            .channel("etcd", "alpha")
            .unwrap()
            .deprecation
            .as_ref()
            .unwrap()
            .message,
        "alpha is really gone"
    );

    // A file added next to the catalog counts too.
    std::fs::write(src.path().join("extra.json"), "").unwrap();
    assert!(!cache::is_fresh(&Tree::host(src.path()), cache_dir.path()).unwrap());

    // Foreign contents in the cache dir are refused, not overwritten.
    let foreign = tempfile::tempdir().unwrap();
    std::fs::create_dir(foreign.path().join("pogreb.v1")).unwrap();
    let err = cache::build_cache(&Tree::host(src.path()), foreign.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cache directory has unexpected contents: pogreb.v1"
    );

    // An invalid catalog names the problem and leaves no cache.
    std::fs::write(
        &cat,
        text.replace("defaultChannel: stable", "defaultChannel: nope"),
    )
    .unwrap();
    let bad = tempfile::tempdir().unwrap();
    let err = cache::build_cache(&Tree::host(src.path()), bad.path()).unwrap_err();
    assert!(err.to_string().contains("invalid catalog"), "{err}");
    assert!(!bad.path().join("olm-serve.v1/index.pb").exists());
}

#[test]
fn a_cached_store_answers_like_an_in_memory_one() {
    let root = fixture();
    let (model, _) = Model::load(&root).unwrap();
    let mem = build::in_memory(&model, &[]);
    let dir = tempfile::tempdir().unwrap();
    cache::build_cache(&Tree::host(&root), dir.path()).unwrap();
    let (disk, _) = cache::open(&Tree::host(&root), dir.path(), Integrity::Enforce).unwrap();
    assert_eq!(mem.entry_count(), disk.entry_count());
    for (a, b) in mem.entries().zip(disk.entries()) {
        assert_eq!(
            mem.api_bundle(&a, true).unwrap(),
            disk.api_bundle(&b, true).unwrap()
        );
    }
}

/// Bundles with only `olm.csv.metadata` get their stub CSV per request: the cache stores each
/// package's icon once (not once per bundle), and every bundle still answers with a CSV that
/// carries the icon, its own name and version, as a scratch cache serves it too.
#[test]
fn stub_csvs_are_built_per_request_from_one_copy_of_the_icon() {
    let src = tempfile::tempdir().unwrap();
    let shape = synth::Shape {
        packages: 3,
        bundles_per_package: 10,
    };
    synth::write(src.path(), &shape, synth::Syntax::Yaml).unwrap();
    let dir = tempfile::tempdir().unwrap();
    cache::build_cache_with(
        &Tree::host(src.path()),
        dir.path(),
        cache::Durability::Scratch,
    )
    .unwrap();
    let (store, _) = cache::open(&Tree::host(src.path()), dir.path(), Integrity::Enforce).unwrap();
    let payloads = std::fs::read(dir.path().join("olm-serve.v1/payloads.bin")).unwrap();
    let mut bundles = 0;
    for e in store.entries() {
        let b = store.api_bundle(&e, true).unwrap();
        let csv: serde_json::Value = serde_json::from_str(&b.csv_json).unwrap();
        assert_eq!(csv["metadata"]["name"], b.csv_name.as_str());
        assert_eq!(csv["spec"]["version"], b.version.as_str());
        let icon = csv["spec"]["icon"][0]["base64data"].as_str().unwrap();
        assert!(icon.len() > 1000, "the package icon is in the stub");
        let copies = payloads
            .windows(icon.len())
            .filter(|w| *w == icon.as_bytes())
            .count();
        assert_eq!(copies, 1, "{}: icon stored {copies} times", b.csv_name);
        assert_eq!(b.object, vec![b.csv_json.clone()]);
        bundles += 1;
    }
    assert_eq!(bundles, store.entry_count());
    assert!(bundles >= 30);
}

/// `olm.csv.metadata` only has to be an object to validate (as in opm); one whose fields have
/// the wrong types cannot become a stub CSV. The server then serves the bundle without a CSV
/// (and says so in its log) instead of failing the call.
#[test]
fn a_metadata_value_of_the_wrong_shape_serves_no_csv() {
    let cat = r#"{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"quay.io/p/b:1",
 "properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},
               {"type":"olm.csv.metadata","value":{"keywords":5}}]}
"#;
    let cfg = olm_bundler::catalog::load::load_bytes(Path::new("c.json"), cat.as_bytes()).unwrap();
    let (model, _) = Model::from_declcfg_owned(cfg).unwrap();
    let store = build::in_memory(&model, &[]);
    let e = store.entries().next().unwrap();
    let b = store.api_bundle(&e, true).unwrap();
    assert_eq!(b.csv_name, "p.v1.0.0");
    assert!(b.csv_json.is_empty());
    assert!(b.object.is_empty());
}
