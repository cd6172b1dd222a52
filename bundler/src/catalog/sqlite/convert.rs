//! An index database (at opm's latest schema) to a declarative config, as `opm render` builds
//! it: operator-registry's `sqlite.ToModel` (packages and channels, `ListBundles`, the default
//! channel head's icon), `api.ConvertAPIBundleToModelBundle` for each bundle's properties,
//! `declcfg.ConvertFromModel`, the database's related images, then the two normalisations
//! `Render.Run` applies to every reference (bundle manifests last, related images by image).
//!
//! `ListBundles` also asks for each bundle's provided and required APIs, but those come from
//! the same `properties` and `dependencies` rows its own join reads, so they add nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::SqliteError;
use crate::catalog::declcfg::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, Package, RelatedImage, SCHEMA_BUNDLE,
    SCHEMA_CHANNEL, SCHEMA_PACKAGE,
};
use crate::catalog::property::{self, Property, TYPE_GVK, TYPE_PACKAGE};
use crate::grammar::go_base64;

/// What went wrong, before the database's path is known to the message.
pub(super) enum ConvertError {
    Sql(&'static str, rusqlite::Error),
    Invalid(String),
}

impl ConvertError {
    pub(super) fn at(self, path: &str) -> SqliteError {
        match self {
            ConvertError::Sql(context, source) => SqliteError::Sql {
                path: path.to_string(),
                context: context.to_string(),
                source,
            },
            ConvertError::Invalid(message) => SqliteError::Invalid {
                path: path.to_string(),
                message,
            },
        }
    }
}

fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> ConvertError {
    move |e| ConvertError::Sql(context, e)
}

/// A text or blob column as text (opm scans both into strings); `None` for NULL.
fn text(v: ValueRef<'_>) -> Result<Option<String>, ConvertError> {
    match v {
        ValueRef::Null => Ok(None),
        ValueRef::Text(b) | ValueRef::Blob(b) => String::from_utf8(b.to_vec())
            .map(Some)
            .map_err(|_| ConvertError::Invalid("a text column holds invalid UTF-8".into())),
        ValueRef::Integer(i) => Ok(Some(i.to_string())),
        ValueRef::Real(f) => Ok(Some(f.to_string())),
    }
}

/// A package and its channels (name to head bundle), as `GetPackage` returns them.
struct PackageRow {
    name: String,
    default_channel: String,
    channels: Vec<String>,
}

/// One bundle in one channel, as the model holds it. A bundle in several channels shares its
/// properties and related images (they come from the same rows), so its manifests are parsed
/// and held once.
struct ModelBundle {
    name: String,
    package: String,
    image: String,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
    properties: Shared<Property>,
    related_images: Shared<RelatedImage>,
}

/// A list several channels' bundles share.
type Shared<T> = Rc<Vec<T>>;
/// A bundle row's identity: name, version, bundle path.
type BundleId = (String, String, String);
/// A bundle's manifests, and the CSV among them.
type Manifests = Rc<(Vec<String>, String)>;

/// The rendered config of the index `conn` reads.
pub(super) fn to_declcfg(conn: &Connection) -> Result<DeclarativeConfig, ConvertError> {
    let packages = list_packages(conn)?;
    // package -> channel -> bundle name -> bundle (opm's model maps).
    let mut model: BTreeMap<String, BTreeMap<String, BTreeMap<String, ModelBundle>>> = packages
        .iter()
        .map(|p| {
            let channels = p.channels.iter().map(|c| (c.clone(), BTreeMap::new()));
            (p.name.clone(), channels.collect())
        })
        .collect();
    for (channel, b) in list_bundles(conn)? {
        let Some(channels) = model.get_mut(&b.package) else {
            return Err(ConvertError::Invalid(format!(
                "populate channels: unknown package {:?} for bundle {:?}",
                b.package, b.name
            )));
        };
        let Some(bundles) = channels.get_mut(&channel) else {
            return Err(ConvertError::Invalid(format!(
                "populate channels: unknown channel {channel:?} for bundle {:?}",
                b.name
            )));
        };
        bundles.insert(b.name.clone(), b);
    }

    let mut cfg = DeclarativeConfig::default();
    for p in &packages {
        let channels = &model[&p.name];
        if !channels.contains_key(&p.default_channel) {
            return Err(ConvertError::Invalid(format!(
                "package {:?}: its default channel {:?} is not one of its channels",
                p.name, p.default_channel
            )));
        }
        cfg.packages.push(Package {
            schema: SCHEMA_PACKAGE.into(),
            name: p.name.clone(),
            default_channel: p.default_channel.clone(),
            icon: package_icon(conn, &p.name, &p.default_channel)?,
            ..Default::default()
        });
        // Per bundle name: the blob, and the property lists of its channels (each list once).
        let mut bundles: BTreeMap<&str, (Bundle, Vec<&Shared<Property>>)> = BTreeMap::new();
        for (name, members) in channels {
            let mut entries: Vec<ChannelEntry> = members
                .values()
                .map(|b| ChannelEntry {
                    name: b.name.clone(),
                    replaces: b.replaces.clone(),
                    skips: b.skips.clone(),
                    skip_range: b.skip_range.clone(),
                })
                .collect();
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            cfg.channels.push(Channel {
                schema: SCHEMA_CHANNEL.into(),
                name: name.clone(),
                package: p.name.clone(),
                entries,
                ..Default::default()
            });
            for b in members.values() {
                let (_, lists) = bundles.entry(&b.name).or_insert_with(|| {
                    let blob = Bundle {
                        schema: SCHEMA_BUNDLE.into(),
                        name: b.name.clone(),
                        package: b.package.clone(),
                        image: b.image.clone(),
                        related_images: b.related_images.to_vec(),
                        ..Default::default()
                    };
                    (blob, Vec::new())
                });
                if !lists.iter().any(|l| Rc::ptr_eq(l, &b.properties)) {
                    lists.push(&b.properties);
                }
            }
        }
        for (_, (mut b, lists)) in bundles {
            let all = lists.into_iter().flat_map(|l| l.iter().cloned()).collect();
            b.properties = sorted_unique(all);
            cfg.bundles.push(b);
        }
    }
    add_database_related_images(conn, &mut cfg)?;
    // Render.Run's normalisation: manifests last, related images in Go's sort.Slice order.
    cfg.bundles
        .iter_mut()
        .for_each(crate::catalog::render::normalise);
    Ok(cfg)
}

/// Properties without duplicates (same type and value), ordered by type, then value text.
fn sorted_unique(mut props: Vec<Property>) -> Vec<Property> {
    props.sort_by(|a, b| (a.ty.as_str(), a.raw()).cmp(&(b.ty.as_str(), b.raw())));
    props.dedup();
    props
}

fn list_packages(conn: &Connection) -> Result<Vec<PackageRow>, ConvertError> {
    let names: Vec<Option<String>> = {
        let mut stmt = conn
            .prepare("SELECT DISTINCT name FROM package")
            .map_err(sql("list packages"))?;
        let rows = stmt
            .query_map([], |r| r.get(0))
            .map_err(sql("list packages"))?;
        rows.collect::<Result<_, _>>()
            .map_err(sql("list packages"))?
    };
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT package.name, default_channel, channel.name, channel.head_operatorbundle_name
             FROM package INNER JOIN channel ON channel.package_name = package.name
             WHERE package.name = ?",
        )
        .map_err(sql("get package"))?;
    let mut out = Vec::new();
    for name in names.into_iter().flatten() {
        let rows: Vec<(Option<String>, Option<String>, Option<String>)> = stmt
            .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql("get package"))?
            .collect::<Result<_, _>>()
            .map_err(sql("get package"))?;
        let Some((pkg, default_channel, _)) = rows.first() else {
            return Err(ConvertError::Invalid(format!("package {name} not found")));
        };
        out.push(PackageRow {
            name: pkg.clone().unwrap_or_default(),
            default_channel: default_channel.clone().unwrap_or_default(),
            channels: rows
                .iter()
                .map(|r| r.2.clone().unwrap_or_default())
                .collect(),
        });
    }
    Ok(out)
}

/// opm's `ListBundles`: one row per bundle, channel, dependency and property; the replaced
/// bundle found by following `replaces` from the channel heads, every other inbound edge a
/// skip.
const LIST_BUNDLES: &str = "
WITH RECURSIVE
tip (depth) AS (
  SELECT min(depth) FROM channel_entry
), replaces_entry (entry_id, replaces) AS (
  SELECT entry_id, replaces FROM channel_entry INNER JOIN tip ON channel_entry.depth = tip.depth
  UNION
  SELECT channel_entry.entry_id, channel_entry.replaces
    FROM channel_entry INNER JOIN replaces_entry ON channel_entry.entry_id = replaces_entry.replaces
), replaces_bundle (entry_id, operatorbundle_name, package_name, channel_name, replaces) AS (
  SELECT min(all_entry.entry_id), all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name, max(replaced_entry.operatorbundle_name)
    FROM channel_entry AS all_entry
      LEFT OUTER JOIN replaces_entry ON all_entry.entry_id = replaces_entry.entry_id
      LEFT OUTER JOIN channel_entry AS replaced_entry ON replaces_entry.replaces = replaced_entry.entry_id
    GROUP BY all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name
), skips_entry (entry_id, skips) AS (
  SELECT entry_id, replaces FROM channel_entry WHERE replaces IS NOT NULL
  EXCEPT
  SELECT entry_id, replaces FROM replaces_entry
), skips_bundle (operatorbundle_name, package_name, channel_name, skips) AS (
  SELECT all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name, group_concat(skipped_entry.operatorbundle_name, ',')
    FROM skips_entry
      INNER JOIN channel_entry AS all_entry ON skips_entry.entry_id = all_entry.entry_id
      INNER JOIN channel_entry AS skipped_entry ON skips_entry.skips = skipped_entry.entry_id
    GROUP BY all_entry.operatorbundle_name, all_entry.package_name, all_entry.channel_name
)
SELECT
    operatorbundle.bundle, operatorbundle.bundlepath, operatorbundle.name,
    replaces_bundle.package_name, replaces_bundle.channel_name, replaces_bundle.replaces,
    skips_bundle.skips, operatorbundle.version, operatorbundle.skiprange,
    dependencies.type, dependencies.value, properties.type, properties.value
  FROM replaces_bundle
    INNER JOIN operatorbundle ON replaces_bundle.operatorbundle_name = operatorbundle.name
    LEFT OUTER JOIN skips_bundle
      ON replaces_bundle.operatorbundle_name = skips_bundle.operatorbundle_name
        AND replaces_bundle.package_name = skips_bundle.package_name
        AND replaces_bundle.channel_name = skips_bundle.channel_name
    LEFT OUTER JOIN dependencies ON operatorbundle.name = dependencies.operatorbundle_name
    LEFT OUTER JOIN properties ON operatorbundle.name = properties.operatorbundle_name";

/// A bundle as `ListBundles` gathers it from its rows.
struct ApiBundle {
    name: String,
    package: String,
    channel: String,
    image: String,
    version: String,
    skip_range: String,
    replaces: String,
    skips: Vec<String>,
    /// The manifests and the CSV among them, parsed once per bundle.
    manifests: Manifests,
    dependencies: Vec<(String, String)>,
    properties: Vec<(String, String)>,
}

/// Every bundle of every channel: `(channel, bundle)`.
fn list_bundles(conn: &Connection) -> Result<Vec<(String, ModelBundle)>, ConvertError> {
    let context = "list bundles";
    let mut stmt = conn.prepare(LIST_BUNDLES).map_err(sql(context))?;
    let mut rows = stmt.query([]).map_err(sql(context))?;
    // Keyed by name, version, path and channel, in first-seen order.
    let mut order: Vec<(String, String, String, String)> = Vec::new();
    let mut bundles: BTreeMap<(String, String, String, String), ApiBundle> = BTreeMap::new();
    // The manifests of each bundle (name, version, path), whatever the channel.
    let mut manifests: HashMap<BundleId, Manifests> = HashMap::new();
    while let Some(r) = rows.next().map_err(sql(context))? {
        let col = |i: usize| -> Result<Option<String>, ConvertError> {
            text(r.get_ref(i).map_err(sql(context))?)
        };
        let (Some(name), Some(version), Some(path), Some(channel)) =
            (col(2)?, col(7)?, col(1)?, col(4)?)
        else {
            continue;
        };
        let dep = col(9)?.zip(col(10)?);
        let prop = col(11)?.zip(col(12)?);
        let key = (name, version, path, channel);
        if let Some(b) = bundles.get_mut(&key) {
            b.dependencies.extend(dep);
            b.properties.extend(prop);
            continue;
        }
        let bundle_key = (key.0.clone(), key.1.clone(), key.2.clone());
        let parsed = match manifests.get(&bundle_key) {
            Some(m) => Rc::clone(m),
            None => {
                let m = match col(0)? {
                    Some(s) if !s.is_empty() => split_bundle(&s).map_err(|m| {
                        ConvertError::Invalid(format!("list bundles: bundle {:?}: {m}", key.0))
                    })?,
                    _ => (Vec::new(), String::new()),
                };
                let m = Rc::new(m);
                manifests.insert(bundle_key, Rc::clone(&m));
                m
            }
        };
        let b = ApiBundle {
            name: key.0.clone(),
            package: col(3)?.unwrap_or_default(),
            channel: key.3.clone(),
            image: key.2.clone(),
            version: key.1.clone(),
            skip_range: col(8)?.unwrap_or_default(),
            replaces: col(5)?.unwrap_or_default(),
            skips: col(6)?
                .map(|s| s.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
            manifests: parsed,
            dependencies: dep.into_iter().collect(),
            properties: prop.into_iter().collect(),
        };
        order.push(key.clone());
        bundles.insert(key, b);
    }
    drop(manifests);
    let mut out = Vec::with_capacity(order.len());
    // A bundle's properties come from the same rows in every channel: converted once.
    let mut converted: HashMap<BundleId, (Shared<Property>, Shared<RelatedImage>)> = HashMap::new();
    for key in order {
        let mut b = bundles.remove(&key).expect("every key was inserted");
        let (properties, related_images) = match converted.get(&(key.0, key.1, key.2)) {
            Some((p, r)) => (Rc::clone(p), Rc::clone(r)),
            None => {
                dedup_pairs(&mut b.dependencies);
                dedup_pairs(&mut b.properties);
                let (p, r) = bundle_properties(&b)?;
                let (p, r) = (Rc::new(p), Rc::new(r));
                let bundle_key = (b.name.clone(), b.version.clone(), b.image.clone());
                converted.insert(bundle_key, (Rc::clone(&p), Rc::clone(&r)));
                (p, r)
            }
        };
        let channel = std::mem::take(&mut b.channel);
        out.push((
            channel,
            ModelBundle {
                name: b.name,
                package: b.package,
                image: b.image,
                replaces: b.replaces,
                skips: b.skips,
                skip_range: b.skip_range,
                properties,
                related_images,
            },
        ));
    }
    Ok(out)
}

/// Drops repeated `(type, value)` pairs, keeping the first.
fn dedup_pairs(pairs: &mut Vec<(String, String)>) {
    let mut seen = BTreeSet::new();
    pairs.retain(|p| seen.insert(p.clone()));
}

/// The `bundle` column: manifests as JSON objects one after another (opm
/// `BundleStringToAPIBundle`). Each object's text is kept as it is; the CSV is the first
/// object of kind ClusterServiceVersion.
fn split_bundle(text: &str) -> Result<(Vec<String>, String), String> {
    let stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let mut objects = Vec::new();
    for raw in stream {
        let raw = raw.map_err(|e| format!("its manifests are not JSON: {e}"))?;
        objects.push(raw.get().to_string());
    }
    let csv = objects.iter().find(|o| property::is_csv_json(o)).cloned();
    match csv {
        Some(csv) => Ok((objects, csv)),
        None => Err("no csv in bundle".into()),
    }
}

/// A property from the database's text: its value compacted, as opm normalises it.
fn raw_property(ty: &str, value: &str) -> Result<Property, String> {
    let compact = property::minify(value);
    RawValue::from_string(compact)
        .map(|v| Property::from_raw(ty.to_string(), v))
        .map_err(|e| format!("the value of its {ty} property is not JSON: {e}"))
}

/// `{group, version, kind}` as opm reads an `olm.gvk` value (other fields ignored).
#[derive(Deserialize)]
struct Gvk {
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

fn parse_gvk(value: &str) -> Result<(String, String, String), serde_json::Error> {
    let g: Gvk = serde_json::from_str(value)?;
    Ok((
        g.group.unwrap_or_default(),
        g.version.unwrap_or_default(),
        g.kind.unwrap_or_default(),
    ))
}

/// `api.ConvertAPIBundleToModelBundle`: the database's properties kept (provided APIs as
/// `olm.gvk`), `olm.gvk` and `olm.package` dependencies as `olm.gvk.required` and
/// `olm.package.required` (other dependency types are not carried over), an `olm.package`
/// made when none is stored, and every manifest as an `olm.bundle.object`.
fn bundle_properties(b: &ApiBundle) -> Result<(Vec<Property>, Vec<RelatedImage>), ConvertError> {
    let invalid = |m: String| ConvertError::Invalid(format!("bundle {:?}: {m}", b.name));
    let mut out: Vec<Property> = Vec::new();
    let mut provided = BTreeSet::new();
    let mut required = BTreeSet::new();
    let mut has_package = false;
    for (i, (ty, value)) in b.properties.iter().enumerate() {
        match ty.as_str() {
            TYPE_GVK => {
                let gvk = parse_gvk(value)
                    .map_err(|e| invalid(format!("parse property[{i}] of type {ty:?}: {e}")))?;
                provided.insert(gvk);
            }
            _ => {
                has_package |= ty == TYPE_PACKAGE;
                out.push(raw_property(ty, value).map_err(invalid)?);
            }
        }
    }
    for (i, (ty, value)) in b.dependencies.iter().enumerate() {
        match ty.as_str() {
            "olm.gvk" => {
                let gvk = parse_gvk(value)
                    .map_err(|e| invalid(format!("parse dependency[{i}] of type {ty:?}: {e}")))?;
                required.insert(gvk);
            }
            "olm.package" => {
                let v: property::PackageProperty = serde_json::from_str(value)
                    .map_err(|e| invalid(format!("parse dependency[{i}] of type {ty:?}: {e}")))?;
                out.push(Property::package_required(&v.package_name, &v.version));
            }
            _ => {}
        }
    }
    if !has_package {
        out.push(Property::package(&b.package, &b.version));
    }
    out.extend(provided.iter().map(|(g, v, k)| Property::gvk(g, v, k)));
    out.extend(
        required
            .iter()
            .map(|(g, v, k)| Property::gvk_required(g, v, k)),
    );
    let (objects, csv_json) = &*b.manifests;
    out.extend(
        objects
            .iter()
            .map(|o| Property::bundle_object(go_base64::encode(o.as_bytes()))),
    );
    let related_images = csv_related_images(csv_json).map_err(|e| {
        invalid(format!(
            "get related images: unmarshal csv: spec.relatedImages: {e}"
        ))
    })?;
    Ok((out, related_images))
}

/// `spec.relatedImages` of a CSV, in its order.
fn csv_related_images(csv_json: &str) -> Result<Vec<RelatedImage>, String> {
    if csv_json.is_empty() {
        return Ok(Vec::new());
    }
    #[derive(Deserialize)]
    struct Image {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        image: Option<String>,
    }
    let csv: Value = serde_json::from_str(csv_json).map_err(|e| e.to_string())?;
    let Some(list) = csv.pointer("/spec/relatedImages").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let list: Vec<Image> = serde_json::from_value(list.clone()).map_err(|e| e.to_string())?;
    Ok(list
        .into_iter()
        .map(|i| RelatedImage {
            name: i.name.unwrap_or_default(),
            image: i.image.unwrap_or_default(),
        })
        .collect())
}

/// The package icon opm takes from the head of the default channel: the CSV's first
/// `spec.icon`, its data decoded (again without spaces when that fails; no icon when that
/// fails too).
fn package_icon(
    conn: &Connection,
    package: &str,
    channel: &str,
) -> Result<Option<Icon>, ConvertError> {
    let context = "get default channel head";
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT operatorbundle.name, operatorbundle.bundle FROM channel
             INNER JOIN operatorbundle ON channel.head_operatorbundle_name = operatorbundle.name
             INNER JOIN channel_entry ON (channel_entry.channel_name = channel.name AND channel_entry.package_name = channel.package_name AND channel_entry.operatorbundle_name = operatorbundle.name)
             WHERE channel.package_name = ? AND channel.name = ? LIMIT 1",
        )
        .map_err(sql(context))?;
    let mut rows = stmt.query([package, channel]).map_err(sql(context))?;
    let Some(r) = rows.next().map_err(sql(context))? else {
        return Err(ConvertError::Invalid(format!(
            "populate package icons: get default channel head for package {package:?}: no entry found for {package} {channel}"
        )));
    };
    let name = text(r.get_ref(0).map_err(sql(context))?)?.unwrap_or_default();
    let bundle = text(r.get_ref(1).map_err(sql(context))?)?.unwrap_or_default();
    let csv_json = if bundle.is_empty() {
        String::new()
    } else {
        split_bundle(&bundle)
            .map_err(|m| ConvertError::Invalid(format!("bundle {name:?}: {m}")))?
            .1
    };
    let csv: Value = serde_json::from_str(&csv_json).map_err(|e| {
        ConvertError::Invalid(format!(
            "populate package icons: unmarshal CSV json for bundle {name:?}: {e}"
        ))
    })?;
    let Some(icon) = csv.pointer("/spec/icon/0") else {
        return Ok(None);
    };
    let field = |k: &str| icon.get(k).and_then(Value::as_str).unwrap_or("");
    let data = field("base64data");
    let bytes = match go_base64::decode(data) {
        Some(b) => b,
        None => match go_base64::decode(&data.replace(' ', "")) {
            Some(b) => b,
            None => {
                tracing::warn!("base64 decode CSV icon for bundle {name:?}: not base64");
                return Ok(None);
            }
        },
    };
    Ok(Some(Icon {
        data: go_base64::encode(&bytes),
        media_type: field("mediatype").to_string(),
    }))
}

/// opm adds the images of the `related_image` table that a bundle's CSV does not list.
fn add_database_related_images(
    conn: &Connection,
    cfg: &mut DeclarativeConfig,
) -> Result<(), ConvertError> {
    let context = "read related images";
    let mut stmt = conn
        .prepare("SELECT image, operatorbundle_name FROM related_image")
        .map_err(sql(context))?;
    let mut rows = stmt.query([]).map_err(sql(context))?;
    let mut images: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    while let Some(r) = rows.next().map_err(sql(context))? {
        let image = text(r.get_ref(0).map_err(sql(context))?)?;
        let bundle = text(r.get_ref(1).map_err(sql(context))?)?;
        if let (Some(image), Some(bundle)) = (image, bundle) {
            images.entry(bundle).or_default().insert(image);
        }
    }
    for b in &mut cfg.bundles {
        let Some(extra) = images.get(&b.name) else {
            continue;
        };
        for image in extra {
            if !b.related_images.iter().any(|r| &r.image == image) {
                b.related_images.push(RelatedImage {
                    name: String::new(),
                    image: image.clone(),
                });
            }
        }
    }
    Ok(())
}
