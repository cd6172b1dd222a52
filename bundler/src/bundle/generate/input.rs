//! Reading the operator's manifests: a directory tree of YAML/JSON files (kustomize output
//! split into files, `config/` rendered, ...) or one multi-document stream
//! (`kustomize build config/default | olm bundle generate --manifests -`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::GenerateError;
use crate::yaml;

/// One object of the input, with where it came from for error messages.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceObject {
    /// `file:<line>` (where the object's document starts), or `file#<n>` (1-based document
    /// number) when the lines cannot be told.
    pub source: String,
    pub object: Value,
}

impl SourceObject {
    pub fn kind(&self) -> &str {
        self.object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    pub fn api_version(&self) -> &str {
        self.object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    pub fn name(&self) -> &str {
        self.object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    /// A workload's pod containers, then its init containers.
    pub fn pod_containers(&self) -> Vec<&Value> {
        ["containers", "initContainers"]
            .iter()
            .flat_map(|key| {
                self.object
                    .pointer(&format!("/spec/template/spec/{key}"))
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
            })
            .collect()
    }
    /// The API group (`""` for the core group).
    pub fn group(&self) -> &str {
        self.api_version()
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
    }
}

/// Parses a multi-document stream. `List` objects (`kubectl get -o yaml`) are flattened.
/// Each object's origin is `<name>:<line>`, the line its document starts at.
pub fn parse_stream(name: &str, text: &str) -> Result<Vec<SourceObject>, GenerateError> {
    let docs = yaml::parse_documents(Path::new(name), text)?;
    let starts = document_lines(text).filter(|l| l.len() == docs.len());
    let many = docs.len() > 1;
    let mut out = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        let source = match &starts {
            Some(lines) => format!("{name}:{}", lines[i]),
            None if many => format!("{name}#{}", i + 1),
            None => name.to_string(),
        };
        push_flattened(source, doc, &mut out)?;
    }
    Ok(out)
}

/// The 1-based line of the first content line of every non-empty document (`---`
/// separators at column 0; blank and comment-only documents skipped, as the parser skips
/// them). `None` when the text uses anything this simple reading cannot follow.
fn document_lines(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut current: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let is_separator = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if is_separator {
            out.extend(current.take());
            if !line[3..].trim().is_empty() && !line[3..].trim_start().starts_with('#') {
                return None; // content on the separator line
            }
            continue;
        }
        if line.starts_with("...") || line.starts_with('%') {
            return None;
        }
        let t = line.trim();
        if current.is_none() && !t.is_empty() && !t.starts_with('#') {
            current = Some(i + 1);
        }
    }
    out.extend(current);
    Some(out)
}

fn push_flattened(
    source: String,
    doc: Value,
    out: &mut Vec<SourceObject>,
) -> Result<(), GenerateError> {
    if !doc.is_object() {
        return Err(GenerateError::Input {
            origin: source,
            message: "expected a Kubernetes object (a map with apiVersion, kind, metadata)".into(),
        });
    }
    let is_list = doc
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k == "List" || k.ends_with("List"))
        && doc.get("items").is_some_and(Value::is_array);
    if is_list {
        if let Some(Value::Array(items)) = doc.get("items") {
            for (j, item) in items.iter().enumerate() {
                push_flattened(format!("{source} items[{j}]"), item.clone(), out)?;
            }
        }
        return Ok(());
    }
    out.push(SourceObject {
        source,
        object: doc,
    });
    Ok(())
}

/// Reads the manifests at `path`: a directory as [`read_dir`] does, or one multi-document file.
pub fn read_path(path: &Path) -> Result<Vec<SourceObject>, GenerateError> {
    if path.is_dir() {
        return read_dir(path);
    }
    let bytes = yaml::read_file(path)?;
    parse_stream(&path.display().to_string(), yaml::utf8(path, &bytes)?)
}

/// Reads every `.yaml`, `.yml` and `.json` file under `dir` (recursively, in path order;
/// hidden files and directories skipped). `kustomization.yaml` files are skipped: they
/// describe how to build manifests, they are not manifests.
pub fn read_dir(dir: &Path) -> Result<Vec<SourceObject>, GenerateError> {
    let mut files = Vec::new();
    collect(dir, &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let bytes = yaml::read_file(&f)?;
        let text = yaml::utf8(&f, &bytes)?;
        out.extend(parse_stream(&f.display().to_string(), text)?);
    }
    Ok(out)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), GenerateError> {
    let rd = std::fs::read_dir(dir).map_err(|source| yaml::YamlError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if (name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json"))
            && name != "kustomization.yaml"
            && name != "kustomization.yml"
        {
            files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_name_the_line_each_document_starts_at() {
        let text = "# header\n---\napiVersion: v1\nkind: A\n---\n# only a comment\n---\n\napiVersion: v1\nkind: B\n";
        let objs = parse_stream("s.yaml", text).unwrap();
        let origins: Vec<&str> = objs.iter().map(|o| o.source.as_str()).collect();
        assert_eq!(origins, ["s.yaml:3", "s.yaml:9"]);
        let objs = parse_stream("one.yaml", "kind: A\napiVersion: v1\n").unwrap();
        assert_eq!(objs[0].source, "one.yaml:1");
    }
}
