use super::*;

fn parse(text: &str) -> Result<ImageSetConfig, IscError> {
    ImageSetConfig::parse(Path::new("isc.yaml"), text)
}

fn problems(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

/// oc-mirror's own example file, as users write it.
const EXAMPLE: &str = r#"
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
archiveSize: 4
mirror:
  platform:
    channels:
    - name: stable-4.18
      minVersion: 4.18.1
      maxVersion: 4.18.5
    graph: true
  operators:
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18
    targetCatalog: my-namespace/redhat-operator-index
    targetTag: v4.18-filtered
    skipDependencies: true
    packages:
    - name: aws-load-balancer-operator
    - name: elasticsearch-operator
      defaultChannel: stable-5.8
      channels:
      - name: stable-5.8
        minVersion: '5.8.1'
      - name: stable
  - catalog: oci:///home/user/catalogs/community
    full: true
  additionalImages:
  - name: registry.redhat.io/ubi8/ubi:latest
  helm: {}
  blockedImages:
  - name: alpine
  - name: '^quay\.io/bad/.*@sha256:'
"#;

#[test]
fn an_oc_mirror_file_reads_unchanged() {
    let cfg = parse(EXAMPLE).unwrap();
    assert_eq!(cfg.catalogs.len(), 2);
    let redhat = &cfg.catalogs[0];
    assert_eq!(
        redhat.target_catalog.as_deref(),
        Some("my-namespace/redhat-operator-index")
    );
    assert_eq!(redhat.target_tag.as_deref(), Some("v4.18-filtered"));
    assert!(!redhat.spec.full());
    let es = redhat.spec.package("elasticsearch-operator").unwrap();
    assert_eq!(es.default_channel.as_deref(), Some("stable-5.8"));
    assert_eq!(es.channels.len(), 2);
    assert_eq!(
        es.channels[0].range.as_ref().unwrap().range_text(),
        ">=5.8.1"
    );
    assert!(es.channels[1].range.is_none());
    assert!(cfg.catalogs[1].spec.full());
    assert!(cfg.catalogs[1].spec.packages().is_empty());
    assert_eq!(
        cfg.ignored,
        [
            "archiveSize",
            "mirror.platform",
            "mirror.additionalImages",
            "mirror.operators[0].skipDependencies"
        ]
    );
    assert!(redhat.names("registry.redhat.io/redhat/redhat-operator-index:v4.18"));
    assert!(redhat.names("docker://registry.redhat.io/redhat/redhat-operator-index:v4.18"));
    assert!(!redhat.names("registry.redhat.io/redhat/redhat-operator-index:v4.17"));
    assert!(cfg.catalogs[1].names("oci:/home/user/catalogs/community"));
}

#[test]
fn blocked_images_match_as_oc_mirror_matches() {
    let cfg = parse(EXAMPLE).unwrap();
    let b = &cfg.blocked_images;
    // Unanchored search, as Go's regexp.MatchString.
    assert!(b.is_blocked("docker.io/library/alpine:3.20"));
    assert!(b.is_blocked("quay.io/x/notalpine@sha256:00"));
    assert!(b.is_blocked("docker://docker.io/library/alpine"));
    assert_eq!(
        b.blocking("docker://quay.io/bad/img@sha256:ab"),
        Some(r"^quay\.io/bad/.*@sha256:")
    );
    // The transport is cut before matching, so the anchor sees the registry.
    assert!(!b.is_blocked("registry.io/quay.io/bad/img@sha256:ab"));
    assert!(!b.is_blocked("quay.io/bad/img:v1"));
    assert!(!b.is_blocked("registry.redhat.io/ubi8/ubi:latest"));
    assert!(BlockedImages::default().is_empty());
}

#[test]
fn wrong_kind_and_api_version_name_the_field() {
    let e =
        problems("kind: ImageSetConfig\napiVersion: mirror.openshift.io/v1alpha2\nmirror: {}\n");
    assert_eq!(
        e,
        "isc.yaml: kind: cannot parse \"ImageSetConfig\" as \"ImageSetConfiguration\"\n\
         isc.yaml: apiVersion: expected \"mirror.openshift.io/v2alpha1\" (oc-mirror v2's ImageSetConfiguration), found \"mirror.openshift.io/v1alpha2\""
    );
    let e = problems("apiVersion: mirror.openshift.io/v2alpha1\nmirror: {}\n");
    assert_eq!(e, "isc.yaml: kind: configuration missing `kind`");
    let e = problems("apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\n");
    assert_eq!(
        e,
        "isc.yaml: mirror: configuration missing the `mirror` stanza"
    );
    let e = problems(
        "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror: {}\ndelete: {}\n",
    );
    assert_eq!(
        e,
        "isc.yaml: delete: delete: is not allowed in ImageSetConfiguration"
    );
}

const HEAD: &str = "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\n";

#[test]
fn oc_mirror_validation_errors_carry_over() {
    let e = problems(&format!(
        "{HEAD}mirror:\n  operators:\n  - catalog: c\n    packages:\n    - name: p\n      minVersion: 1.x\n      channels:\n      - name: s\n        maxVersion: 2.0.0\n      - name: s\n"
    ));
    assert_eq!(
        e,
        "isc.yaml: mirror.operators[0].packages[0].minVersion: catalog \"c\": operator \"p\": minVersion \"1.x\" must respect semantic versioning notation\n\
         isc.yaml: mirror.operators[0].packages[0].channels[1]: catalog \"c\": operator \"p\": duplicate channel entry \"s\""
    );
    let e = problems(&format!(
        "{HEAD}mirror:\n  operators:\n  - catalog: c\n    packages:\n    - name: p\n      maxVersion: 2.0.0\n      channels:\n      - name: s\n        minVersion: 1.0.0\n    - name: p\n"
    ));
    assert_eq!(
        e,
        "isc.yaml: mirror.operators[0].packages[0].channels[0]: catalog \"c\": operator \"p\": mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed\n\
         isc.yaml: mirror.operators[0].packages[1]: catalog \"c\": duplicate package entry \"p\""
    );
    let e = problems(&format!(
        "{HEAD}mirror:\n  operators:\n  - catalog: c\n    full: true\n    packages:\n    - name: p\n      minVersion: 1.0.0\n  - catalog: c\n"
    ));
    assert_eq!(
        e,
        "isc.yaml: mirror.operators[0]: catalog \"c\": Full: true cannot be mixed with versionRange\n\
         isc.yaml: mirror.operators[1]: catalog \"c\": duplicate found in configuration"
    );
    let e = problems(&format!(
        "{HEAD}mirror:\n  blockedImages:\n  - name: 'a(b'\n  operators:\n  - packages:\n    - channels:\n      - minVersion: 1.10\n"
    ));
    assert!(e.contains("isc.yaml: mirror.blockedImages[0].name: blocked image \"a(b\": invalid regular expression"), "{e}");
    assert!(
        e.contains("isc.yaml: mirror.operators[0].catalog: required"),
        "{e}"
    );
    assert!(e.contains("mirror.operators[0].packages[0].channels[0].minVersion: expected a string, found a number (quote it: YAML reads it as a number)"), "{e}");
    assert!(e.contains("mirror.operators[0].packages[0].channels[0].name: package \"\" at index [0] is invalid: channel \"\" at index [0] is invalid: name must be specified"), "{e}");
    assert!(e.contains("mirror.operators[0].packages[0].name: package \"\" at index [0] is invalid: name must be specified"), "{e}");
}

#[test]
fn unknown_fields_are_refused_as_oc_mirror_refuses_them() {
    let e = problems(&format!(
        "{HEAD}storageConfig: {{}}\nmirror:\n  operators:\n  - catalog: c\n    packages:\n    - name: p\n      minBundle: p.v1\n"
    ));
    assert_eq!(
        e,
        "isc.yaml: storageConfig: unknown field (oc-mirror v2 refuses it too)\n\
         isc.yaml: mirror.operators[0].packages[0].minBundle: unknown field (oc-mirror v2 refuses it too)"
    );
    let e = problems(&format!("{HEAD}mirror:\n  operators: {{catalog: c}}\n"));
    assert_eq!(
        e,
        "isc.yaml: mirror.operators: expected a list, found a mapping"
    );
}
