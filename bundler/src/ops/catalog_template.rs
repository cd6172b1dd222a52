//! `olm catalog template [KIND] FILE`: a template rendered to FBC, its bundles taken from
//! local directories and an existing catalog where given, else pulled.

use std::path::PathBuf;

use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::load::LoadErrors;
use crate::catalog::render::Form;
use crate::catalog::template::{self, BundleResolver, TemplateError, TemplateKind};

#[derive(Debug, Clone)]
pub struct TemplateRequest {
    /// `[KIND] FILE`: the template kind (by default the one its `schema` names) and file.
    pub args: Vec<String>,
    /// `IMAGE=DIR`: render IMAGE from a local bundle directory.
    pub bundle_dirs: Vec<String>,
    /// Catalogs whose bundles are reused, matched by image.
    pub reuse: Vec<PathBuf>,
    pub form: Form,
    /// Copy each bundle CSV's `olm.skipRange` annotation onto its channel entries.
    pub skip_range_from_csv: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogTemplateError {
    /// The arguments do not fit together (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Reuse(#[from] LoadErrors),
}

pub fn render(req: &TemplateRequest) -> Result<DeclarativeConfig, CatalogTemplateError> {
    let mut resolver = BundleResolver {
        dirs: template::parse_bundle_dirs(&req.bundle_dirs)?,
        form: req.form,
        ..Default::default()
    };
    for r in &req.reuse {
        resolver.reuse_catalog(r)?;
    }
    let (kind, file) = match req.args.as_slice() {
        [file] => (None, PathBuf::from(file)),
        [kind, file] => match TemplateKind::from_name(kind) {
            Some(k) => (Some(k), PathBuf::from(file)),
            None => {
                return Err(CatalogTemplateError::Usage(format!(
                    "unknown template kind {kind:?} (basic, semver, substitutes; or leave it out to use the template's schema)"
                )));
            }
        },
        _ => return Err(CatalogTemplateError::Usage("expected [KIND] FILE".into())),
    };
    let mut cfg = template::render_file(&file, kind, &resolver)?;
    if req.skip_range_from_csv {
        template::skip_ranges_from_csvs(&mut cfg);
    }
    Ok(cfg)
}
