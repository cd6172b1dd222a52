//! DeployableByOLM on a cluster, through the install flow `olm install` uses (so it works on
//! any Kubernetes with OLM, not only OpenShift): a new namespace (and a target namespace for
//! the Single/MultiNamespace modes), the bundle in a one-bundle catalog (an image pushed next
//! to the bundle's, as preflight's index image, or served by this process at an address the
//! cluster reaches), an OperatorGroup for the install mode, a Subscription, and a wait for
//! the CSV to succeed; then everything it created is removed, whatever the verdict.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};

use crate::bundle::load::BundleDir;
use crate::certify::CheckResult;
use crate::certify::operator::DEPLOYABLE_BY_OLM;
use crate::certify::operator::deployable::{self, Mode, Plan};
use crate::deploy::bundle_catalog::{self, CatalogBuild};
use crate::deploy::flow::{self, FlowError, FlowOptions, Progress, UninstallSpec};
use crate::deploy::objects::{Approval, CatalogAddress, CatalogServing, InstallMode};
use crate::image::registry::RegistryOptions;
use crate::ops::install::SpecInputs;

/// How the one-bundle catalog reaches the cluster.
#[derive(Debug, Clone)]
pub enum CatalogMode {
    /// Built as an image and pushed (to `index_image`, default: the bundle's repository with
    /// `-index`), served by OLM from a pod: preflight's way.
    Image {
        index_image: Option<String>,
        /// The `olm` binary the catalog image serves with.
        olm_binary: PathBuf,
    },
    /// Served by this process on `listen`; the CatalogSource dials `address` (this machine
    /// as the cluster reaches it), as `olm install --catalog-address` does.
    Serve { listen: SocketAddr, address: String },
}

impl CatalogMode {
    /// Serving from this machine at `address` (HOST:PORT as the cluster dials it), listening
    /// on every interface on its port.
    pub fn serving(address: &str) -> Result<CatalogMode, String> {
        let parsed = CatalogAddress::parse(address).map_err(|e| e.to_string())?;
        let port = address
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .ok_or_else(|| format!("{parsed:?}: no port"))?;
        Ok(CatalogMode::Serve {
            listen: SocketAddr::from(([0, 0, 0, 0], port)),
            address: address.to_string(),
        })
    }
}

/// The cluster and how to deploy to it.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// The channel to subscribe to (default: the bundle's default channel).
    pub channel: Option<String>,
    pub catalog: CatalogMode,
    /// preflight waits 180 s for the Subscription and 180 s for the CSV.
    pub timeout: Duration,
}

/// Random lowercase letters and digits for the namespaces' suffix.
fn suffix() -> String {
    let mut bytes = [0u8; 5];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
    bytes
        .iter()
        .map(|b| b"abcdefghijklmnopqrstuvwxyz0123456789"[usize::from(*b) % 36] as char)
        .collect()
}

fn inputs(plan: &Plan) -> SpecInputs {
    let mode = match plan.mode {
        Mode::OwnNamespace => InstallMode::OwnNamespace,
        Mode::SingleNamespace => InstallMode::SingleNamespace,
        Mode::MultiNamespace => InstallMode::MultiNamespace,
        Mode::AllNamespaces => InstallMode::AllNamespaces,
    };
    SpecInputs {
        package: plan.package.clone(),
        namespace: Some(plan.install_namespace.clone()),
        channel: plan.channel.clone(),
        install_mode: mode,
        target_namespaces: match plan.mode {
            Mode::OwnNamespace | Mode::AllNamespaces => vec![],
            _ => plan.target_namespaces.clone(),
        },
        approval: Approval::Automatic,
        starting_csv: Some(plan.csv.clone()),
        catalog_name: Some(plan.app.clone()),
        display_name: Some(format!("{} (olm check)", plan.package)),
        publisher: Some("olm check".into()),
        poll_interval: "10m".into(),
        operator_group_name: Some(plan.app.clone()),
    }
}

/// DeployableByOLM for `bundle` (unpacked from the image `bundle_image`).
pub async fn deployable_by_olm(
    bundle_image: &str,
    bundle: &BundleDir,
    settings: &ClusterSettings,
    registry: &RegistryOptions,
    progress: &mut dyn Progress,
) -> CheckResult {
    let check = &DEPLOYABLE_BY_OLM;
    if bundle_catalog::parse_bundle_ref(bundle_image).is_err() {
        return CheckResult::not_run(
            check,
            format!(
                "{bundle_image} is not a registry image: the cluster pulls the bundle, so push it \
                 (olm bundle build --push) and check the image"
            ),
        );
    }
    let plan = match deployable::plan(bundle, settings.channel.as_deref(), &suffix()) {
        Ok(p) => p,
        Err(e) => return CheckResult::error(check, e),
    };
    let client = match crate::deploy::cluster::client(
        settings.kubeconfig.as_deref(),
        settings.context.as_deref(),
    )
    .await
    {
        Ok(c) => c,
        Err(e) => return CheckResult::error(check, e.to_string()),
    };
    let serving = match &settings.catalog {
        CatalogMode::Image {
            index_image,
            olm_binary,
        } => {
            let build = match CatalogBuild::on_this_host(olm_binary.clone(), registry.clone()) {
                Ok(b) => b,
                Err(e) => return CheckResult::error(check, e.to_string()),
            };
            let req = crate::deploy::bundle_flow::BundleInstall {
                bundle_image: bundle_image.to_string(),
                index_image: index_image.clone(),
                channel: plan.channel.clone(),
                package: Some(plan.package.clone()),
                build,
            };
            match crate::deploy::bundle_flow::prepare_install(&req, progress).await {
                Ok(p) => Served::Image(CatalogServing::Image {
                    image: p.catalog_image,
                    poll_interval: None,
                }),
                Err(e) => return CheckResult::error(check, e.to_string()),
            }
        }
        CatalogMode::Serve { listen, address } => {
            match serve_catalog(bundle_image, &plan, *listen, address, registry).await {
                Ok(s) => s,
                Err(e) => return CheckResult::error(check, e),
            }
        }
    };
    let opts = FlowOptions {
        timeout: settings.timeout,
        interval: Duration::from_secs(2),
    };
    deploy_with(&client, &plan, serving.serving(), opts, progress).await
}

/// The catalog a deploy installs from, and the server to stop afterwards when this process
/// serves it.
enum Served {
    Image(CatalogServing),
    Local {
        serving: CatalogServing,
        _stop: tokio::sync::oneshot::Sender<()>,
        _dir: crate::scratch::ScratchDir,
    },
}

impl Served {
    fn serving(&self) -> CatalogServing {
        match self {
            Served::Image(s) | Served::Local { serving: s, .. } => s.clone(),
        }
    }
}

async fn serve_catalog(
    bundle_image: &str,
    plan: &Plan,
    listen: SocketAddr,
    address: &str,
    registry: &RegistryOptions,
) -> Result<Served, String> {
    let address = CatalogAddress::parse(address).map_err(|e| e.to_string())?;
    let rendered = bundle_catalog::pull_bundle(bundle_image, registry)
        .await
        .map_err(|e| e.to_string())?;
    let channel = rendered
        .channel(plan.channel.as_deref())
        .map_err(|e| e.to_string())?;
    let cfg =
        bundle_catalog::single_bundle_catalog(&rendered, &channel).map_err(|e| e.to_string())?;
    let dir = crate::scratch::ScratchDir::new().map_err(|e| e.to_string())?;
    bundle_catalog::write_catalog_dir(&cfg, dir.path()).map_err(|e| e.to_string())?;
    let req = crate::ops::serve::ServeRequest {
        catalog: dir.path().to_path_buf(),
        grpc_addr: listen,
        cache_dir: None,
        cache_only: false,
        cache_scratch: false,
        cache_grpc_only: true,
        cache_site_name: None,
        cache_enforce_integrity: None,
        http: None,
        confined_configs: None,
        registry: registry.clone(),
        cache_builder: crate::ops::serve::CacheBuilder::InProcess,
    };
    let server = match crate::ops::serve::start(req)
        .await
        .map_err(|e| e.to_string())?
    {
        crate::ops::serve::Started::Listening(s) => s,
        crate::ops::serve::Started::CacheBuilt { .. } => return Err("no server started".into()),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    Ok(Served::Local {
        serving: CatalogServing::Address(address),
        _stop: stop,
        _dir: dir,
    })
}

/// The deploy itself, on a cluster and a catalog already reachable: namespaces, install,
/// wait, then clean-up. The verdict carries the install's error and what the cluster
/// reports (the CSV's phase and reason, InstallPlan errors, events).
pub async fn deploy_with(
    client: &Client,
    plan: &Plan,
    serving: CatalogServing,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> CheckResult {
    let check = &DEPLOYABLE_BY_OLM;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut created = Vec::new();
    let verdict = async {
        if matches!(plan.mode, Mode::SingleNamespace | Mode::MultiNamespace) {
            let ns = Namespace {
                metadata: kube::api::ObjectMeta {
                    name: Some(plan.target_namespace.clone()),
                    ..Default::default()
                },
                ..Default::default()
            };
            namespaces
                .create(&PostParams::default(), &ns)
                .await
                .map_err(|e| format!("creating namespace {}: {e}", plan.target_namespace))?;
            created.push(plan.target_namespace.clone());
        }
        let spec = inputs(plan)
            .to_spec_serving(serving)
            .map_err(|e| e.to_string())?;
        created.push(plan.install_namespace.clone());
        match flow::install(client, &spec, false, opts, progress).await {
            Ok(out) => Ok(out.csv),
            Err(e) => Err(describe(&e)),
        }
    }
    .await;
    // Clean up in every case: the Subscription and CSV, the CatalogSource and OperatorGroup,
    // then the namespaces this check made.
    let uninstall = UninstallSpec {
        package: plan.package.clone(),
        namespace: plan.install_namespace.clone(),
        delete_crds: false,
        delete_operator_group: true,
    };
    let _ = flow::uninstall(client, &uninstall, opts, &mut flow::Silent).await;
    for ns in created.iter().rev() {
        let _ = namespaces.delete(ns, &DeleteParams::default()).await;
    }
    let note = format!(
        "namespace {} ({}{}), channel {}",
        plan.install_namespace,
        plan.mode.as_str(),
        if plan.target_namespaces.is_empty() {
            String::new()
        } else {
            format!(", targets {}", plan.target_namespaces.join(", "))
        },
        plan.channel.as_deref().unwrap_or("(the package's default)")
    );
    match verdict {
        Ok(csv) => CheckResult::passed(check).note(format!("CSV {csv} succeeded; {note}")),
        Err(why) => {
            let mut r = CheckResult::failed(check, vec![why]);
            r.notes.push(note);
            r
        }
    }
}

fn describe(e: &FlowError) -> String {
    let mut s = e.to_string();
    for d in e.diagnostics() {
        s.push_str(&format!("\n{d}"));
    }
    s
}
