//! `--cache-dir`: the server's pre-built index, so a catalog pod starts without parsing YAML.
//!
//! Layout: `<cache-dir>/olm-serve.v1/index.pb` (the prost-encoded [`Index`], with the digest of
//! the catalog it came from), `payloads.bin` (each bundle's CSV JSON and manifests, read on
//! demand) and catalogd's content (`catalogd-all.jsonl`, its `.gz` form and
//! `catalogd-metas.bin`: see [`super::catalogd_content`]). The digest is a SHA-256 over the catalog files opm would read (path, size and
//! content of each, in path order, hashed on all cores), so any edit, addition or removal of a
//! catalog file makes the cache stale.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use prost::Message;
use sha2::{Digest, Sha256};

use super::build::{self as store, Written};
use super::catalogd_content::{self, ContentWriter, LineSpill};
use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::load::{self, CatalogFile};
use crate::catalog::model::Model;
use crate::catalog::property::{BundleObject, Property, TYPE_BUNDLE_OBJECT};
use crate::confined::{RelPath, Tree};
use crate::serve::proto::cache::Index;
use crate::serve::runtime::catalogd_files::ALL_FILE;
use crate::serve::runtime::store::{FORMAT, Store, StoreError};
use crate::serve::runtime::ui::UI_DIR;

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

/// The digest of the catalog files of `tree`.
pub fn digest(tree: &Tree) -> Result<String, CacheError> {
    let files = load::catalog_files(tree).map_err(|e| CacheError::Load(e.to_string()))?;
    digest_files(tree, &files)
}

fn digest_files(tree: &Tree, files: &[CatalogFile]) -> Result<String, CacheError> {
    let per_file = crate::parallel::map(files, |file: &CatalogFile| {
        hash_file(tree, &file.rel).map_err(|e| format!("read {}: {e}", file.path.display()))
    });
    let hashes = per_file
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(CacheError::Load)?;
    Ok(combine(files, &hashes))
}

/// [`file_hash`] of the file `rel`, read a buffer at a time: a server checking its cache
/// at start-up never holds a catalog file.
fn hash_file(tree: &Tree, rel: &RelPath) -> std::io::Result<[u8; 32]> {
    use std::io::Read;
    let mut file = tree.open(rel)?;
    let len = file.metadata()?.len();
    let mut h = Sha256::new();
    h.update(len.to_le_bytes());
    let mut buf = vec![0; 256 << 10];
    let mut read = 0u64;
    loop {
        match file.read(&mut buf)? {
            0 => break,
            n => {
                h.update(&buf[..n]);
                read += n as u64;
            }
        }
    }
    match read == len {
        true => Ok(h.finalize().into()),
        // Changed while it was read: hash what one read gives.
        false => tree.read(rel).map(|bytes| file_hash(&bytes)),
    }
}

/// One file's part of the digest: its length and content.
fn file_hash(bytes: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    h.finalize().into()
}

/// The catalog digest from each file's path (relative to the tree) and [`file_hash`].
fn combine(files: &[CatalogFile], hashes: &[[u8; 32]]) -> String {
    let mut total = Sha256::new();
    total.update(format!("olm-serve-cache/{}\0", FORMAT));
    for (file, h) in files.iter().zip(hashes) {
        total.update(file.rel.to_string_lossy().as_bytes());
        total.update([0]);
        total.update(h);
    }
    hex::encode(total.finalize())
}

/// Parses and validates the catalog and builds the server's index (with the digest of the
/// files, hashed as they are read); payloads go to `payloads`, catalogd's content to
/// `content`.
fn build<W: Write>(
    tree: &Tree,
    payloads: &mut W,
    content: Option<&mut ContentWriter>,
) -> Result<Index, CacheError> {
    let started = Instant::now();
    let files = load::catalog_files(tree).map_err(|e| CacheError::Load(e.to_string()))?;
    let content = match content {
        Some(c) => {
            let spill = LineSpill::create(c.dir()).map_err(|source| CacheError::Write {
                path: c.dir().to_path_buf(),
                source,
            })?;
            Some((c, spill))
        }
        None => None,
    };
    let (mut cfg, hashes, written) = load_writing_objects(tree, &files, payloads, content)?;
    let digest = combine(&files, &hashes);
    let loaded = Instant::now();
    let others = std::mem::take(&mut cfg.others);
    let (model, report) = Model::from_declcfg_owned(cfg).map_err(|r| CacheError::Invalid {
        dir: tree.shown_root(),
        report: r.to_string(),
    })?;
    if !report.diagnostics.is_empty() {
        tracing::debug!(warnings = %report, "catalog warnings");
    }
    let validated = Instant::now();
    let index = store::build_index_after(&model, &others, &digest, payloads, &written).map_err(
        |source| CacheError::Write {
            path: PathBuf::from(PAYLOAD_FILE),
            source,
        },
    )?;
    tracing::debug!(
        files = files.len(),
        load_ms = (loaded - started).as_millis() as u64,
        validate_ms = (validated - loaded).as_millis() as u64,
        index_ms = validated.elapsed().as_millis() as u64,
        "cache build phases"
    );
    // Freeing the model (a few hundred thousand allocations) overlaps writing the files.
    let garbage = (model, others);
    if let Err(e) = std::thread::Builder::new().spawn(move || drop(garbage)) {
        tracing::debug!(error = %e, "freeing the model on this thread");
    }
    Ok(index)
}

/// Reads, hashes and parses the catalog files on all cores and writes the payload of every
/// bundle with embedded manifests (`olm.bundle.object`) as its file is parsed, in file order,
/// keeping only the checked, emptied property in the catalog it returns. catalogd's lines of
/// each file are made from the same bytes and written to `content` in file order. A catalog
/// of embedded manifests (most of a `olm.bundle.object` catalog's bytes) is so never held
/// whole: peak memory is the graph plus the few files in flight.
fn load_writing_objects<W: Write>(
    tree: &Tree,
    files: &[CatalogFile],
    payloads: &mut W,
    content: Option<(&mut ContentWriter, LineSpill)>,
) -> Result<(DeclarativeConfig, Vec<[u8; 32]>, Written), CacheError> {
    let (mut writer, spill) = match content {
        Some((w, s)) => (Some(w), Some(s)),
        None => (None, None),
    };
    let spill = spill.as_ref();
    /// One parsed file: its lightened catalog, hash, the payloads of its bundles with
    /// manifests (package, name, properties and related images, encoded), and its lines of
    /// catalogd's body.
    type Parsed = (
        DeclarativeConfig,
        [u8; 32],
        Vec<Encoded>,
        catalogd_content::FileLines,
    );
    type Encoded = (String, String, Option<Vec<u8>>, bool);
    let parse = |file: &CatalogFile| -> Result<Parsed, String> {
        let path = file.path.as_path();
        let bytes = tree.read(&file.rel).map_err(|source| {
            crate::yaml::YamlError::Io {
                path: file.path.clone(),
                source,
            }
            .to_string()
        })?;
        let hash = file_hash(&bytes);
        let mut cfg = load::load_bytes(path, &bytes).map_err(|e| e.to_string())?;
        let lines = match spill {
            Some(spill) => {
                catalogd_content::file_lines(path, &bytes, spill).map_err(|e| e.to_string())?
            }
            None => catalogd_content::FileLines::default(),
        };
        drop(bytes);
        let mut encoded = Vec::new();
        for b in &mut cfg.bundles {
            if !b.properties.iter().any(|p| p.ty == TYPE_BUNDLE_OBJECT) {
                continue;
            }
            let (bytes, stub) = store::encode_payload(&b.properties, &b.related_images);
            encoded.push((b.package.clone(), b.name.clone(), bytes, stub));
            for p in b
                .properties
                .iter_mut()
                .filter(|p| p.ty == TYPE_BUNDLE_OBJECT)
            {
                // A value that does not decode is kept, so validation reports it.
                let decodes = p.value_as::<BundleObject>().is_ok_and(|o| {
                    o.r#ref.is_empty() && crate::grammar::go_base64::decode(&o.data).is_some()
                });
                if decodes {
                    *p = Property::bundle_object(String::new());
                }
            }
        }
        Ok((cfg, hash, encoded, lines))
    };
    let mut cfg = DeclarativeConfig::default();
    let mut hashes = Vec::with_capacity(files.len());
    let mut written = Written::default();
    let mut errors = Vec::new();
    // A failed payload write (a full disk) stops the parsing; parse errors are all collected.
    // Two files ahead, one per core: a parsed file holds its decoded manifests until written,
    // and the build waits on the gzip stream, not on parsing.
    let wrote: Result<(), CacheError> =
        crate::parallel::try_for_each_ordered(files, 2, parse, |parsed| {
            match parsed {
                Err(e) => errors.push(e),
                // After an error nothing more is written: the build fails.
                Ok(_) if !errors.is_empty() => {}
                Ok((part, hash, encoded, lines)) => {
                    cfg.merge(part);
                    hashes.push(hash);
                    let failed = |file: &str| {
                        let path = PathBuf::from(file);
                        |source| CacheError::Write { path, source }
                    };
                    for (package, name, bytes, stub) in encoded {
                        written
                            .record(payloads, package, name, bytes, stub)
                            .map_err(failed(PAYLOAD_FILE))?;
                    }
                    if let (Some(writer), Some(spill)) = (writer.as_mut(), spill) {
                        writer.append(lines, spill).map_err(failed(ALL_FILE))?;
                    }
                }
            }
            Ok(())
        });
    wrote?;
    if !errors.is_empty() {
        return Err(CacheError::Load(errors.join("\n")));
    }
    Ok((cfg, hashes, written))
}

/// Loads a catalog into memory without any cache (payloads kept in memory too).
pub fn load_in_memory(tree: &Tree) -> Result<Store, CacheError> {
    let files = load::catalog_files(tree).map_err(|e| CacheError::Load(e.to_string()))?;
    let mut cfg = load::load_files(tree, &files).map_err(|e| CacheError::Load(e.to_string()))?;
    let others = std::mem::take(&mut cfg.others);
    let (model, _) = Model::from_declcfg_owned(cfg).map_err(|r| CacheError::Invalid {
        dir: tree.shown_root(),
        report: r.to_string(),
    })?;
    Ok(store::in_memory(&model, &others))
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

/// Whether a cache must survive a crash of the machine once built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Flushed to disk before it counts as built (`--cache-dir`, catalog images).
    Durable,
    /// A server's temporary cache, deleted when it stops: flushing would only cost time.
    Scratch,
    /// A temporary cache for a server without catalogd's HTTP API: its content files (the
    /// body and, slowest to make, its gzip form) are not written, as nothing would read them.
    ScratchGrpcOnly,
}

/// Builds the cache for the catalog `tree` in `cache_dir` (replacing an older one), flushed
/// to disk.
pub fn build_cache(tree: &Tree, cache_dir: &Path) -> Result<LoadStats, CacheError> {
    build_cache_with(tree, cache_dir, Durability::Durable)
}

/// [`build_cache`] with the given durability.
pub fn build_cache_with(
    tree: &Tree,
    cache_dir: &Path,
    durability: Durability,
) -> Result<LoadStats, CacheError> {
    let started = Instant::now();
    check_contents(cache_dir)?;
    let dir = cache_dir.join(CACHE_SUBDIR);
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CacheError::Write { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
    // The browser's pages were rendered from the cache being replaced: they go with it, so a
    // server never shows an older catalog's pages beside a newer index.
    let ui = dir.join(UI_DIR);
    match std::fs::remove_dir_all(&ui) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(werr(&ui)(e)),
        _ => {}
    }
    let payload_path = dir.join(PAYLOAD_FILE);
    // A random name made exclusively, removed when dropped unless renamed into place.
    let (file, tmp_payload) = {
        use std::os::unix::fs::PermissionsExt as _;
        tempfile::Builder::new()
            .prefix(&format!(".{PAYLOAD_FILE}.tmp"))
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(&dir)
            .map_err(werr(&dir))?
            .into_parts()
    };
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut content = match durability {
        Durability::ScratchGrpcOnly => None,
        _ => Some(ContentWriter::create(&dir).map_err(werr(&dir))?),
    };
    let index = match build(tree, &mut w, content.as_mut()) {
        Ok(i) => i,
        Err(e) => {
            drop(w);
            if let Some(c) = content {
                c.abandon();
            }
            // `build` knows only which file it was writing: name it in the cache.
            return Err(match e {
                CacheError::Write { path, source } if path == Path::new(PAYLOAD_FILE) => {
                    CacheError::Write {
                        path: tmp_payload.to_path_buf(),
                        source,
                    }
                }
                CacheError::Write { path, source } => CacheError::Write {
                    path: dir.join(path),
                    source,
                },
                e => e,
            });
        }
    };
    // catalogd's content is complete before the index exists, as the payloads are.
    if let Some(content) = content {
        content
            .finish(durability == Durability::Durable)
            .map_err(werr(&dir.join(ALL_FILE)))?;
    }
    let file = w.into_inner().map_err(|e| CacheError::Write {
        path: tmp_payload.to_path_buf(),
        source: e.into_error(),
    })?;
    if durability == Durability::Durable {
        let built = Instant::now();
        file.sync_all().map_err(werr(&tmp_payload))?;
        tracing::debug!(
            sync_ms = built.elapsed().as_millis() as u64,
            "payloads synced"
        );
    }
    drop(file);
    // The payload file goes first: an index only ever points into a complete payload file,
    // and a crash in between leaves an index whose digest still forces a rebuild or error.
    let index_path = dir.join(INDEX_FILE);
    let _ = std::fs::remove_file(&index_path);
    tmp_payload
        .persist(&payload_path)
        .map_err(|e| werr(&payload_path)(e.error))?;
    let bytes = index.encode_to_vec();
    match durability {
        Durability::Durable => crate::atomic_write::write_atomic(&index_path, &bytes)
            .map(drop)
            .map_err(|e| CacheError::Write {
                path: index_path.clone(),
                source: std::io::Error::other(e.to_string()),
            })?,
        Durability::Scratch | Durability::ScratchGrpcOnly => {
            std::fs::write(&index_path, &bytes).map_err(werr(&index_path))?
        }
    }
    Ok(LoadStats {
        rebuilt: true,
        digest: index.digest.clone(),
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

/// The largest cache index read (a 10x certified catalog's is a few MiB).
const MAX_INDEX_FILE: u64 = 1 << 30;

/// Reads the cached index, if there is a readable one of our format.
fn read_index(cache_dir: &Path) -> Result<Index, String> {
    let path = cache_dir.join(CACHE_SUBDIR).join(INDEX_FILE);
    // A catalog image carries its own cache: its index is outside data, read within a bound.
    let bytes = crate::image::limits::read_file(&path, "a serve cache index", MAX_INDEX_FILE)
        .map_err(|e| e.to_string())?;
    let index = Index::decode(bytes.as_slice()).map_err(|e| format!("{}: {e}", path.display()))?;
    if index.format != FORMAT {
        return Err(format!(
            "{}: cache format {} (this olm writes {})",
            path.display(),
            index.format,
            FORMAT
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

/// Where catalogd's content lies in `cache_dir` (see
/// [`crate::serve::runtime::catalogd::CatalogContent::open`]).
pub fn content_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join(CACHE_SUBDIR)
}

/// Opens the store from `cache_dir`, checking the digest against the catalog `tree` and
/// rebuilding or failing per `integrity` (opm's `LoadOrRebuild` / `--cache-enforce-integrity`).
pub fn open(
    tree: &Tree,
    cache_dir: &Path,
    integrity: Integrity,
) -> Result<(Store, LoadStats), CacheError> {
    let started = Instant::now();
    check_contents(cache_dir)?;
    let computed = digest(tree)?;
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
            build_cache(tree, cache_dir)?;
            let index = read_index(cache_dir).map_err(CacheError::Load)?;
            (index, true)
        }
    };
    open_index(index, cache_dir, rebuilt, started)
}

/// Opens a cache this process (or its child) has just built from the catalog (`rebuilt`), or
/// just found fresh with [`is_fresh`], without hashing the catalog again: the index carries
/// the digest it was built with.
pub fn open_checked(cache_dir: &Path, rebuilt: bool) -> Result<(Store, LoadStats), CacheError> {
    let started = Instant::now();
    let index = read_index(cache_dir).map_err(CacheError::Load)?;
    open_index(index, cache_dir, rebuilt, started)
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

/// The catalog digest the cache in `cache_dir` was built from, when it has a readable index.
pub fn cached_digest(cache_dir: &Path) -> Option<String> {
    read_index(cache_dir).ok().map(|i| i.digest)
}

/// Whether `cache_dir` holds a cache built from exactly the catalog `tree`.
pub fn is_fresh(tree: &Tree, cache_dir: &Path) -> Result<bool, CacheError> {
    check_contents(cache_dir)?;
    let computed = digest(tree)?;
    Ok(read_index(cache_dir).is_ok_and(|i| i.digest == computed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real catalogs of ../shared/data (both forms), when the data is there.
    fn shared_catalogs() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/catalogs");
        let mut out = Vec::new();
        for repo in ["certified-operators", "community-operators-prod"] {
            let Ok(rd) = std::fs::read_dir(root.join(repo).join("catalogs")) else {
                continue;
            };
            out.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()));
        }
        out.sort();
        out
    }

    /// The cache build reads embedded manifests in a second pass, file by file; what it
    /// serves must be exactly what the one-pass in-memory store serves.
    #[test]
    fn two_pass_cache_serves_what_the_in_memory_store_serves() {
        let catalogs = shared_catalogs();
        if catalogs.is_empty() {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/data/catalogs is missing"
            );
            eprintln!("SKIP: ../shared/data/catalogs is missing");
            return;
        }
        let mut with_objects = 0;
        for (i, root) in catalogs.into_iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            // Every other catalog without catalogd's files, as a gRPC-only server builds it:
            // the index and payloads are the same.
            let durability = match i % 2 {
                0 => Durability::Scratch,
                _ => Durability::ScratchGrpcOnly,
            };
            build_cache_with(&Tree::host(&root), dir.path(), durability).unwrap();
            let content = dir.path().join(CACHE_SUBDIR).join(ALL_FILE);
            assert_eq!(
                content.exists(),
                durability == Durability::Scratch,
                "{root:?}"
            );
            let (cached, _) = open_checked(dir.path(), true).unwrap();
            let memory = load_in_memory(&Tree::host(&root)).unwrap();
            assert_eq!(cached.entry_count(), memory.entry_count(), "{root:?}");
            for (a, b) in cached.entries().zip(memory.entries()) {
                let (a, b) = (
                    cached.api_bundle(&a, true).unwrap(),
                    memory.api_bundle(&b, true).unwrap(),
                );
                with_objects += usize::from(!a.object.is_empty());
                assert_eq!(a, b, "{root:?}: {}", a.csv_name);
            }
        }
        assert!(with_objects > 0, "no bundle with manifests was compared");
    }
}
