//! catalogd's `/api/v1/all` body made from the catalog files by the index build: every blob as
//! one compact JSON line with sorted keys, in opm's file walk order, and each blob's place in
//! it for `/api/v1/metas`. Written once into the cache ([`ContentWriter`]) with its gzip form;
//! the runtime then serves only those files.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use serde_json::Value;

use crate::catalog::declcfg::sort_keys;
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
    #[error("write catalogd's lines to a temporary file in the cache directory: {0}")]
    Spill(std::io::Error),
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

/// Where the parsing threads put the lines they make, as they make them: an unnamed temporary
/// file in the cache directory. [`ContentWriter::append`] copies each catalog file's part from
/// it in file order, so no file's lines wait in memory for their turn.
#[derive(Debug)]
pub struct LineSpill {
    file: File,
    len: std::sync::Mutex<u64>,
}

impl LineSpill {
    pub fn create(dir: &Path) -> std::io::Result<LineSpill> {
        Ok(LineSpill {
            file: tempfile::tempfile_in(dir)?,
            len: std::sync::Mutex::new(0),
        })
    }

    /// Writes `bytes` at the end; where they are.
    fn append(&self, bytes: &[u8]) -> std::io::Result<u64> {
        let at = {
            let mut len = self.len.lock().unwrap_or_else(|p| p.into_inner());
            let at = *len;
            *len += bytes.len() as u64;
            at
        };
        // The place is reserved: threads write their pieces side by side.
        self.file.write_all_at(bytes, at)?;
        Ok(at)
    }
}

/// How many bytes of lines a parsing thread gathers before it writes them to the spill.
const PIECE: usize = 256 << 10;

/// One catalog file's part of the body: where its lines are in the [`LineSpill`], and each
/// blob's place in them.
#[derive(Debug, Default)]
pub struct FileLines {
    pieces: Vec<(u64, u64)>,
    metas: Vec<Meta>,
    len: u64,
    text: Vec<u8>,
}

/// The lines of the catalog file `file`, whose content is `bytes` (a JSON stream, or YAML
/// documents), written to `spill` a piece at a time.
pub fn file_lines(
    file: &Path,
    bytes: &[u8],
    spill: &LineSpill,
) -> Result<FileLines, CatalogdError> {
    let bad = |message: String| CatalogdError::Blob {
        file: file.display().to_string(),
        message,
    };
    let mut out = FileLines::default();
    // As opm reads it: a JSON stream, or YAML documents (Go's rules for both).
    for chunk in crate::yaml::documents(file, bytes) {
        let v = chunk?.value()?;
        if !v.is_null() {
            out.push(v).map_err(|e| bad(e.to_string()))?;
            out.flush_if_full(spill)?;
        }
    }
    out.flush(spill)?;
    out.text = Vec::new();
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
        let at = self.text.len();
        serde_json::to_writer(&mut self.text, &sort_keys(blob))?;
        self.text.push(b'\n');
        let start = self.len;
        self.len += (self.text.len() - at) as u64;
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
            end: self.len,
        });
        Ok(())
    }

    fn flush_if_full(&mut self, spill: &LineSpill) -> Result<(), CatalogdError> {
        match self.text.len() >= PIECE {
            true => self.flush(spill),
            false => Ok(()),
        }
    }

    fn flush(&mut self, spill: &LineSpill) -> Result<(), CatalogdError> {
        if !self.text.is_empty() {
            let at = spill.append(&self.text).map_err(CatalogdError::Spill)?;
            self.pieces.push((at, self.text.len() as u64));
            self.text.clear();
        }
        Ok(())
    }
}

/// Writes the body, its gzip form and the metas index into a cache directory as the files'
/// parts come, in file order. The gzip stream is compressed on its own thread, which reads the
/// body back from its file as it grows: compressing is slower than parsing, and a thread fed
/// the parts themselves would make them wait in memory.
/// The files get their names only in [`finish`](Self::finish), so a failed build leaves
/// none behind under the final names.
pub struct ContentWriter {
    dir: PathBuf,
    /// The three files' temporary names, in the order of [`NAMES`] (removed when dropped).
    tmp: Vec<tempfile::TempPath>,
    all: File,
    metas: BufWriter<File>,
    /// How much of the body is written, for the gzip thread; `None` once it stopped.
    to_gzip: Option<mpsc::Sender<u64>>,
    gzip: Option<JoinHandle<std::io::Result<(File, u64)>>>,
    len: u64,
    /// Where parts are copied through.
    buf: Vec<u8>,
}

/// The files, in the order their temporary names are kept.
const NAMES: [&str; 3] = [ALL_FILE, GZIP_FILE, METAS_FILE];

/// A new file in `dir` for `name` while it is written: a random name made exclusively, with
/// the mode a plain create gives (0666 less the umask).
fn create_tmp(dir: &Path, name: &str) -> std::io::Result<(File, tempfile::TempPath)> {
    use std::os::unix::fs::PermissionsExt as _;
    Ok(tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp"))
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?
        .into_parts())
}

impl ContentWriter {
    /// Starts the three files in `dir` (the cache's own directory).
    pub fn create(dir: &Path) -> std::io::Result<ContentWriter> {
        let (all, all_tmp) = create_tmp(dir, ALL_FILE)?;
        let body = File::open(&all_tmp)?;
        let (gz, gz_tmp) = create_tmp(dir, GZIP_FILE)?;
        let (metas, metas_tmp) = create_tmp(dir, METAS_FILE)?;
        let mut metas = BufWriter::with_capacity(1 << 16, metas);
        // Room for the header, written last (the sizes are known only then).
        metas.write_all(&MetasHeader::default().to_bytes())?;
        let (tx, rx) = mpsc::channel::<u64>();
        let gzip = std::thread::Builder::new()
            .name("catalogd-gzip".into())
            .spawn(move || {
                let mut enc = gzip_encoder(BufWriter::with_capacity(PIECE, gz));
                let mut buf = vec![0; PIECE];
                let mut done = 0u64;
                for upto in rx {
                    while done < upto {
                        let n = (upto - done).min(buf.len() as u64) as usize;
                        body.read_exact_at(&mut buf[..n], done)?;
                        enc.write_all(&buf[..n])?;
                        done += n as u64;
                    }
                }
                let file = enc.finish()?.into_inner().map_err(|e| e.into_error())?;
                let len = file.metadata()?.len();
                Ok((file, len))
            })?;
        Ok(ContentWriter {
            dir: dir.to_path_buf(),
            tmp: vec![all_tmp, gz_tmp, metas_tmp],
            all,
            metas,
            to_gzip: Some(tx),
            gzip: Some(gzip),
            len: 0,
            buf: vec![0; PIECE],
        })
    }

    /// The cache directory the files are written in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one file's part, copied from `spill`.
    pub fn append(&mut self, part: FileLines, spill: &LineSpill) -> std::io::Result<()> {
        for (at, len) in part.pieces {
            let mut done = 0;
            while done < len {
                let n = (len - done).min(self.buf.len() as u64) as usize;
                spill.file.read_exact_at(&mut self.buf[..n], at + done)?;
                self.all.write_all(&self.buf[..n])?;
                done += n as u64;
            }
        }
        for mut m in part.metas {
            m.start += self.len;
            m.end += self.len;
            m.write_to(&mut self.metas)?;
        }
        self.len += part.len;
        let sent = self.to_gzip.as_ref().map(|tx| tx.send(self.len));
        if let Some(Err(_)) = sent {
            // The gzip thread stopped on an error: report it.
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
            tmp,
            all,
            metas,
            len,
            ..
        } = self;
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
        for (name, tmp) in NAMES.into_iter().zip(tmp) {
            tmp.persist(dir.join(name)).map_err(|e| e.error)?;
        }
        Ok(())
    }

    /// Removes the temporary files of a build that failed.
    pub fn abandon(mut self) {
        let _ = self.join_gzip();
        // Dropping the temporary names removes the files.
    }
}
