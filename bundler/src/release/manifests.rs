//! The operator's manifests of a release (`manifests:` and `deploy.manifests:` in
//! release.yaml): a command's output or a directory, read exactly as `olm bundle generate
//! --manifests` reads them (hidden files and `kustomization.yaml` skipped, errors naming the
//! file and line).

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::config::ManifestsSource;
use crate::bundle::generate::GenerateError;
use crate::bundle::generate::input::{self, SourceObject};

#[derive(Debug, Error)]
pub enum ManifestsError {
    #[error("manifests: give `command:` (a program and its arguments) or `dir:`")]
    NoSource,
    #[error("cannot run `{command}` (manifests.command): {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    #[error("`{command}` printed output that is not UTF-8")]
    NotUtf8 { command: String },
    #[error("{label}: cannot read the manifests: {source}")]
    Read {
        label: String,
        source: GenerateError,
    },
}

/// The objects, and how to name where they came from (`dir` or `` `command args` ``).
#[derive(Debug)]
pub struct Manifests {
    pub label: String,
    pub objects: Vec<SourceObject>,
}

/// Runs the command (from `base`, the release config's directory; no shell) or reads the
/// directory.
pub fn read(src: &ManifestsSource, base: &Path) -> Result<Manifests, ManifestsError> {
    if let Some(dir) = &src.dir {
        let label = dir.display().to_string();
        let objects = input::read_path(dir).map_err(|source| ManifestsError::Read {
            label: label.clone(),
            source,
        })?;
        return Ok(Manifests { label, objects });
    }
    let Some((program, args)) = src.command.split_first() else {
        return Err(ManifestsError::NoSource);
    };
    let program_path = if program.contains('/') && Path::new(program).is_relative() {
        base.join(program)
    } else {
        PathBuf::from(program)
    };
    let command = src.command.join(" ");
    let out = std::process::Command::new(&program_path)
        .args(args)
        .current_dir(if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        })
        .output()
        .map_err(|source| ManifestsError::Spawn {
            command: command.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(ManifestsError::Failed {
            command,
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let text = String::from_utf8(out.stdout).map_err(|_| ManifestsError::NotUtf8 {
        command: command.clone(),
    })?;
    let label = format!("`{command}`");
    let objects = input::parse_stream(&label, &text).map_err(|source| ManifestsError::Read {
        label: label.clone(),
        source,
    })?;
    Ok(Manifests { label, objects })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_source(dir: &Path) -> ManifestsSource {
        ManifestsSource {
            command: vec![],
            dir: Some(dir.to_path_buf()),
        }
    }

    /// A release reads a directory as `olm bundle generate` does: no hidden files, no
    /// kustomization.yaml, and errors name the file and line.
    #[test]
    fn directories_read_like_bundle_generate() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(
            d.join("a.yaml"),
            "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n",
        )
        .unwrap();
        std::fs::write(d.join("kustomization.yaml"), "resources: [a.yaml]\n").unwrap();
        std::fs::write(d.join(".a.yaml.swp"), "not: [yaml").unwrap();
        std::fs::create_dir(d.join(".git")).unwrap();
        std::fs::write(d.join(".git/x.yaml"), "{").unwrap();
        let m = read(&dir_source(d), Path::new("")).unwrap();
        assert_eq!(m.objects.len(), 1);
        assert_eq!(
            m.objects[0].source,
            format!("{}:1", d.join("a.yaml").display())
        );

        std::fs::write(d.join("b.yaml"), "kind: [\n").unwrap();
        let e = read(&dir_source(d), Path::new("")).unwrap_err().to_string();
        assert!(e.contains(&d.join("b.yaml").display().to_string()), "{e}");
    }

    #[test]
    fn commands_run_from_the_config_directory() {
        let src = ManifestsSource {
            command: vec![
                "sh".into(),
                "-c".into(),
                "printf 'kind: A\\napiVersion: v1\\n---\\nkind: B\\napiVersion: v1\\n'".into(),
            ],
            dir: None,
        };
        let m = read(&src, Path::new("")).unwrap();
        assert_eq!(m.objects.len(), 2);
        assert!(m.label.starts_with("`sh -c"), "{}", m.label);
        let bad = ManifestsSource {
            command: vec!["false".into()],
            dir: None,
        };
        assert!(matches!(
            read(&bad, Path::new("")),
            Err(ManifestsError::Failed { .. })
        ));
    }
}
