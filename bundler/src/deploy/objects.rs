//! Pure builders for the OLM objects an install needs. Both `olm deploy generate` (files) and
//! `olm install` (API calls) start from these, so what CI checks in is what the CLI creates.

use std::fmt;

use crate::grammar::{go_duration, image_ref, k8s_names};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::types::{
    CatalogSource, CatalogSourceSpec, GrpcPodConfig, OperatorGroup, OperatorGroupSpec,
    RegistryPoll, Subscription, SubscriptionSpec, UpdateStrategy, managed_labels,
};

/// A value given by the user that cannot be used, naming the flag or field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct InvalidInput {
    pub field: &'static str,
    pub message: String,
}

fn invalid(field: &'static str, message: impl Into<String>) -> InvalidInput {
    InvalidInput {
        field,
        message: message.into(),
    }
}

/// Which namespaces the operator watches, as an OperatorGroup expresses it (the CSV's
/// `installModes` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InstallMode {
    /// Only the namespace the operator runs in.
    #[default]
    OwnNamespace,
    /// One other namespace.
    SingleNamespace,
    /// A list of namespaces.
    MultiNamespace,
    /// The whole cluster.
    AllNamespaces,
}

impl InstallMode {
    /// Parses the CLI spelling (`own`, `single`, `multi`, `all`) or the CSV spelling.
    pub fn parse(s: &str) -> Result<Self, InvalidInput> {
        match s.to_ascii_lowercase().as_str() {
            "own" | "ownnamespace" => Ok(Self::OwnNamespace),
            "single" | "singlenamespace" => Ok(Self::SingleNamespace),
            "multi" | "multinamespace" => Ok(Self::MultiNamespace),
            "all" | "allnamespaces" => Ok(Self::AllNamespaces),
            _ => Err(invalid(
                "--install-mode",
                format!("{s:?} is not one of own, single, multi, all"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::OwnNamespace => "OwnNamespace",
            Self::SingleNamespace => "SingleNamespace",
            Self::MultiNamespace => "MultiNamespace",
            Self::AllNamespaces => "AllNamespaces",
        }
    }
}

impl fmt::Display for InstallMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Target namespaces resolved from an install mode: `None` is AllNamespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets(Option<Vec<String>>);

impl Targets {
    /// Checks the targets fit the mode: own = the install namespace, single = exactly one,
    /// multi = one or more, all = none given.
    pub fn resolve(
        mode: InstallMode,
        namespace: &str,
        targets: &[String],
    ) -> Result<Self, InvalidInput> {
        for t in targets {
            check_dns_label("--target-namespaces", t)?;
        }
        let mut list: Vec<String> = targets.to_vec();
        list.sort();
        list.dedup();
        match mode {
            InstallMode::OwnNamespace => {
                if !(list.is_empty() || list == [namespace]) {
                    return Err(invalid(
                        "--target-namespaces",
                        format!("OwnNamespace targets the install namespace {namespace:?} only"),
                    ));
                }
                Ok(Self(Some(vec![namespace.to_string()])))
            }
            InstallMode::SingleNamespace => match list.as_slice() {
                [one] => Ok(Self(Some(vec![one.clone()]))),
                _ => Err(invalid(
                    "--target-namespaces",
                    "SingleNamespace needs exactly one target namespace",
                )),
            },
            InstallMode::MultiNamespace => {
                if list.is_empty() {
                    Err(invalid(
                        "--target-namespaces",
                        "MultiNamespace needs one or more target namespaces",
                    ))
                } else {
                    Ok(Self(Some(list)))
                }
            }
            InstallMode::AllNamespaces => {
                if list.is_empty() {
                    Ok(Self(None))
                } else {
                    Err(invalid(
                        "--target-namespaces",
                        "AllNamespaces takes no target namespaces",
                    ))
                }
            }
        }
    }

    /// `spec.targetNamespaces` as OLM wants it.
    pub fn namespaces(&self) -> Option<&[String]> {
        self.0.as_deref()
    }

    /// Whether an existing OperatorGroup spec selects exactly these namespaces.
    pub fn matches(&self, spec: &OperatorGroupSpec) -> bool {
        if spec.selector.is_some() {
            return false;
        }
        let mut have: Vec<String> = spec.target_namespaces.clone().unwrap_or_default();
        have.retain(|n| !n.is_empty());
        have.sort();
        have.dedup();
        match &self.0 {
            None => have.is_empty(),
            Some(want) => &have == want,
        }
    }
}

/// `installPlanApproval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Approval {
    #[default]
    Automatic,
    Manual,
}

impl Approval {
    pub fn parse(s: &str) -> Result<Self, InvalidInput> {
        match s.to_ascii_lowercase().as_str() {
            "automatic" => Ok(Self::Automatic),
            "manual" => Ok(Self::Manual),
            _ => Err(invalid(
                "--approval",
                format!("{s:?} is not Automatic or Manual"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Automatic => "Automatic",
            Self::Manual => "Manual",
        }
    }
}

/// Everything that decides the three OLM objects of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallSpec {
    /// OLM package name (the Subscription's `spec.name`).
    pub package: String,
    /// Namespace of the CatalogSource, OperatorGroup and Subscription.
    pub namespace: String,
    /// Channel; `None` lets OLM use the package's default channel.
    pub channel: Option<String>,
    pub starting_csv: Option<String>,
    pub approval: Approval,
    pub mode: InstallMode,
    pub targets: Targets,
    pub catalog: CatalogSpec,
    /// Name of the OperatorGroup we create when the namespace has none.
    pub operator_group_name: String,
}

/// The CatalogSource of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogSpec {
    pub name: String,
    pub serving: CatalogServing,
    pub display_name: String,
    pub publisher: Option<String>,
}

/// Where OLM reads the catalog from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogServing {
    /// A catalog image: OLM runs it in a pod of its own and, with a poll interval (a Go
    /// duration for `updateStrategy.registryPoll.interval`), re-pulls its tag for a new digest.
    Image {
        image: String,
        poll_interval: Option<String>,
    },
    /// A registry server already listening (`olm catalog serve` on a workstation, a Service in
    /// the cluster): OLM dials `spec.address` directly, with no pod, image or registry.
    Address(CatalogAddress),
}

impl CatalogServing {
    /// The image, for a catalog served from one.
    pub fn image(&self) -> Option<&str> {
        match self {
            Self::Image { image, .. } => Some(image),
            Self::Address(_) => None,
        }
    }

    /// What the CatalogSource serves, for messages: the image or the address.
    pub fn describe(&self) -> String {
        match self {
            Self::Image { image, .. } => format!("image {image}"),
            Self::Address(a) => format!("address {a}"),
        }
    }
}

/// A gRPC `host:port` that OLM's catalog operator can dial (`grpc.Dial` target without a
/// scheme): a DNS name, an IPv4 address or a bracketed IPv6 address, and a port 1-65535.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogAddress(String);

impl CatalogAddress {
    pub fn parse(s: &str) -> Result<Self, InvalidInput> {
        let bad = |why: &str| invalid("--catalog-address", format!("{s:?} {why}"));
        let (host, port) = s
            .rsplit_once(':')
            .ok_or_else(|| bad("is not HOST:PORT (e.g. 192.168.1.10:50051)"))?;
        let port_ok = !port.is_empty()
            && port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p));
        if !port_ok {
            return Err(bad("has no port between 1 and 65535 after the last ':'"));
        }
        let host_ok = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            v6.parse::<std::net::Ipv6Addr>().is_ok()
        } else if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            host.parse::<std::net::Ipv4Addr>().is_ok()
        } else {
            check_dns_subdomain("--catalog-address", &host.to_ascii_lowercase()).is_ok()
        };
        if !host_ok {
            return Err(bad(
                "does not start with a host name, an IPv4 address or a bracketed IPv6 address",
            ));
        }
        Ok(Self(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CatalogAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl InstallSpec {
    /// Checks names and values the API server would reject later with a less clear message.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        check_dns_label("--namespace", &self.namespace)?;
        check_dns_subdomain("--package", &self.package)?;
        check_dns_subdomain("--catalog-name", &self.catalog.name)?;
        check_dns_subdomain("operator group name", &self.operator_group_name)?;
        if let Some(c) = &self.channel
            && c.trim().is_empty()
        {
            return Err(invalid("--channel", "must not be empty"));
        }
        if let CatalogServing::Image {
            image,
            poll_interval,
        } = &self.catalog.serving
        {
            ImageRef::parse(image).map_err(|m| invalid("--catalog-image", m))?;
            if let Some(i) = poll_interval {
                check_go_duration(i).map_err(|m| invalid("--poll-interval", m))?;
            }
        }
        Ok(())
    }
}

/// Metadata of an object olm creates: its name, namespace and our managed-by labels.
pub(crate) fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(managed_labels()),
        ..Default::default()
    }
}

/// The install namespace.
pub fn namespace(spec: &InstallSpec) -> Namespace {
    namespace_named(&spec.namespace)
}

/// A namespace olm creates (and may delete again: it carries our labels).
pub(crate) fn namespace_named(name: &str) -> Namespace {
    Namespace {
        metadata: meta(name, None),
        ..Default::default()
    }
}

/// A grpc CatalogSource. From an image: polled for updates, its pod running under Pod Security
/// `restricted` (catalog images built by opm >= 1.26 or by us support it). From an address:
/// only `spec.address`, since OLM starts no pod and has nothing to poll.
pub fn catalog_source(spec: &InstallSpec) -> CatalogSource {
    catalog_source_in(&spec.catalog, &spec.namespace)
}

/// The CatalogSource of `c` in `namespace` (a mirror writes one without an install).
pub fn catalog_source_in(c: &CatalogSpec, namespace: &str) -> CatalogSource {
    let mut cs_spec = CatalogSourceSpec {
        source_type: "grpc".into(),
        display_name: Some(c.display_name.clone()),
        publisher: c.publisher.clone(),
        ..Default::default()
    };
    match &c.serving {
        CatalogServing::Image {
            image,
            poll_interval,
        } => {
            cs_spec.image = Some(image.clone());
            cs_spec.update_strategy = poll_interval.as_ref().map(|i| UpdateStrategy {
                registry_poll: Some(RegistryPoll {
                    interval: Some(i.clone()),
                }),
            });
            cs_spec.grpc_pod_config = Some(GrpcPodConfig {
                security_context_config: Some("restricted".into()),
            });
        }
        CatalogServing::Address(a) => cs_spec.address = Some(a.to_string()),
    }
    let mut cs = CatalogSource::new(&c.name, cs_spec);
    cs.metadata = meta(&c.name, Some(namespace));
    cs
}

/// The OperatorGroup fitting the install mode.
pub fn operator_group(spec: &InstallSpec) -> OperatorGroup {
    let mut og = OperatorGroup::new(
        &spec.operator_group_name,
        OperatorGroupSpec {
            target_namespaces: spec.targets.namespaces().map(<[String]>::to_vec),
            ..Default::default()
        },
    );
    og.metadata = meta(&spec.operator_group_name, Some(&spec.namespace));
    og
}

/// The Subscription to the package from our CatalogSource.
pub fn subscription(spec: &InstallSpec) -> Subscription {
    let mut sub = Subscription::new(
        &spec.package,
        SubscriptionSpec {
            name: spec.package.clone(),
            source: spec.catalog.name.clone(),
            source_namespace: spec.namespace.clone(),
            channel: spec.channel.clone(),
            install_plan_approval: Some(spec.approval.as_str().into()),
            starting_csv: spec.starting_csv.clone(),
            config: None,
        },
    );
    sub.metadata = meta(&spec.package, Some(&spec.namespace));
    sub
}

/// An image reference split the way kustomize's `images:` transformer matches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// Everything before the tag or digest (`registry/path/name`).
    pub name: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// Splits a pull spec that OLM's reference grammar accepts ([`image_ref::validate`]).
    pub fn parse(s: &str) -> Result<Self, String> {
        image_ref::validate(s).map_err(|e| format!("{s:?} is not an image reference: {e}"))?;
        let (name, tag, digest) = image_ref::split(s);
        Ok(Self {
            name: name.to_string(),
            tag: tag.map(str::to_string),
            digest: digest.map(str::to_string),
        })
    }
}

/// Checks a Go `time.ParseDuration` string the way OLM reads `registryPoll.interval` (OLM
/// silently falls back to 15m on a bad value, so we refuse it up front).
pub fn check_go_duration(s: &str) -> Result<(), String> {
    go_duration::parse(s)
        .map(|_| ())
        .map_err(|_| not_a_duration(s))
}

/// Parses a non-negative Go duration (`5m`, `1h30m`, `1.5s`, `0`) into a [`Duration`]; the
/// same syntax as `--timeout` flags of kubectl and operator-sdk.
///
/// [`Duration`]: std::time::Duration
pub fn parse_go_duration(s: &str) -> Result<std::time::Duration, String> {
    go_duration::parse_non_negative(s).map_err(|_| not_a_duration(s))
}

fn not_a_duration(s: &str) -> String {
    format!("{s:?} is not a Go duration such as 10m, 1h30m or 45s")
}

/// RFC 1123 label (namespace names).
pub fn check_dns_label(field: &'static str, s: &str) -> Result<(), InvalidInput> {
    if k8s_names::dns1123_label(s).is_empty() {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("{s:?} is not a valid name (lowercase letters, digits and '-', at most 63)"),
        ))
    }
}

/// RFC 1123 subdomain (names of most objects).
pub fn check_dns_subdomain(field: &'static str, s: &str) -> Result<(), InvalidInput> {
    if k8s_names::dns1123_subdomain(s).is_empty() {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("{s:?} is not a valid object name (lowercase RFC 1123 subdomain)"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mode: InstallMode, targets: &[&str]) -> Result<InstallSpec, InvalidInput> {
        let targets: Vec<String> = targets.iter().map(|s| s.to_string()).collect();
        Ok(InstallSpec {
            package: "pkg".into(),
            namespace: "ns".into(),
            channel: Some("stable".into()),
            starting_csv: None,
            approval: Approval::Automatic,
            mode,
            targets: Targets::resolve(mode, "ns", &targets)?,
            catalog: CatalogSpec {
                name: "pkg-catalog".into(),
                serving: CatalogServing::Image {
                    image: "quay.io/x/cat:v1".into(),
                    poll_interval: Some("10m".into()),
                },
                display_name: "Cat".into(),
                publisher: None,
            },
            operator_group_name: "pkg-og".into(),
        })
    }

    #[test]
    fn install_modes_map_to_target_namespaces() {
        let og = operator_group(&spec(InstallMode::OwnNamespace, &[]).unwrap());
        assert_eq!(og.spec.target_namespaces, Some(vec!["ns".to_string()]));
        let og = operator_group(&spec(InstallMode::AllNamespaces, &[]).unwrap());
        assert_eq!(og.spec.target_namespaces, None);
        let og = operator_group(&spec(InstallMode::MultiNamespace, &["b", "a", "b"]).unwrap());
        assert_eq!(
            og.spec.target_namespaces,
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert!(spec(InstallMode::SingleNamespace, &[]).is_err());
        assert!(spec(InstallMode::AllNamespaces, &["a"]).is_err());
        assert!(spec(InstallMode::OwnNamespace, &["other"]).is_err());
    }

    #[test]
    fn targets_match_existing_groups() {
        let all = Targets::resolve(InstallMode::AllNamespaces, "ns", &[]).unwrap();
        assert!(all.matches(&OperatorGroupSpec::default()));
        assert!(all.matches(&OperatorGroupSpec {
            target_namespaces: Some(vec!["".into()]),
            ..Default::default()
        }));
        let own = Targets::resolve(InstallMode::OwnNamespace, "ns", &[]).unwrap();
        assert!(!own.matches(&OperatorGroupSpec::default()));
        assert!(own.matches(&OperatorGroupSpec {
            target_namespaces: Some(vec!["ns".into()]),
            ..Default::default()
        }));
    }

    #[test]
    fn image_refs_split_like_kustomize() {
        let r = ImageRef::parse("localhost:5000/a/b:v1").unwrap();
        assert_eq!(
            (r.name.as_str(), r.tag.as_deref()),
            ("localhost:5000/a/b", Some("v1"))
        );
        let r = ImageRef::parse("localhost:5000/a/b").unwrap();
        assert_eq!((r.name.as_str(), r.tag), ("localhost:5000/a/b", None));
        let d = format!("sha256:{}", "a".repeat(64));
        let r = ImageRef::parse(&format!("q.io/x@{d}")).unwrap();
        assert_eq!(r.digest.as_deref(), Some(d.as_str()));
        assert!(ImageRef::parse("q.io/x@sha256:zz").is_err());
        assert!(ImageRef::parse("q.io/x:").is_err());
        assert!(ImageRef::parse("").is_err());
    }

    #[test]
    fn go_durations() {
        for ok in ["10m", "1h30m", "45s", "1.5h", "0", "300ms"] {
            assert!(check_go_duration(ok).is_ok(), "{ok}");
        }
        for bad in ["", "10", "m", "10 m", "1d", "1..5h"] {
            assert!(check_go_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_go_duration("1m30s").unwrap(),
            std::time::Duration::from_secs(90)
        );
        assert_eq!(
            parse_go_duration("1.5h").unwrap(),
            std::time::Duration::from_secs(5400)
        );
    }

    #[test]
    fn validation_names_the_flag() {
        let mut s = spec(InstallMode::OwnNamespace, &[]).unwrap();
        s.namespace = "Bad_NS".into();
        assert_eq!(s.validate().unwrap_err().field, "--namespace");
        let mut s = spec(InstallMode::OwnNamespace, &[]).unwrap();
        s.catalog.serving = CatalogServing::Image {
            image: "quay.io/x/cat:v1".into(),
            poll_interval: Some("1d".into()),
        };
        assert_eq!(s.validate().unwrap_err().field, "--poll-interval");
    }
}

#[cfg(test)]
mod address_tests {
    use super::CatalogAddress;

    #[test]
    fn catalog_addresses_are_host_and_port() {
        for ok in [
            "localhost:50051",
            "host.docker.internal:50051",
            "olm-catalog.ops.svc:1",
            "192.168.1.10:65535",
            "[::1]:50051",
            "[fd00::7]:8080",
        ] {
            assert!(CatalogAddress::parse(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("localhost", "is not HOST:PORT"),
            ("localhost:", "no port"),
            ("localhost:0", "no port"),
            ("localhost:65536", "no port"),
            ("localhost:50051x", "no port"),
            ("grpc://localhost:50051", "does not start with a host"),
            ("::1:50051", "does not start with a host"),
            ("999.1.1.1:50051", "does not start with a host"),
            ("Under_score:50051", "does not start with a host"),
            (":50051", "does not start with a host"),
        ] {
            let err = CatalogAddress::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("--catalog-address") && err.contains(why),
                "{bad}: {err}"
            );
        }
    }
}
