//! catalogd's `/api/v1/all` body made from the catalog files by the index build: every blob as
//! one compact JSON line with sorted keys, in opm's file walk order, and each blob's place in
//! it for `/api/v1/metas`. Written once into the cache ([`ContentWriter`]) with its gzip form;
//! the runtime then serves only those files.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use serde_json::Value;

use crate::catalog::declcfg::sort_keys;
use crate::catalog::load;
use crate::grammar::k8s_names;
use crate::serve::runtime::catalogd_files::{
    ALL_FILE, GZIP_FILE, METAS_FILE, Meta, MetasHeader, gzip_encoder,
};

/// Why the catalog's content could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum CatalogdError {
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

/// One catalog file's part of the body: its blobs' lines, and each blob's place in them.
#[derive(Debug, Default)]
pub struct FileLines {
    pub text: Vec<u8>,
    pub metas: Vec<Meta>,
}

/// The lines of the catalog file `file`, whose content is `bytes` (a JSON stream, or YAML
/// documents).
pub fn file_lines(file: &Path, bytes: &[u8]) -> Result<FileLines, CatalogdError> {
    let text = crate::yaml::utf8(file, bytes)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bad = |message: String| CatalogdError::Blob {
        file: file.display().to_string(),
        message,
    };
    let mut out = FileLines::default();
    if text.trim_start().starts_with('{') {
        for blob in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
            out.push(blob.map_err(|e| bad(e.to_string()))?)
                .map_err(|e| bad(e.to_string()))?;
        }
    } else {
        for (line, doc) in load::yaml_documents(text) {
            let v = crate::yaml::parse_value_at(file, doc, line)?;
            if !v.is_null() {
                out.push(v).map_err(|e| bad(e.to_string()))?;
            }
        }
    }
    Ok(out)
}

impl FileLines {
    fn push(&mut self, blob: Value) -> serde_json::Result<()> {
        let field = |k: &str| {
            blob.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (schema, package, name) = (field("schema"), field("package"), field("name"));
        let start = self.text.len() as u64;
        serde_json::to_writer(&mut self.text, &sort_keys(blob))?;
        self.text.push(b'\n');
        self.metas.push(Meta {
            // A package blob is its own package.
            package: if schema == "olm.package" {
                name.clone()
            } else {
                package
            },
            schema,
            name,
            start,
            end: self.text.len() as u64,
        });
        Ok(())
    }
}

/// Writes the body, its gzip form and the metas index into a cache directory as the files'
/// parts come, in file order; the gzip stream is compressed on its own thread meanwhile.
/// The files get their names only in [`finish`](Self::finish), so a failed build leaves
/// none behind under the final names.
pub struct ContentWriter {
    dir: PathBuf,
    all: BufWriter<File>,
    metas: BufWriter<File>,
    /// Parts for the gzip thread; `None` once it stopped.
    to_gzip: Option<mpsc::SyncSender<Vec<u8>>>,
    gzip: Option<JoinHandle<std::io::Result<(File, u64)>>>,
    len: u64,
}

/// The temporary name of `name` while it is written.
fn tmp_name(name: &str) -> String {
    format!(".{name}.tmp{}", std::process::id())
}

impl ContentWriter {
    /// Starts the three files in `dir` (the cache's own directory).
    pub fn create(dir: &Path) -> std::io::Result<ContentWriter> {
        let create = |name: &str| File::create(dir.join(tmp_name(name)));
        let all = BufWriter::with_capacity(1 << 20, create(ALL_FILE)?);
        let mut metas = BufWriter::with_capacity(1 << 16, create(METAS_FILE)?);
        // Room for the header, written last (the sizes are known only then).
        metas.write_all(&MetasHeader::default().to_bytes())?;
        let gz = create(GZIP_FILE)?;
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(2);
        let gzip = std::thread::Builder::new()
            .name("catalogd-gzip".into())
            .spawn(move || {
                let mut enc = gzip_encoder(BufWriter::with_capacity(1 << 20, gz));
                for part in rx {
                    enc.write_all(&part)?;
                }
                let file = enc.finish()?.into_inner().map_err(|e| e.into_error())?;
                let len = file.metadata()?.len();
                Ok((file, len))
            })?;
        Ok(ContentWriter {
            dir: dir.to_path_buf(),
            all,
            metas,
            to_gzip: Some(tx),
            gzip: Some(gzip),
            len: 0,
        })
    }

    /// Appends one file's part.
    pub fn append(&mut self, part: FileLines) -> std::io::Result<()> {
        self.all.write_all(&part.text)?;
        for mut m in part.metas {
            m.start += self.len;
            m.end += self.len;
            m.write_to(&mut self.metas)?;
        }
        self.len += part.text.len() as u64;
        let sent = self.to_gzip.as_ref().map(|tx| tx.send(part.text));
        if let Some(Err(_)) = sent {
            // The gzip thread stopped on an error: report it.
            self.to_gzip = None;
            return self.join_gzip().map(drop);
        }
        Ok(())
    }

    fn join_gzip(&mut self) -> std::io::Result<(File, u64)> {
        self.to_gzip = None;
        match self.gzip.take().map(JoinHandle::join) {
            Some(Ok(done)) => done,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Err(std::io::Error::other("the gzip stream already failed")),
        }
    }

    /// Completes the files (flushed to disk when `durable`) and gives them their names.
    pub fn finish(mut self, durable: bool) -> std::io::Result<()> {
        let (gz, gzip_len) = self.join_gzip()?;
        let ContentWriter {
            dir,
            all,
            metas,
            len,
            ..
        } = self;
        let all = all.into_inner().map_err(|e| e.into_error())?;
        let mut metas = metas.into_inner().map_err(|e| e.into_error())?;
        let header = MetasHeader {
            all_len: len,
            gzip_len,
        };
        metas.seek(SeekFrom::Start(0))?;
        metas.write_all(&header.to_bytes())?;
        for file in [&all, &gz, &metas] {
            if durable {
                file.sync_all()?;
            }
        }
        for name in [ALL_FILE, GZIP_FILE, METAS_FILE] {
            std::fs::rename(dir.join(tmp_name(name)), dir.join(name))?;
        }
        Ok(())
    }

    /// Removes the temporary files of a build that failed.
    pub fn abandon(mut self) {
        let _ = self.join_gzip();
        for name in [ALL_FILE, GZIP_FILE, METAS_FILE] {
            let _ = std::fs::remove_file(self.dir.join(tmp_name(name)));
        }
    }
}
