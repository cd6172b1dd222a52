//! OLM v1 end to end through the `olm` binary: `install --olm-v1` of the reverse-words operator
//! with the installer RBAC from `bundle/`, `status --olm-v1`, `uninstall --olm-v1`.
//!
//! Opt-in: needs `E2E_KUBECONFIG` (a cluster with operator-controller and catalogd),
//! `E2E_OLMV1=1` and `E2E_CATALOG_IMAGE` (a catalog image the cluster can pull); optional
//! `E2E_PACKAGE` (reverse-words-operator) and `E2E_CHANNEL`. Prints a SKIP line otherwise.

#[path = "support/olm_bin.rs"]
mod olm_bin;
#[path = "support/prerequisite.rs"]
mod prerequisite;

use olm_bin::olm;

#[test]
fn install_status_uninstall_with_olm_v1() {
    let Ok(kubeconfig) = std::env::var("E2E_KUBECONFIG") else {
        prerequisite::skip_opt_in("E2E_KUBECONFIG not set; no cluster with OLM v1");
        return;
    };
    if std::env::var("E2E_OLMV1").as_deref() != Ok("1") {
        prerequisite::skip_opt_in("E2E_OLMV1 is not 1; the cluster is not declared to run OLM v1");
        return;
    }
    let Ok(catalog) = std::env::var("E2E_CATALOG_IMAGE") else {
        prerequisite::skip_opt_in("E2E_CATALOG_IMAGE not set; no catalog image to install from");
        return;
    };
    let package = std::env::var("E2E_PACKAGE").unwrap_or_else(|_| "reverse-words-operator".into());
    let ns = format!("olmv1-e2e-{}", std::process::id());
    let bundle = concat!(env!("CARGO_MANIFEST_DIR"), "/../bundle");
    let common = ["--kubeconfig", kubeconfig.as_str(), "--timeout", "10m"];
    let mut install = vec![
        "install",
        "--olm-v1",
        "--catalog",
        catalog.as_str(),
        "--package",
        package.as_str(),
        "--namespace",
        ns.as_str(),
        "--bundle-dir",
        bundle,
    ];
    let channel = std::env::var("E2E_CHANNEL").ok();
    if let Some(c) = &channel {
        install.extend(["--channel", c.as_str()]);
    }
    install.extend(common);
    assert!(olm(&install).status.success(), "install --olm-v1");
    let mut status = vec!["status", package.as_str(), "--olm-v1"];
    status.extend(common.iter().take(2));
    let out = olm(&status);
    assert!(out.status.success(), "status --olm-v1");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Installed=True"));
    let mut uninstall = vec!["uninstall", package.as_str(), "--olm-v1", "-n", ns.as_str()];
    uninstall.extend(common);
    assert!(olm(&uninstall).status.success(), "uninstall --olm-v1");
}
