//! Getting an operator onto a cluster: OLM install manifests and the install flows.
//!
//! Split so the decisions are testable without a cluster:
//! - [`types`]: the OLM API objects (CatalogSource, OperatorGroup, Subscription, InstallPlan,
//!   ClusterServiceVersion) as typed kube resources.
//! - [`objects`]: pure builders of the desired objects from an [`objects::InstallSpec`].
//! - [`generate`]: the checked-in `deploy/` tree (`olm deploy generate`).
//! - [`mirror_sets`]: OpenShift's ImageDigestMirrorSet and ImageTagMirrorSet for a mirror.
//! - [`wait`]: reusable polling waits with a deadline and a progress callback.
//! - [`cluster`]: a kube client from the user's kubeconfig.
//! - [`flow`]: install, upgrade, uninstall and status against the API server.
//! - [`scorecard`]: the bundle ConfigMap and test Pods of an operator-sdk scorecard run.
//! - [`bundle_catalog`]: the catalog built and pushed on the fly for `--bundle` installs and
//!   upgrades; [`bundle_flow`] runs those against the cluster.

pub mod bundle_catalog;
pub mod bundle_flow;
pub mod cluster;
pub mod flow;
pub mod generate;
pub mod mirror_sets;
pub mod objects;
pub mod olmv1;
pub mod scorecard;
pub mod signing_policy;
pub mod types;
pub mod wait;
