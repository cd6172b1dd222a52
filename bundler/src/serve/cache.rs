//! `--cache-dir`: the server's pre-built index, so a catalog pod starts without parsing YAML.
//!
//! Layout: `<cache-dir>/olm-serve.v1/index.pb` (the prost-encoded [`Index`], with the digest of
//! the catalog it came from) and `payloads.bin` (each bundle's CSV JSON and manifests, read on
//! demand). The digest is a SHA-256 over the catalog files opm would read (path, size and
//! content of each, in path order, hashed on all cores), so any edit, addition or removal of a
//! catalog file makes the cache stale.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use prost::Message;
use sha2::{Digest, Sha256};

use super::proto::cache::Index;
use super::store::{self, Store, StoreError};
use crate::catalog::load;
use crate::catalog::model::Model;

/// The subdirectory holding our cache; anything else in the cache dir is refused.
pub const CACHE_SUBDIR: &str = "olm-serve.v1";
const INDEX_FILE: &str = "index.pb";
const PAYLOAD_FILE: &str = "payloads.bin";

/// Why the catalog could not be loaded or cached.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{0}")]
    Load(String),
    #[error("invalid catalog {dir}:\n{report}")]
    Invalid { dir: PathBuf, report: String },
    #[error("cache directory has unexpected contents: {0}")]
    UnexpectedContents(String),
    #[error(
        "integrity check failed: cache requires rebuild: cache reports digest as {cached:?}, but computed digest is {computed:?}"
    )]
    Stale { cached: String, computed: String },
    #[error("integrity check failed: read existing cache digest: {0}")]
    Missing(String),
    #[error("write cache {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What start-up did, for logs and benchmarks.
#[derive(Debug, Clone, Default)]
pub struct LoadStats {
    pub rebuilt: bool,
    pub digest: String,
    pub packages: usize,
    pub entries: usize,
    pub millis: u128,
}

/// The digest of the catalog files under `root`.
pub fn digest(root: &Path) -> Result<String, CacheError> {
    let files = load::catalog_files(root).map_err(|e| CacheError::Load(e.to_string()))?;
    digest_files(root, &files)
}

fn digest_files(root: &Path, files: &[PathBuf]) -> Result<String, CacheError> {
    let hash_file = |path: &PathBuf| -> Result<[u8; 32], String> {
        let bytes = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
        let mut h = Sha256::new();
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
        Ok(h.finalize().into())
    };
    let per_file = crate::par::map(files, hash_file);
    let mut total = Sha256::new();
    total.update(format!("olm-serve-cache/{}\0", store::FORMAT));
    for (path, h) in files.iter().zip(per_file) {
        let h = h.map_err(CacheError::Load)?;
        let rel = path.strip_prefix(root).unwrap_or(path);
        total.update(rel.to_string_lossy().as_bytes());
        total.update([0]);
        total.update(h);
    }
    Ok(hex::encode(total.finalize()))
}

/// Parses and validates the catalog and builds the server's index; payloads go to `payloads`.
fn build<W: Write>(root: &Path, digest: &str, payloads: &mut W) -> Result<Index, CacheError> {
    let files = load::catalog_files(root).map_err(|e| CacheError::Load(e.to_string()))?;
    let mut cfg = load::load_files(&files).map_err(|e| CacheError::Load(e.to_string()))?;
    let others = std::mem::take(&mut cfg.others);
    let (model, report) = Model::from_declcfg_owned(cfg).map_err(|r| CacheError::Invalid {
        dir: root.to_path_buf(),
        report: r.to_string(),
    })?;
    if !report.diagnostics.is_empty() {
        tracing::debug!(warnings = %report, "catalog warnings");
    }
    store::build_index(&model, &others, digest, payloads).map_err(|source| CacheError::Write {
        path: PathBuf::from(PAYLOAD_FILE),
        source,
    })
}

/// Loads a catalog into memory without any cache (payloads kept in memory too).
pub fn load_in_memory(root: &Path) -> Result<Store, CacheError> {
    let files = load::catalog_files(root).map_err(|e| CacheError::Load(e.to_string()))?;
    let mut cfg = load::load_files(&files).map_err(|e| CacheError::Load(e.to_string()))?;
    let others = std::mem::take(&mut cfg.others);
    let (model, _) = Model::from_declcfg_owned(cfg).map_err(|r| CacheError::Invalid {
        dir: root.to_path_buf(),
        report: r.to_string(),
    })?;
    Ok(Store::from_model(&model, &others))
}

/// Refuses a cache dir holding anything but our own subdirectory (never clobber user files,
/// and say so when pointed at an opm-built cache).
fn check_contents(cache_dir: &Path) -> Result<(), CacheError> {
    let Ok(rd) = std::fs::read_dir(cache_dir) else {
        return Ok(());
    };
    let mut unexpected: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != CACHE_SUBDIR)
        .collect();
    if unexpected.is_empty() {
        return Ok(());
    }
    unexpected.sort();
    Err(CacheError::UnexpectedContents(unexpected.join(",")))
}

/// Builds the cache for `root` in `cache_dir` (replacing an older one).
pub fn build_cache(root: &Path, cache_dir: &Path) -> Result<LoadStats, CacheError> {
    let started = Instant::now();
    check_contents(cache_dir)?;
    let dir = cache_dir.join(CACHE_SUBDIR);
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CacheError::Write { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
    let digest = digest(root)?;
    let payload_path = dir.join(PAYLOAD_FILE);
    let tmp_payload = dir.join(format!(".{PAYLOAD_FILE}.tmp{}", std::process::id()));
    let file = std::fs::File::create(&tmp_payload).map_err(werr(&tmp_payload))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let index = match build(root, &digest, &mut w) {
        Ok(i) => i,
        Err(e) => {
            drop(w);
            let _ = std::fs::remove_file(&tmp_payload);
            return Err(e);
        }
    };
    let file = w.into_inner().map_err(|e| CacheError::Write {
        path: tmp_payload.clone(),
        source: e.into_error(),
    })?;
    file.sync_all().map_err(werr(&tmp_payload))?;
    drop(file);
    // The payload file goes first: an index only ever points into a complete payload file,
    // and a crash in between leaves an index whose digest still forces a rebuild or error.
    let index_path = dir.join(INDEX_FILE);
    let _ = std::fs::remove_file(&index_path);
    std::fs::rename(&tmp_payload, &payload_path).map_err(werr(&payload_path))?;
    crate::fsx::write_atomic(&index_path, &index.encode_to_vec()).map_err(|e| {
        CacheError::Write {
            path: index_path.clone(),
            source: std::io::Error::other(e.to_string()),
        }
    })?;
    Ok(LoadStats {
        rebuilt: true,
        digest,
        packages: index.packages.len(),
        entries: index
            .packages
            .iter()
            .flat_map(|p| &p.channels)
            .map(|c| c.entries.len())
            .sum(),
        millis: started.elapsed().as_millis(),
    })
}

/// Reads the cached index, if there is a readable one of our format.
fn read_index(cache_dir: &Path) -> Result<Index, String> {
    let path = cache_dir.join(CACHE_SUBDIR).join(INDEX_FILE);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let index = Index::decode(bytes.as_slice()).map_err(|e| format!("{}: {e}", path.display()))?;
    if index.format != store::FORMAT {
        return Err(format!(
            "{}: cache format {} (this olm writes {})",
            path.display(),
            index.format,
            store::FORMAT
        ));
    }
    Ok(index)
}

/// How start-up treats the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integrity {
    /// A stale or missing cache is an error (what a catalog image wants: its cache was built
    /// with the image, so a mismatch means a broken image).
    Enforce,
    /// A stale or missing cache is rebuilt.
    Rebuild,
}

/// Opens the store from `cache_dir`, checking the digest against `root` and rebuilding or
/// failing per `integrity` (opm's `LoadOrRebuild` / `--cache-enforce-integrity`).
pub fn open(
    root: &Path,
    cache_dir: &Path,
    integrity: Integrity,
) -> Result<(Store, LoadStats), CacheError> {
    let started = Instant::now();
    check_contents(cache_dir)?;
    let computed = digest(root)?;
    let (index, rebuilt) = match read_index(cache_dir) {
        Ok(index) if index.digest == computed => (index, false),
        Ok(index) if integrity == Integrity::Enforce => {
            return Err(CacheError::Stale {
                cached: index.digest,
                computed,
            });
        }
        Err(e) if integrity == Integrity::Enforce => return Err(CacheError::Missing(e)),
        _ => {
            build_cache(root, cache_dir)?;
            let index = read_index(cache_dir).map_err(CacheError::Load)?;
            (index, true)
        }
    };
    open_index(index, cache_dir, rebuilt, started)
}

/// Opens a cache this process (or its child) has just built from the catalog, without hashing
/// the catalog a second time: the index carries the digest it was built with.
pub fn open_just_built(cache_dir: &Path) -> Result<(Store, LoadStats), CacheError> {
    let started = Instant::now();
    let index = read_index(cache_dir).map_err(CacheError::Load)?;
    open_index(index, cache_dir, true, started)
}

/// The store over `index` and the cache's payload file.
fn open_index(
    index: Index,
    cache_dir: &Path,
    rebuilt: bool,
    started: Instant,
) -> Result<(Store, LoadStats), CacheError> {
    let digest = index.digest.clone();
    let packages = index.packages.len();
    let store = Store::open(index, &cache_dir.join(CACHE_SUBDIR).join(PAYLOAD_FILE))?;
    let stats = LoadStats {
        rebuilt,
        digest,
        packages,
        entries: 0,
        millis: started.elapsed().as_millis(),
    };
    Ok((store, stats))
}

/// Whether `cache_dir` holds a cache built from exactly the catalog at `root`.
pub fn is_fresh(root: &Path, cache_dir: &Path) -> Result<bool, CacheError> {
    check_contents(cache_dir)?;
    let computed = digest(root)?;
    Ok(read_index(cache_dir).is_ok_and(|i| i.digest == computed))
}
