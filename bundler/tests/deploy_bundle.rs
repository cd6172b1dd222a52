//! `olm install --bundle` and `olm upgrade --bundle`: the catalog built on the fly is pushed to
//! a real `docker-registry` on 127.0.0.1 and checked with skopeo and by rendering the pushed
//! image; the cluster side runs through the fake API server of the flow tests
//! (tests/support/fake_kube.rs), which plays OLM.

#[path = "support/fake_kube.rs"]
mod fake_kube;
#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fake_kube::*;
use olm_bundler::deploy::bundle_catalog::CatalogBuild;
use olm_bundler::deploy::bundle_flow::{self, BundleInstall, BundleUpgrade, PreparedCatalog};
use olm_bundler::deploy::flow::{self, FlowError};
use olm_bundler::deploy::objects::{
    Approval, CatalogServing, CatalogSpec, InstallMode, InstallSpec, Targets,
};
use olm_bundler::image::auth::Credentials;
use olm_bundler::image::registry::RegistryOptions;
use registry::{Registry, Variant};
use serde_json::{Value, json};

fn olm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The bundle template with its package and version filled in.
fn bundle_dir(root: &Path, package: &str, version: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy/bundle-template");
    let dest = root.join(format!("{package}-{version}"));
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(dest.join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            let body = std::fs::read_to_string(e.path())
                .unwrap()
                .replace("@PACKAGE@", package)
                .replace("@VERSION@", version);
            std::fs::write(dest.join(sub).join(e.file_name()), body).unwrap();
        }
    }
    dest
}

/// Builds the bundle and pushes it as `<registry>/<package>-bundle:v<version>`.
fn push_bundle(reg: &Registry, tmp: &Path, package: &str, version: &str) -> String {
    let dir = bundle_dir(tmp, package, version);
    let reference = reg.image(&format!("{package}-bundle:v{version}"));
    let mut args = vec![
        "bundle".to_string(),
        "build".into(),
        dir.display().to_string(),
        "-t".into(),
        reference.clone(),
        "--push".into(),
    ];
    args.extend(reg.olm_args());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = olm(&args);
    assert!(out.status.success(), "bundle build: {}", text(&out));
    reference
}

/// A small stand-in for the olm binary the catalog image serves with: these tests check the
/// catalog the image carries, not its server (catalog_image_run.rs runs that).
fn build(registry: RegistryOptions) -> CatalogBuild {
    CatalogBuild {
        olm_binary: PathBuf::from("/bin/true"),
        ca_bundle: None,
        created: 0,
        labels: Default::default(),
        registry,
    }
}

/// The FBC blobs of a pushed catalog image, as `olm catalog render` reads them back.
fn render(reg: &Registry, reference: &str) -> Vec<Value> {
    let mut args = vec!["catalog".to_string(), "render".into(), reference.into()];
    args.extend(reg.olm_args());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = olm(&args);
    assert!(out.status.success(), "render {reference}: {}", text(&out));
    serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .map(|v| v.unwrap())
        .collect()
}

fn blobs<'a>(all: &'a [Value], schema: &str) -> Vec<&'a Value> {
    all.iter().filter(|b| b["schema"] == schema).collect()
}

fn skopeo_digest(reg: &Registry, reference: &str) -> String {
    let mut args = vec!["inspect".to_string()];
    args.extend(reg.skopeo_inspect_args());
    args.push(format!("docker://{reference}"));
    let out = registry::skopeo(&args);
    assert!(out.status.success(), "skopeo: {}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["Digest"].as_str().unwrap().to_string()
}

fn install_spec(p: &PreparedCatalog) -> InstallSpec {
    InstallSpec {
        package: p.package.clone(),
        namespace: NS.into(),
        channel: Some(p.channel.clone()),
        starting_csv: Some(p.csv.clone()),
        approval: Approval::Automatic,
        mode: InstallMode::OwnNamespace,
        targets: Targets::resolve(InstallMode::OwnNamespace, NS, &[]).unwrap(),
        catalog: CatalogSpec {
            name: format!("{}-catalog", p.package),
            serving: CatalogServing::Image {
                image: p.catalog_image.clone(),
                poll_interval: Some("10m".into()),
            },
            display_name: "Demo".into(),
            publisher: None,
        },
        operator_group_name: format!("{}-og", p.package),
    }
}

fn tools() -> bool {
    registry::have("docker-registry") && registry::have("skopeo")
}

#[tokio::test]
async fn install_bundle_pushes_a_one_bundle_catalog_and_subscribes_to_it() {
    if !tools() {
        return;
    }
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let bundle = push_bundle(&reg, tmp.path(), "demo", "1.0.0");
    let req = BundleInstall {
        bundle_image: bundle.clone(),
        index_image: None,
        channel: None,
        package: None,
        build: build(RegistryOptions::default()),
    };
    let prepared = bundle_flow::prepare_install(&req, &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(prepared.package, "demo");
    assert_eq!(prepared.csv, "demo.v1.0.0");
    assert_eq!(prepared.version.to_string(), "1.0.0");
    assert_eq!(prepared.channel, "stable", "the bundle's default channel");
    assert_eq!(
        prepared.index_image,
        reg.image("demo-bundle-index:demo.v1.0.0")
    );
    let (repo, digest) = prepared.catalog_image.split_once('@').unwrap();
    assert_eq!(repo, reg.image("demo-bundle-index"));
    // skopeo, an independent client, sees the pushed tag at the pinned digest.
    assert_eq!(skopeo_digest(&reg, &prepared.index_image), digest);

    // The image carries exactly the one-bundle catalog.
    let fbc = render(&reg, &prepared.catalog_image);
    let pkgs = blobs(&fbc, "olm.package");
    assert_eq!(pkgs.len(), 1);
    assert_eq!(pkgs[0]["name"], "demo");
    assert_eq!(pkgs[0]["defaultChannel"], "stable");
    let channels = blobs(&fbc, "olm.channel");
    assert_eq!(channels.len(), 1);
    assert_eq!(channels[0]["name"], "stable");
    assert_eq!(channels[0]["entries"], json!([{"name": "demo.v1.0.0"}]));
    let bundles = blobs(&fbc, "olm.bundle");
    assert_eq!(bundles.len(), 1);
    assert_eq!(bundles[0]["name"], "demo.v1.0.0");
    assert_eq!(
        bundles[0]["image"], bundle,
        "OLM's unpack job pulls the bundle image it was given"
    );

    // Same inputs, same image: a re-run uploads nothing and pins the same digest.
    let again = bundle_flow::prepare_install(&req, &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(again.catalog_image, prepared.catalog_image);

    // The install creates the CatalogSource with the pushed image and follows it to the CSV.
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let out = flow::install(
        &client,
        &install_spec(&prepared),
        false,
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.csv, "demo.v1.0.0");
    let srv = server.lock().unwrap();
    let created = srv
        .bodies
        .iter()
        .find(|(k, _)| k.starts_with("POST") && k.ends_with("/catalogsources"))
        .expect("CatalogSource created");
    assert_eq!(created.1["metadata"]["name"], "demo-catalog");
    assert_eq!(created.1["spec"]["image"], prepared.catalog_image.as_str());
    assert_eq!(created.1["spec"]["sourceType"], "grpc");
    let sub = &srv.objects[&sub_path("demo")];
    assert_eq!(sub["spec"]["channel"], "stable");
    assert_eq!(sub["spec"]["startingCSV"], "demo.v1.0.0");
}

#[tokio::test]
async fn install_bundle_takes_channel_and_index_image_flags() {
    if !tools() {
        return;
    }
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let bundle = push_bundle(&reg, tmp.path(), "demo", "1.2.0");
    let creds = RegistryOptions {
        creds: Some(Credentials::new(registry::USER, registry::PASSWORD)),
        ..Default::default()
    };
    let prepared = bundle_flow::prepare_install(
        &BundleInstall {
            bundle_image: bundle,
            // No tag: the CSV name becomes the tag.
            index_image: Some(reg.image("team/catalogs")),
            channel: Some("candidate".into()),
            package: Some("demo".into()),
            build: build(creds),
        },
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(prepared.index_image, reg.image("team/catalogs:demo.v1.2.0"));
    assert_eq!(prepared.channel, "candidate");
    let fbc = render(&reg, &prepared.index_image);
    assert_eq!(blobs(&fbc, "olm.package")[0]["defaultChannel"], "candidate");
    assert_eq!(blobs(&fbc, "olm.channel")[0]["name"], "candidate");

    // --package must match the bundle; a mismatch stops before anything is pushed.
    let err = bundle_flow::prepare_install(
        &BundleInstall {
            bundle_image: reg.image("demo-bundle:v1.2.0"),
            index_image: Some(reg.image("team/wrong:x")),
            channel: None,
            package: Some("other".into()),
            build: build(RegistryOptions {
                creds: Some(Credentials::new(registry::USER, registry::PASSWORD)),
                ..Default::default()
            }),
        },
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("holds demo.v1.2.0 of package \"demo\", not of package \"other\""),
        "{err}"
    );
    let mut args = vec!["inspect".to_string()];
    args.extend(reg.skopeo_inspect_args());
    args.push(format!("docker://{}", reg.image("team/wrong:x")));
    assert!(!registry::skopeo(&args).status.success(), "nothing pushed");
}

#[tokio::test]
async fn registry_failures_are_clear_and_show_no_secret() {
    if !tools() {
        return;
    }
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let bundle = push_bundle(&reg, tmp.path(), "demo", "1.0.0");
    let wrong = "Wr0ng-Secret-Value";
    let err = bundle_flow::prepare_install(
        &BundleInstall {
            bundle_image: bundle.clone(),
            index_image: None,
            channel: None,
            package: None,
            build: build(RegistryOptions {
                creds: Some(Credentials::new(registry::USER, wrong)),
                retries: 0,
                ..Default::default()
            }),
        },
        &mut Recorder::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!("cannot pull bundle image {bundle}: ")),
        "{err}"
    );
    assert!(err.contains("authentication failed"), "{err}");
    assert!(!err.contains(wrong), "secret leaked: {err}");

    // Pulling works, pushing cannot reach the index registry.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = bundle_flow::prepare_install(
        &BundleInstall {
            bundle_image: bundle,
            index_image: Some(format!("127.0.0.1:{dead}/demo-index:x")),
            channel: None,
            package: None,
            build: build(RegistryOptions {
                creds: Some(Credentials::new(registry::USER, registry::PASSWORD)),
                retries: 0,
                ..Default::default()
            }),
        },
        &mut Recorder::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!(
            "cannot push catalog image 127.0.0.1:{dead}/demo-index:x: "
        )),
        "{err}"
    );
    assert!(!err.contains(registry::PASSWORD), "secret leaked: {err}");

    // A bundle the cluster could not pull is refused before anything is downloaded.
    let err = bundle_flow::prepare_install(
        &BundleInstall {
            bundle_image: format!("oci:{}:v1", tmp.path().display()),
            index_image: None,
            channel: None,
            package: None,
            build: build(RegistryOptions::default()),
        },
        &mut Recorder::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("the cluster pulls the bundle image itself"),
        "{err}"
    );
}

/// The v1 catalog installed and served by an olm-made CatalogSource, as `olm install --bundle`
/// leaves it; returns the objects and the pinned v1 catalog image.
async fn installed_from_bundle(reg: &Registry, tmp: &Path) -> (Objects, String) {
    let v1 = push_bundle(reg, tmp, "demo", "1.0.0");
    let prepared = bundle_flow::prepare_install(
        &BundleInstall {
            bundle_image: v1,
            index_image: None,
            channel: None,
            package: None,
            build: build(RegistryOptions::default()),
        },
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    let mut objs = installed();
    objs.get_mut(&cs_path("demo-catalog")).unwrap()["spec"]["image"] =
        json!(prepared.catalog_image);
    (objs, prepared.catalog_image)
}

fn upgrade_req(bundle: &str) -> BundleUpgrade {
    BundleUpgrade {
        package: "demo".into(),
        namespace: NS.into(),
        bundle_image: bundle.to_string(),
        index_image: None,
        build: build(RegistryOptions::default()),
    }
}

#[tokio::test]
async fn upgrade_bundle_extends_the_served_catalog_and_moves_the_subscription() {
    if !tools() {
        return;
    }
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (objs, v1_catalog) = installed_from_bundle(&reg, tmp.path()).await;
    let v2 = push_bundle(&reg, tmp.path(), "demo", "2.0.0");

    // OLM: once the CatalogSource serves another image, resolve demo.v2.0.0 into a plan that
    // needs approval (the Subscription is Manual); once approved, install the CSV.
    let old = v1_catalog.clone();
    let controller: Controller = Box::new(move |objs: &mut Objects| {
        if objs[&cs_path("demo-catalog")]["spec"]["image"] == old.as_str() {
            return;
        }
        let ip = ip_path("install-v2");
        if !objs.contains_key(&ip) {
            objs.insert(
                ip.clone(),
                json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                       "metadata": {"name": "install-v2", "namespace": NS},
                       "spec": {"clusterServiceVersionNames": ["demo.v2.0.0"], "approval": "Manual", "approved": false},
                       "status": {"phase": "RequiresApproval"}}),
            );
            let st = &mut objs.get_mut(&sub_path("demo")).unwrap()["status"];
            st["currentCSV"] = json!("demo.v2.0.0");
            st["state"] = json!("UpgradePending");
            st["installPlanRef"] = json!({"name": "install-v2", "namespace": NS});
            return;
        }
        if objs[&ip]["spec"]["approved"] == json!(true)
            && !objs.contains_key(&csv_path("demo.v2.0.0"))
        {
            objs.get_mut(&ip).unwrap()["status"]["phase"] = json!("Complete");
            objs.insert(
                csv_path("demo.v2.0.0"),
                json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                       "metadata": {"name": "demo.v2.0.0", "namespace": NS},
                       "spec": {}, "status": {"phase": "Succeeded"}}),
            );
            objs.get_mut(&sub_path("demo")).unwrap()["status"]["installedCSV"] =
                json!("demo.v2.0.0");
        }
    });
    let (client, server) = fake(true, objs, controller);
    let out = bundle_flow::upgrade_bundle(
        &client,
        &upgrade_req(&v2),
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.from, "demo.v1.0.0");
    assert_eq!(out.to, "demo.v2.0.0");
    assert_eq!(out.bundle_csv, "demo.v2.0.0");
    assert_eq!(out.install_plan, "install-v2");
    assert_eq!(out.channel, "stable");
    assert_eq!(out.catalog_source, format!("{NS}/demo-catalog"));
    assert_eq!(out.index_image, reg.image("demo-bundle-index:demo.v2.0.0"));
    assert_ne!(out.catalog_image, v1_catalog);
    assert_eq!(
        skopeo_digest(&reg, &out.index_image),
        out.catalog_image.split_once('@').unwrap().1
    );

    {
        let srv = server.lock().unwrap();
        let patches: Vec<&(String, Value)> = srv
            .bodies
            .iter()
            .filter(|(k, _)| k.starts_with("PATCH"))
            .collect();
        assert_eq!(patches.len(), 2, "{patches:?}");
        assert_eq!(patches[0].0, format!("PATCH {}", cs_path("demo-catalog")));
        assert_eq!(
            patches[0].1,
            json!({"spec": {"image": out.catalog_image.as_str(), "address": null}})
        );
        assert_eq!(patches[1].1, json!({"spec": {"approved": true}}));
    }

    // The new catalog is the old one plus the bundle, chained to the installed CSV.
    let fbc = render(&reg, &out.catalog_image);
    let names: Vec<&str> = blobs(&fbc, "olm.bundle")
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["demo.v1.0.0", "demo.v2.0.0"]);
    let stable = blobs(&fbc, "olm.channel");
    assert_eq!(stable.len(), 1);
    assert_eq!(
        stable[0]["entries"],
        json!([
            {"name": "demo.v1.0.0"},
            {"name": "demo.v2.0.0", "replaces": "demo.v1.0.0", "skipRange": "<2.0.0"}
        ])
    );
    // And it validates as a catalog directory, as opm would check it.
    let dir = tmp.path().join("pulled");
    let mut args = vec![
        "image".to_string(),
        "pull".into(),
        out.catalog_image.clone(),
    ];
    args.extend(["--rootfs".into(), dir.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let pulled = olm(&args);
    assert!(pulled.status.success(), "{}", text(&pulled));
    let v = olm(&["catalog", "validate", dir.join("configs").to_str().unwrap()]);
    assert!(v.status.success(), "{}", text(&v));
}

fn no_writes(server: &Shared) {
    let srv = server.lock().unwrap();
    assert!(
        srv.bodies.is_empty(),
        "nothing may change on a refused upgrade: {:?}",
        srv.bodies
    );
}

#[tokio::test]
async fn upgrade_bundle_refuses_what_it_cannot_do_and_changes_nothing() {
    if !tools() {
        return;
    }
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (objs, _) = installed_from_bundle(&reg, tmp.path()).await;
    let other = push_bundle(&reg, tmp.path(), "other", "3.0.0");
    let older = push_bundle(&reg, tmp.path(), "demo", "0.9.0");
    let v2 = push_bundle(&reg, tmp.path(), "demo", "2.0.0");
    let run = |objs: Objects, bundle: String| async move {
        let (client, server) = fake(true, objs, Box::new(|_| {}));
        let err = bundle_flow::upgrade_bundle(
            &client,
            &upgrade_req(&bundle),
            fast(500),
            &mut Recorder::default(),
        )
        .await
        .unwrap_err();
        no_writes(&server);
        err
    };

    let err = run(objs.clone(), other.clone()).await.to_string();
    assert_eq!(
        err,
        format!(
            "bundle image {other} holds other.v3.0.0 of package \"other\", not of package \"demo\""
        )
    );

    let err = run(objs.clone(), older).await.to_string();
    assert_eq!(
        err,
        "demo.v0.9.0 (version 0.9.0) is not newer than the installed demo.v1.0.0 (version 1.0.0); build a bundle with a higher spec.version"
    );

    // The installed version itself is already in the catalog.
    let v1 = reg.image("demo-bundle:v1.0.0");
    let err = run(objs.clone(), v1).await.to_string();
    assert!(
        err.contains("demo.v1.0.0 is already in package \"demo\""),
        "{err}"
    );

    // A CatalogSource olm did not create is not rewritten.
    let mut foreign = objs.clone();
    foreign.get_mut(&cs_path("demo-catalog")).unwrap()["metadata"]["labels"] = json!({});
    let err = run(foreign, v2.clone()).await;
    assert!(matches!(err, FlowError::Conflict(_)), "{err:?}");
    assert!(
        err.to_string().contains(
            "was not created by olm, so `olm upgrade --bundle` will not replace its catalog"
        ),
        "{err}"
    );

    // Nothing installed.
    let err = run(Objects::new(), v2.clone()).await.to_string();
    assert_eq!(
        err,
        "package \"demo\" is not installed in namespace \"ops\" (no Subscription for it)"
    );

    // The installed CSV is not in the served catalog: the new bundle cannot chain to it.
    let mut behind = objs.clone();
    let st = &mut behind.get_mut(&sub_path("demo")).unwrap()["status"];
    st["installedCSV"] = json!("demo.v0.5.0");
    let err = run(behind, v2).await.to_string();
    assert!(
        err.contains("the installed CSV demo.v0.5.0 is not in channel \"stable\""),
        "{err}"
    );
}

#[test]
fn cli_usage_errors_exit_2_and_bundle_installs_reach_the_cluster_first() {
    let out = olm(&["install", "--namespace", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--catalog"), "{}", text(&out));
    let out = olm(&["install", "--bundle", "r.io/b:v1", "--catalog", "r.io/c:v1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = olm(&[
        "install",
        "--catalog",
        "r.io/c:v1",
        "--package",
        "p",
        "--index-image",
        "r.io/i",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--index-image needs --bundle: {}",
        text(&out)
    );
    let out = olm(&[
        "upgrade",
        "demo",
        "--bundle",
        "r.io/b:v2",
        "--channel",
        "fast",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // A broken kubeconfig stops the command before anything is pulled or pushed.
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope.yaml");
    let out = olm(&[
        "install",
        "--bundle",
        "127.0.0.1:1/demo-bundle:v1",
        "--kubeconfig",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("nope.yaml"), "{}", text(&out));
    assert!(!text(&out).contains("Pulling"), "{}", text(&out));

    // Bad install flags are reported before the cluster is even contacted.
    let out = olm(&[
        "install",
        "--bundle",
        "127.0.0.1:1/demo-bundle:v1",
        "--install-mode",
        "single",
        "--kubeconfig",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--target-namespaces"), "{}", text(&out));
    assert!(!text(&out).contains("nope.yaml"), "{}", text(&out));
}

/// The catalog rules of an upgrade, offline: bundles read from directories as if pulled.
#[test]
fn upgrade_catalog_chains_to_the_installed_head_only() {
    use olm_bundler::deploy::bundle_catalog::{
        BundleCatalogError, add_upgrade, read_bundle, single_bundle_catalog,
    };
    let tmp = tempfile::tempdir().unwrap();
    let read = |v: &str| {
        read_bundle(
            &olm_bundler::confined::Tree::host(&bundle_dir(tmp.path(), "demo", v)),
            &format!("registry.test/demo-bundle:v{v}"),
        )
        .unwrap()
    };
    let v1 = read("1.0.0");
    assert_eq!(v1.skip_range.as_deref(), Some("<1.0.0"));
    assert_eq!(v1.channels, ["stable", "candidate"]);
    let mut cfg = single_bundle_catalog(&v1, "stable").unwrap();
    add_upgrade(
        &mut cfg,
        "cat:v1",
        &read("1.5.0"),
        "demo",
        "stable",
        "demo.v1.0.0",
    )
    .unwrap();
    assert_eq!(cfg.channels[0].entries.len(), 2);
    assert_eq!(cfg.channels[0].entries[1].replaces, "demo.v1.0.0");

    // v1 is no longer the head: chaining v2 to it would leave two heads.
    let before = cfg.clone();
    let err = add_upgrade(
        &mut cfg,
        "cat:v2",
        &read("2.0.0"),
        "demo",
        "stable",
        "demo.v1.0.0",
    )
    .unwrap_err();
    assert!(matches!(err, BundleCatalogError::NotHead { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "channel \"stable\" of the catalog already moved past the installed CSV demo.v1.0.0 (its head is demo.v1.5.0); run `olm upgrade demo` to reach the head first, then upgrade to the bundle"
    );
    assert_eq!(cfg, before, "a refused upgrade leaves the catalog alone");

    let err = add_upgrade(
        &mut cfg,
        "cat:v2",
        &read("2.0.0"),
        "demo",
        "fast",
        "demo.v1.5.0",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "catalog image cat:v2: package \"demo\" has no channel \"fast\" (channels: stable)"
    );
}

/// A TLS registry with a private CA: `--ca-file` reaches both the bundle pull and the push.
#[tokio::test]
async fn install_bundle_over_tls_with_a_private_ca() {
    if !tools() || !registry::have("openssl") {
        return;
    }
    let Some(reg) = Registry::start(Variant::Tls) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let bundle = push_bundle(&reg, tmp.path(), "demo", "1.0.0");
    let req = |ca: Option<PathBuf>| BundleInstall {
        bundle_image: bundle.clone(),
        index_image: None,
        channel: None,
        package: None,
        build: build(RegistryOptions {
            ca_file: ca,
            retries: 0,
            ..Default::default()
        }),
    };
    let err = bundle_flow::prepare_install(&req(None), &mut Recorder::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--ca-file"),
        "says how to trust the registry: {err}"
    );
    let prepared =
        bundle_flow::prepare_install(&req(Some(reg.ca_cert())), &mut Recorder::default())
            .await
            .unwrap();
    assert_eq!(
        skopeo_digest(&reg, &prepared.index_image),
        prepared.catalog_image.split_once('@').unwrap().1
    );
}
