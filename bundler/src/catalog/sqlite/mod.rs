//! Legacy sqlite index databases (what `opm index add` built before file-based catalogs),
//! read as `opm render` reads them and converted to a declarative config.
//!
//! opm brings an old database up to its latest schema in place before it reads it, so
//! rendering changes the file. Here the file is only ever opened read-only: a database at an
//! older schema is copied (SQLite's backup API, so a journal or WAL is taken into account) to a
//! temporary file, and the migrations run on the copy.
//!
//! - [`migrations`]: opm's schema migrations from version 5 on, as SQL on the copy.
//! - [`convert`]: opm's queries and its model conversion (`sqlite.ToModel`,
//!   `declcfg.ConvertFromModel`), then the normalisations `opm render` applies to every
//!   reference.

mod convert;
mod migrations;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::declcfg::DeclarativeConfig;

/// The image label that names the index database inside a legacy index image.
pub const DATABASE_LABEL: &str = "operators.operatorframework.io.index.database.v1";

/// The 16 bytes every SQLite 3 database file starts with.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The tables opm's queries read; a database without one is not an index.
const INDEX_TABLES: [&str; 6] = [
    "package",
    "channel",
    "channel_entry",
    "operatorbundle",
    "related_image",
    "schema_migrations",
];

#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    #[error("{path}: cannot read it")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not an sqlite database (it does not start with SQLite's file header)")]
    NotSqlite { path: String },
    #[error("{path}: has the header of an sqlite database but cannot be read as one")]
    Corrupt {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "{path}: an sqlite database but not an operator index: it has no {table} table (opm's index databases have package, channel, channel_entry, operatorbundle, related_image and schema_migrations)"
    )]
    NotAnIndex { path: String, table: &'static str },
    #[error(
        "{path}: index schema version {version} is older than 5, the oldest olm reads (opm has written 5 or later since 2020)"
    )]
    TooOld { path: String, version: i64 },
    #[error("{path}: cannot make a temporary copy to migrate")]
    TempCopy {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {context}")]
    Sql {
        path: String,
        context: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: the index does not convert to a valid catalog: {first}{more}")]
    InvalidCatalog {
        path: String,
        first: String,
        more: String,
    },
}

/// Whether `path` is a file that starts with SQLite's header (what opm's file-type check
/// accepts as a database).
pub fn is_sqlite_file(path: &Path) -> bool {
    // host: a file the user named, or /proc/self/fd/N of a handle opened inside an image
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 16];
    // host: the open handle's own metadata
    let regular = f.metadata().is_ok_and(|m| m.file_type().is_file());
    regular && f.read_exact(&mut head).is_ok() && &head == MAGIC
}

/// Renders an index database as `opm render` does: packages (icons from the default
/// channel's head), channels, and bundles with the properties, manifests and related images
/// the database holds. The file is not modified.
pub fn render_file(path: &Path) -> Result<DeclarativeConfig, SqliteError> {
    render_file_named(path, &path.display().to_string())
}

/// [`render_file`] for a database that errors call `label` (a file unpacked from an image
/// is named by the image and its path there).
pub fn render_file_named(path: &Path, label: &str) -> Result<DeclarativeConfig, SqliteError> {
    let label = label.to_string();
    if !is_sqlite_file(path) {
        // host: as is_sqlite_file
        if let Err(source) = std::fs::File::open(path) {
            return Err(SqliteError::Read {
                path: label,
                source,
            });
        }
        return Err(SqliteError::NotSqlite { path: label });
    }
    let index = Index::open(path, &label)?;
    let cfg = convert::to_declcfg(&index.conn).map_err(|e| e.at(&label))?;
    let report = super::validate::validate(&cfg);
    let mut errors = report.errors();
    if let Some(first) = errors.next() {
        let rest = errors.count();
        return Err(SqliteError::InvalidCatalog {
            path: label,
            first: first.to_string(),
            more: match rest {
                0 => String::new(),
                n => format!(" (and {n} more errors)"),
            },
        });
    }
    Ok(cfg)
}

/// [`render_file_named`] of a database already open: one found inside an unpacked image
/// through a confined directory handle. SQLite opens it by the handle's own name in
/// `/proc/self/fd`, so the file read is the one the handle holds, not a path from the image.
pub fn render_open_file(
    file: &std::fs::File,
    label: &str,
) -> Result<DeclarativeConfig, SqliteError> {
    use std::os::fd::AsRawFd as _;
    let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    render_file_named(&path, label)
}

/// An index database open for reading at opm's latest schema: the file itself when it is
/// already there, else a migrated temporary copy (removed on drop).
struct Index {
    conn: Connection,
    _copy: Option<crate::scratch::ScratchDir>,
}

impl Index {
    fn open(path: &Path, label: &str) -> Result<Index, SqliteError> {
        let sql = |context: &str| {
            let context = context.to_string();
            move |source| SqliteError::Sql {
                path: label.to_string(),
                context,
                source,
            }
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(sql("cannot open"))?;
        let tables = table_names(&conn).map_err(|source| match source.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
                SqliteError::Corrupt {
                    path: label.to_string(),
                    source,
                }
            }
            _ => sql("cannot read its tables")(source),
        })?;
        if let Some(table) = INDEX_TABLES
            .iter()
            .find(|t| !tables.iter().any(|n| n == *t))
        {
            return Err(SqliteError::NotAnIndex {
                path: label.to_string(),
                table,
            });
        }
        let version: i64 = conn
            .query_row("SELECT version FROM schema_migrations LIMIT 1", [], |r| {
                r.get(0)
            })
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(-1),
                e => Err(e),
            })
            .map_err(sql("cannot read the schema version"))?;
        if version < migrations::OLDEST {
            return Err(SqliteError::TooOld {
                path: label.to_string(),
                version,
            });
        }
        if version >= migrations::LATEST {
            return Ok(Index { conn, _copy: None });
        }
        let copy_err = |source| SqliteError::TempCopy {
            path: label.to_string(),
            source,
        };
        let dir = crate::scratch::ScratchDir::new().map_err(copy_err)?;
        let copy: PathBuf = dir.path().join("index.db");
        conn.backup(
            rusqlite::MAIN_DB,
            &copy,
            None::<fn(rusqlite::backup::Progress)>,
        )
        .map_err(sql("cannot copy the database to migrate it"))?;
        drop(conn);
        let mut conn = Connection::open(&copy).map_err(sql("cannot open the temporary copy"))?;
        // opm opens with foreign keys on; the migrations' cascades depend on it.
        conn.execute_batch("PRAGMA foreign_keys = ON")
            .map_err(sql("cannot enable foreign keys"))?;
        migrations::migrate(&mut conn, version)
            .map_err(|(id, source)| sql(&format!("schema migration {id}"))(source))?;
        Ok(Index {
            conn,
            _copy: Some(dir),
        })
    }
}

fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    names.collect()
}
