//! OLM v1 (operator-controller and catalogd): the objects of an install and the flows that
//! apply them.
//!
//! - [`types`]: ClusterCatalog and ClusterExtension as typed kube resources.
//! - [`objects`]: pure builders (ClusterCatalog, namespace, ServiceAccount, ClusterExtension).
//! - [`rbac`]: the installer ServiceAccount's least-privilege RBAC, derived from the bundle.
//! - [`flow`]: install, upgrade, status and uninstall against the API server.

pub mod flow;
pub mod objects;
pub mod rbac;
pub mod types;
