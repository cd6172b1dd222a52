//! What a catalog holds, as `opm alpha list packages|channels|bundles` prints it
//! (operator-registry `alpha/action/list.go`): the same rows, order and columns, aligned as Go's
//! `text/tabwriter` aligns them, or the same rows as JSON.

use serde::Serialize;

use super::model::Model;

#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("package {0:?} not found")]
    PackageNotFound(String),
}

/// One row of `list packages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageRow {
    pub name: String,
    /// The `spec.displayName` of the default channel head's CSV (empty, as in opm, when the
    /// bundle carries no CSV object, e.g. in the `olm.csv.metadata` form).
    pub display_name: String,
    pub default_channel: String,
}

/// One row of `list channels`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelRow {
    pub package: String,
    pub channel: String,
    pub head: String,
}

/// One row of `list bundles`: a bundle's entry in one channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleRow {
    pub package: String,
    pub channel: String,
    pub bundle: String,
    pub replaces: String,
    pub skips: Vec<String>,
    pub skip_range: String,
    pub image: String,
}

fn packages_of<'a>(
    m: &'a Model,
    package: Option<&str>,
) -> Result<Vec<&'a super::model::Package>, ListError> {
    match package {
        None | Some("") => Ok(m.packages().collect()),
        Some(p) => m
            .package(p)
            .map(|p| vec![p])
            .ok_or_else(|| ListError::PackageNotFound(p.to_string())),
    }
}

/// Packages sorted by name.
pub fn packages(m: &Model) -> Vec<PackageRow> {
    m.packages()
        .map(|p| PackageRow {
            name: p.name.clone(),
            display_name: p
                .default_channel()
                .and_then(|c| p.bundle(&c.head().name))
                .and_then(|b| b.csv_json())
                .and_then(|csv| serde_json::from_str::<serde_json::Value>(&csv).ok())
                .and_then(|csv| {
                    csv.pointer("/spec/displayName")
                        .and_then(|v| v.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_default(),
            default_channel: p.default_channel.clone(),
        })
        .collect()
}

/// Channels sorted by package, then name; only `package`'s when given.
pub fn channels(m: &Model, package: Option<&str>) -> Result<Vec<ChannelRow>, ListError> {
    let mut rows = Vec::new();
    for p in packages_of(m, package)? {
        for c in p.channels.values() {
            rows.push(ChannelRow {
                package: p.name.clone(),
                channel: c.name.clone(),
                head: c.head().name.clone(),
            });
        }
    }
    Ok(rows)
}

/// Channel entries sorted by package, channel, then bundle name; only `package`'s when given.
pub fn bundles(m: &Model, package: Option<&str>) -> Result<Vec<BundleRow>, ListError> {
    let mut rows = Vec::new();
    for p in packages_of(m, package)? {
        for c in p.channels.values() {
            for e in &c.entries {
                rows.push(BundleRow {
                    package: p.name.clone(),
                    channel: c.name.clone(),
                    bundle: e.name.clone(),
                    replaces: e.replaces.clone().unwrap_or_default(),
                    skips: e.skips.clone(),
                    skip_range: e
                        .skip_range
                        .as_ref()
                        .map(|r| r.to_string())
                        .unwrap_or_default(),
                    image: p
                        .bundle(&e.name)
                        .map(|b| b.image.clone())
                        .unwrap_or_default(),
                });
            }
        }
    }
    rows.sort_by(|a, b| {
        (&a.package, &a.channel, &a.bundle).cmp(&(&b.package, &b.channel, &b.bundle))
    });
    Ok(rows)
}

/// Rows as a table.
pub trait Table {
    const HEADER: &'static [&'static str];
    fn cells(&self) -> Vec<String>;
}

impl Table for PackageRow {
    const HEADER: &'static [&'static str] = &["NAME", "DISPLAY NAME", "DEFAULT CHANNEL"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.name.clone(),
            self.display_name.clone(),
            self.default_channel.clone(),
        ]
    }
}

impl Table for ChannelRow {
    const HEADER: &'static [&'static str] = &["PACKAGE", "CHANNEL", "HEAD"];
    fn cells(&self) -> Vec<String> {
        vec![
            self.package.clone(),
            self.channel.clone(),
            self.head.clone(),
        ]
    }
}

impl Table for BundleRow {
    const HEADER: &'static [&'static str] = &[
        "PACKAGE",
        "CHANNEL",
        "BUNDLE",
        "REPLACES",
        "SKIPS",
        "SKIP RANGE",
        "IMAGE",
    ];
    fn cells(&self) -> Vec<String> {
        vec![
            self.package.clone(),
            self.channel.clone(),
            self.bundle.clone(),
            self.replaces.clone(),
            self.skips.join(","),
            self.skip_range.clone(),
            self.image.clone(),
        ]
    }
}

/// The table as opm prints it: Go's `tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)`, i.e. every
/// column but the last padded to its widest cell (in characters) plus two spaces.
/// What `olm catalog list` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Packages,
    Channels,
    Bundles,
}

/// The rows of `listing` (of `package` only, for channels and bundles), as a table or JSON.
pub fn render(
    m: &Model,
    listing: Listing,
    package: Option<&str>,
    as_json: bool,
) -> Result<String, ListError> {
    fn out<T: Table + Serialize>(rows: &[T], as_json: bool) -> String {
        if as_json { json(rows) } else { table(rows) }
    }
    Ok(match listing {
        Listing::Packages => out(&packages(m), as_json),
        Listing::Channels => out(&channels(m, package)?, as_json),
        Listing::Bundles => out(&bundles(m, package)?, as_json),
    })
}

pub fn table<T: Table>(rows: &[T]) -> String {
    let lines: Vec<Vec<String>> =
        std::iter::once(T::HEADER.iter().map(|s| s.to_string()).collect())
            .chain(rows.iter().map(Table::cells))
            .collect();
    let columns = T::HEADER.len();
    let widths: Vec<usize> = (0..columns.saturating_sub(1))
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
                + 2
        })
        .collect();
    let mut out = String::new();
    for l in &lines {
        for (i, cell) in l.iter().enumerate() {
            out.push_str(cell);
            if let Some(w) = widths.get(i) {
                out.extend(std::iter::repeat_n(' ', w - cell.chars().count()));
            }
        }
        out.push('\n');
    }
    out
}

/// Rows as an indented JSON array, with a final newline.
pub fn json<T: Serialize>(rows: &[T]) -> String {
    let mut s = serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_pads_all_but_the_last_column_like_tabwriter() {
        let rows = vec![ChannelRow {
            package: "kube-green".into(),
            channel: "alpha".into(),
            head: "kube-green.v0.7.1".into(),
        }];
        assert_eq!(
            table(&rows),
            "PACKAGE     CHANNEL  HEAD\nkube-green  alpha    kube-green.v0.7.1\n"
        );
    }
}
