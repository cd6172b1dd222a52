//! catalogd's `/api/v1/all` body made from the catalog files at start-up: every blob as one
//! compact JSON line with sorted keys, in opm's file walk order, and each blob's place in it
//! for `/api/v1/metas`. The runtime then serves only these bytes.

use std::path::Path;

use serde_json::Value;

use crate::catalog::declcfg::sort_keys;
use crate::catalog::load;
use crate::grammar::k8s_names;
use crate::serve::runtime::catalogd::{CatalogContent, Meta};

/// Why the catalog's content could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum CatalogdError {
    #[error(transparent)]
    Load(#[from] load::LoadError),
    #[error(transparent)]
    Yaml(#[from] crate::yaml::YamlError),
    #[error("{file}: {message}")]
    Blob { file: String, message: String },
    #[error(
        "catalog name {name:?} (--catalog-name, else the catalog's directory or image name) is not a DNS-1123 subdomain: {message}; pass --catalog-name"
    )]
    Name { name: String, message: String },
}

/// Checks the name catalogd's URLs carry (`/catalogs/<name>/...`), before anything is read.
pub fn check_name(name: &str) -> Result<(), CatalogdError> {
    let problems = k8s_names::dns1123_subdomain(name);
    match problems.is_empty() {
        true => Ok(()),
        false => Err(CatalogdError::Name {
            name: name.to_string(),
            message: problems.join("; "),
        }),
    }
}

/// Reads the catalog under `root` (files as opm walks them, `.indexignore` honoured); `name`
/// has passed [`check_name`].
pub fn read(root: &Path, name: &str) -> Result<CatalogContent, CatalogdError> {
    let files = load::catalog_files(root)?;
    let mut all = Vec::new();
    let mut metas = Vec::new();
    for file in &files {
        let bytes = crate::yaml::read_file(file)?;
        let text = crate::yaml::utf8(file, &bytes)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let blobs: Vec<Value> = if text.trim_start().starts_with('{') {
            serde_json::Deserializer::from_str(text)
                .into_iter::<Value>()
                .collect::<Result<_, _>>()
                .map_err(|e| CatalogdError::Blob {
                    file: file.display().to_string(),
                    message: e.to_string(),
                })?
        } else {
            let mut out = Vec::new();
            for (line, doc) in load::yaml_documents(text) {
                let v = crate::yaml::parse_value_at(file, doc, line)?;
                if !v.is_null() {
                    out.push(v);
                }
            }
            out
        };
        for blob in blobs {
            let field = |k: &str| {
                blob.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let (schema, package, name) = (field("schema"), field("package"), field("name"));
            let start = all.len();
            serde_json::to_writer(&mut all, &sort_keys(blob)).map_err(|e| CatalogdError::Blob {
                file: file.display().to_string(),
                message: e.to_string(),
            })?;
            all.push(b'\n');
            metas.push(Meta {
                // A package blob is its own package.
                package: if schema == "olm.package" {
                    name.clone()
                } else {
                    package
                },
                schema,
                name,
                start,
                end: all.len(),
            });
        }
    }
    Ok(CatalogContent::new(name, all, metas))
}
