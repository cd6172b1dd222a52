//! `olm deploy generate`: the checked-in install tree (`olm/`, and with their inputs `olmv1/`
//! and `plain/`) generated, then written, or compared with what is on disk (`--check`).

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::atomic_write::{TreeChanges, WriteError};
use crate::deploy::generate::{self, GenerateError, GenerateOptions};
use crate::deploy::objects::InvalidInput;
use crate::ops::install::SpecInputs;
use crate::ops::olmv1::{self, V1GenerateError, V1Inputs};

/// What to generate.
#[derive(Debug, Clone)]
pub struct DeployRequest {
    pub spec: SpecInputs,
    pub catalog_image: String,
    /// The operator's manifests for `plain/`: a directory, or `-` for a stream on stdin.
    pub manifests: Option<String>,
    /// OLM v1's inputs and the bundle its installer's RBAC is derived from, for `olmv1/`.
    pub olmv1: Option<(V1Inputs, PathBuf)>,
    pub output: PathBuf,
    /// Compare with the tree on disk; write nothing.
    pub check: bool,
    /// Also write `policy/`: what makes a cluster require signatures by this key.
    pub signing: Option<SigningPolicy>,
}

/// `--verify-key` and the repositories it covers (besides the catalog image's).
#[derive(Debug, Clone)]
pub struct SigningPolicy {
    pub public_key: PathBuf,
    pub repositories: Vec<String>,
}

#[derive(Debug, Error)]
pub enum DeployGenerateError {
    #[error(transparent)]
    Input(#[from] InvalidInput),
    #[error("<stdin>: cannot read manifests")]
    Stdin(#[source] std::io::Error),
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Olmv1(#[from] V1GenerateError),
    #[error("writing the deploy tree")]
    Write(#[source] WriteError),
    #[error(transparent)]
    Key(#[from] crate::ops::image_trust::TrustError),
    #[error("the signature policy: {0}")]
    Policy(String),
}

/// What happened.
#[derive(Debug)]
pub enum Deployed {
    /// `check`: the tree on disk is what would be generated (this many files).
    UpToDate(usize),
    /// `check`: these differences (one line each).
    Stale(Vec<String>),
    Written(TreeChanges),
}

impl Deployed {
    /// What to print for a tree at `root`: the lines for stdout, those for stderr, and whether
    /// the command failed (a `--check` that found differences).
    pub fn report(&self, root: &Path) -> (String, String, bool) {
        let shown = root.display();
        match self {
            Deployed::UpToDate(files) => (
                format!("{shown} is up to date ({files} files)\n"),
                String::new(),
                false,
            ),
            Deployed::Stale(lines) => {
                let mut err = format!(
                    "{shown} is stale; re-run the command in {shown}/README.md without --check:\n"
                );
                for line in lines {
                    err += &format!("  {line}\n");
                }
                (String::new(), err, true)
            }
            Deployed::Written(changes) => {
                let mut text = String::new();
                for p in &changes.written {
                    text += &format!("wrote {}\n", root.join(p).display());
                }
                for p in &changes.removed {
                    text += &format!("removed {}\n", root.join(p).display());
                }
                let (w, r, u) = (
                    changes.written.len(),
                    changes.removed.len(),
                    changes.unchanged,
                );
                text += &format!("{shown}: {w} written, {r} removed, {u} unchanged\n");
                (text, String::new(), false)
            }
        }
    }
}

/// Adds `policy/` for the catalog image's repository and the others named.
fn add_policy(
    generated: &mut generate::Generated,
    req: &DeployRequest,
    signing: &SigningPolicy,
) -> Result<(), DeployGenerateError> {
    // Read once and written in the one form OpenShift takes (`-----BEGIN PUBLIC KEY-----`
    // ... `-----END PUBLIC KEY-----\n`), whatever line endings or label the file had.
    let pem = crate::ops::image_trust::load_public_key(&signing.public_key)?
        .to_pem()
        .map_err(crate::ops::image_trust::TrustError::from)?;
    // Scopes as the policies match them: fully qualified (`docker.io/library/x`).
    let scope = |r: &str| {
        crate::image::reference::normalized_name(r)
            .unwrap_or_else(|| crate::release::config::repository_of(r).to_string())
    };
    let mut scopes = vec![scope(&req.catalog_image)];
    for r in &signing.repositories {
        let r = scope(r);
        if !scopes.contains(&r) {
            scopes.push(r);
        }
    }
    let name = format!("{}-signed", req.spec.package);
    for (path, text) in crate::deploy::signing_policy::files(&name, &pem, &scopes)
        .map_err(DeployGenerateError::Policy)?
    {
        generated.tree.insert(path, text);
    }
    generated.owned_dirs.push("policy");
    Ok(())
}

/// A generated tree and the notes about it (kinds the installer RBAC cannot pin by name).
pub fn generate(req: &DeployRequest) -> Result<(Deployed, Vec<String>), DeployGenerateError> {
    let spec = req.spec.to_spec(&req.catalog_image)?;
    let plain = match req.manifests.as_deref() {
        None => None,
        Some("-") => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(DeployGenerateError::Stdin)?;
            Some(generate::parse_manifests("<stdin>", &text)?)
        }
        Some(dir) => Some(generate::load_manifests_dir(Path::new(dir))?),
    };
    let olmv1 = match &req.olmv1 {
        None => None,
        Some((inputs, bundle)) => {
            Some(olmv1::generate_install(inputs, &req.catalog_image, bundle)?)
        }
    };
    let notes = olmv1.iter().flat_map(|v| v.rbac.notes.clone()).collect();
    let mut generated = generate::generate(&GenerateOptions { spec, plain, olmv1 })?;
    if let Some(signing) = &req.signing {
        add_policy(&mut generated, req, signing)?;
    }
    let (tree, root) = (&generated.tree, &req.output);
    if req.check {
        let stale = tree.diff_against(root, &generated.owned_dirs);
        if stale.is_empty() {
            return Ok((Deployed::UpToDate(tree.len()), notes));
        }
        let lines = stale.iter().map(|rel| tree.describe_difference(root, rel));
        return Ok((Deployed::Stale(lines.collect()), notes));
    }
    let changes = tree
        .write(root, &generated.owned_dirs)
        .map_err(DeployGenerateError::Write)?;
    Ok((Deployed::Written(changes), notes))
}
