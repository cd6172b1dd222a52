//! opm's schema migrations of an index database (operator-registry `pkg/sqlite/migrations`),
//! from version 6 to the latest, 13: what `opm render` applies before it reads an older
//! database. They run in one transaction on a temporary copy; the SQL is opm's, including
//! its quirks (migration 9 gives every dependency the value of the first one), because what
//! the queries read afterwards is what opm reads.
//!
//! Databases older than version 5 (before 2020) are refused: their migrations re-derive
//! tables from the CSVs with code of their own.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, Transaction, params};

/// The oldest schema version these migrations start from.
pub const OLDEST: i64 = 5;
/// opm's latest schema version.
pub const LATEST: i64 = 13;

/// Brings the database from `version` to [`LATEST`]; on failure, the migration that failed.
pub fn migrate(conn: &mut Connection, version: i64) -> Result<(), (i64, rusqlite::Error)> {
    let tx = conn.transaction().map_err(|e| (version + 1, e))?;
    for id in version + 1..=LATEST {
        run(&tx, id).map_err(|e| (id, e))?;
        tx.execute("DELETE FROM schema_migrations", [])
            .and_then(|_| tx.execute("INSERT INTO schema_migrations(version) VALUES (?)", [id]))
            .map_err(|e| (id, e))?;
    }
    tx.commit().map_err(|e| (LATEST, e))
}

fn run(tx: &Transaction, id: i64) -> rusqlite::Result<()> {
    match id {
        6 => associate_apis_with_bundle(tx),
        7 => replaces_skips(tx),
        8 => dependencies(tx),
        9 => properties(tx),
        // The package property's bundle path, filled from the bundle.
        10 => tx.execute_batch(
            "UPDATE properties SET operatorbundle_path = (SELECT bundlepath FROM operatorbundle \
             WHERE operatorbundle_name = operatorbundle.name AND operatorbundle_version = operatorbundle.version)",
        ),
        11 => tx.execute_batch("ALTER TABLE operatorbundle ADD COLUMN substitutesfor TEXT"),
        12 => tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS deprecated (operatorbundle_name TEXT PRIMARY KEY);
             INSERT INTO deprecated(operatorbundle_name)
               SELECT operatorbundle_name FROM properties WHERE properties.type = 'olm.deprecated'",
        ),
        13 => tx.execute_batch(
            "DELETE FROM deprecated WHERE deprecated.operatorbundle_name NOT IN (
               SELECT DISTINCT deprecated.operatorbundle_name
               FROM (deprecated INNER JOIN channel_entry
                     ON deprecated.operatorbundle_name = channel_entry.operatorbundle_name))",
        ),
        _ => Ok(()),
    }
}

/// A bundle row's identity: name, version, bundle path (each possibly NULL).
type BundleKey = (Option<String>, Option<String>, Option<String>);
/// group, version, kind.
type Api = (String, String, String);

/// Collects `(group, version, kind, name, version, path)` rows into APIs per bundle, skipping
/// rows with a NULL in the columns `required` marks.
fn apis_by_bundle(
    tx: &Transaction,
    query: &str,
    path_required: bool,
) -> rusqlite::Result<BTreeMap<BundleKey, BTreeSet<Api>>> {
    let mut out: BTreeMap<BundleKey, BTreeSet<Api>> = BTreeMap::new();
    let mut stmt = tx.prepare(query)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let api: (Option<String>, Option<String>, Option<String>) =
            (r.get(0)?, r.get(1)?, r.get(2)?);
        let key: BundleKey = (r.get(3)?, r.get(4)?, r.get(5)?);
        let (Some(g), Some(v), Some(k)) = api else {
            continue;
        };
        if key.0.is_none() || (path_required && (key.1.is_none() || key.2.is_none())) {
            continue;
        }
        out.entry(key).or_default().insert((g, v, k));
    }
    Ok(out)
}

/// Provided and required APIs move from channel entries to bundles (name, version, path).
fn associate_apis_with_bundle(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE api_provider_new (
           group_name TEXT, version TEXT, kind TEXT,
           operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
           FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
           FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE);
         CREATE TABLE api_requirer_new (
           group_name TEXT, version TEXT, kind TEXT,
           operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
           FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
           FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE);
         CREATE UNIQUE INDEX pk ON operatorbundle(name, version, bundlepath);",
    )?;
    for table in ["api_provider", "api_requirer"] {
        let query = format!(
            "SELECT {table}.group_name, {table}.version, {table}.kind, operatorbundle.name, operatorbundle.version, operatorbundle.bundlepath
             FROM {table}
             INNER JOIN channel_entry ON channel_entry.entry_id = {table}.channel_entry_id
             INNER JOIN operatorbundle ON operatorbundle.name = channel_entry.operatorbundle_name"
        );
        let insert = format!(
            "INSERT INTO {table}_new(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?, ?)"
        );
        for ((name, version, path), apis) in apis_by_bundle(tx, &query, true)? {
            for (g, v, k) in apis {
                tx.execute(&insert, params![g, v, k, name, version, path])?;
            }
        }
    }
    tx.execute_batch(
        "DROP TABLE api_provider;
         DROP TABLE api_requirer;
         ALTER TABLE api_provider_new RENAME TO api_provider;
         ALTER TABLE api_requirer_new RENAME TO api_requirer;",
    )
}

/// `replaces` and `skips` columns, backfilled from the channel entries: the entry of least
/// depth gives the replaced bundle, the others the skipped ones.
fn replaces_skips(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "ALTER TABLE operatorbundle ADD COLUMN replaces TEXT;
         ALTER TABLE operatorbundle ADD COLUMN skips TEXT;",
    )?;
    let names: Vec<Option<String>> = {
        let mut stmt = tx.prepare("SELECT DISTINCT operatorbundle.name FROM operatorbundle")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    let mut replacees = tx.prepare(
        "SELECT DISTINCT replaces.operatorbundle_name
         FROM channel_entry
         LEFT OUTER JOIN channel_entry replaces ON channel_entry.replaces = replaces.entry_id
         WHERE channel_entry.operatorbundle_name = ?
         ORDER BY channel_entry.depth ASC",
    )?;
    for name in names.into_iter().flatten() {
        let found: Vec<Option<String>> = replacees
            .query_map([&name], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut found = found.into_iter();
        let replaces = found.next().flatten().unwrap_or_default();
        let skips: Vec<String> = found.flatten().collect();
        tx.execute(
            "UPDATE operatorbundle SET replaces = ?, skips = ? WHERE name = ?",
            params![replaces, skips.join(","), name],
        )?;
    }
    Ok(())
}

/// The `dependencies` table, with the required APIs as `olm.gvk` dependencies.
fn dependencies(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS dependencies (
           type TEXT, value TEXT,
           operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
           FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE)",
    )?;
    let query = "SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_requirer";
    for ((name, version, path), apis) in apis_by_bundle(tx, query, false)? {
        for (g, v, k) in apis {
            // Go marshals a map: keys sorted.
            let value = serde_json::json!({"group": g, "kind": k, "type": "olm.gvk", "version": v});
            tx.execute(
                "INSERT INTO dependencies(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)",
                params!["olm.gvk", super::super::render::go_json(&value), name, version, path],
            )?;
        }
    }
    Ok(())
}

/// The `properties` table: `olm.package` of every bundle in a channel and `olm.gvk` of every
/// provided API; then dependencies lose their `type` key.
fn properties(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS properties (
           type TEXT, value TEXT,
           operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
           FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE);
         INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path)
           SELECT DISTINCT 'olm.package', json_object('packageName', channel_entry.package_name, 'version', operatorbundle.version), operatorbundle.name, operatorbundle.version, operatorbundle.bundlepath
           FROM channel_entry INNER JOIN operatorbundle ON operatorbundle.name = channel_entry.operatorbundle_name;",
    )?;
    let query = "SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_provider";
    for ((name, version, path), apis) in apis_by_bundle(tx, query, false)? {
        for (g, v, k) in apis {
            let value = serde_json::json!({"group": g, "kind": k, "version": v});
            tx.execute(
                "INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)",
                params!["olm.gvk", super::super::render::go_json(&value), name, version, path],
            )?;
        }
    }
    // opm's statement as written: its subquery's condition compares a column with itself, so
    // every dependency gets the first dependency's value.
    tx.execute_batch(
        "UPDATE dependencies SET value = (SELECT json_remove(value, '$.type') FROM dependencies
         WHERE operatorbundle_name = dependencies.operatorbundle_name)",
    )
}
