//! The validate stage: the only way to get a [`ValidApp`], the checked view of a ReverseWordsApp
//! that the pure builders in [`crate::desired`] take. The CRD schema already rejects most bad
//! specs, but objects stored under an older schema (or the Go operator's CRD) can still carry
//! them; they are reported on the CR's status instead of reaching the API as broken children.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Resource, ResourceExt};

use crate::crd::{MAX_REPLICAS, ReverseWordsApp, is_valid_tag};

/// Longest Service name the API accepts (a DNS-1035 label).
const MAX_SERVICE_NAME: usize = 63;

/// Why a ReverseWordsApp cannot be reconciled as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("metadata.namespace is missing (the CRD is namespaced)")]
    NoNamespace,
    #[error("metadata.uid is missing, so the children could not be owned by the CR")]
    NoUid,
    #[error(
        "metadata.name {name:?} is too long: its Service {service:?} would exceed {MAX_SERVICE_NAME} characters"
    )]
    NameTooLong { name: String, service: String },
    #[error("spec.replicas: {0} is outside 0..={MAX_REPLICAS}")]
    Replicas(i32),
    #[error(
        "spec.appVersion: {0:?} is not a valid image tag (letters, digits, '_', '.', '-'; at most 128; not starting with '.' or '-')"
    )]
    AppVersion(String),
}

/// A ReverseWordsApp that passed [`validate`]: everything the builders need, already checked
/// and with defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidApp {
    name: String,
    namespace: String,
    replicas: i32,
    app_version: Option<String>,
    owner: OwnerReference,
}

impl ValidApp {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
    /// Replicas to run (0 in the spec means 1, as in the Go operator).
    pub fn replicas(&self) -> i32 {
        self.replicas
    }
    /// The tag the CR asks for, if any (a valid image tag).
    pub fn app_version(&self) -> Option<&str> {
        self.app_version.as_deref()
    }
    /// The tag to label the objects with.
    pub fn effective_app_version(&self) -> &str {
        self.app_version
            .as_deref()
            .unwrap_or(crate::crd::DEFAULT_APP_VERSION)
    }
    /// The controller reference every child carries.
    pub fn owner(&self) -> &OwnerReference {
        &self.owner
    }
}

/// Name of the Deployment for a CR (the Go operator's `dp-<name>`).
pub fn deployment_name(cr_name: &str) -> String {
    format!("dp-{cr_name}")
}

/// Name of the Service for a CR (the Go operator's `service-<name>`): validation checks its
/// length, the builders use it.
pub fn service_name(cr_name: &str) -> String {
    format!("service-{cr_name}")
}

/// Checks a ReverseWordsApp and returns the view the builders take.
pub fn validate(cr: &ReverseWordsApp) -> Result<ValidApp, Invalid> {
    let name = cr.name_any();
    let namespace = cr.namespace().ok_or(Invalid::NoNamespace)?;
    let owner = cr.controller_owner_ref(&()).ok_or(Invalid::NoUid)?;
    let service = service_name(&name);
    if service.len() > MAX_SERVICE_NAME {
        return Err(Invalid::NameTooLong { name, service });
    }
    if !(0..=MAX_REPLICAS).contains(&cr.spec.replicas) {
        return Err(Invalid::Replicas(cr.spec.replicas));
    }
    if let Some(tag) = cr.spec.app_version.as_deref()
        && !is_valid_tag(tag)
    {
        return Err(Invalid::AppVersion(tag.to_string()));
    }
    Ok(ValidApp {
        replicas: cr.spec.effective_replicas(),
        app_version: cr.spec.app_version.clone(),
        name,
        namespace,
        owner,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::ReverseWordsAppSpec;

    fn cr(name: &str, replicas: i32, version: Option<&str>) -> ReverseWordsApp {
        let mut cr = ReverseWordsApp::new(
            name,
            ReverseWordsAppSpec {
                replicas,
                app_version: version.map(String::from),
            },
        );
        cr.metadata.namespace = Some("apps".into());
        cr.metadata.uid = Some("uid-1".into());
        cr
    }

    #[test]
    fn a_good_cr_validates_with_defaults_applied() {
        let app = validate(&cr("example", 0, None)).unwrap();
        assert_eq!(app.name(), "example");
        assert_eq!(app.namespace(), "apps");
        assert_eq!(app.replicas(), 1);
        assert_eq!(app.app_version(), None);
        assert_eq!(app.effective_app_version(), "latest");
        assert_eq!(app.owner().uid, "uid-1");
        assert_eq!(app.owner().controller, Some(true));
        let app = validate(&cr("example", 3, Some("v0.0.2"))).unwrap();
        assert_eq!((app.replicas(), app.app_version()), (3, Some("v0.0.2")));
    }

    #[test]
    fn each_invalid_field_is_named() {
        let mut no_ns = cr("example", 1, None);
        no_ns.metadata.namespace = None;
        assert_eq!(validate(&no_ns), Err(Invalid::NoNamespace));
        let mut no_uid = cr("example", 1, None);
        no_uid.metadata.uid = None;
        assert_eq!(validate(&no_uid), Err(Invalid::NoUid));
        assert_eq!(
            validate(&cr("example", -1, None)),
            Err(Invalid::Replicas(-1))
        );
        assert_eq!(
            validate(&cr("example", MAX_REPLICAS + 1, None)),
            Err(Invalid::Replicas(MAX_REPLICAS + 1))
        );
        let bad = validate(&cr("example", 1, Some("a:b"))).unwrap_err();
        assert_eq!(bad, Invalid::AppVersion("a:b".into()));
        assert!(bad.to_string().starts_with("spec.appVersion: \"a:b\""));
        let long = "x".repeat(56);
        assert!(matches!(
            validate(&cr(&long, 1, None)),
            Err(Invalid::NameTooLong { .. })
        ));
        assert!(validate(&cr(&"x".repeat(55), 1, None)).is_ok());
    }
}
