//! The `categories` annotation must use OperatorHub's standard categories, or a custom set
//! (from `OPERATOR_BUNDLE_CATEGORIES`) for private catalogs
//! (operator-framework/api `StandardCategoriesValidator`).

use super::v::str_at;
use super::{Ctx, Finding};

pub const STANDARD: [&str; 16] = [
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Developer Tools",
    "Database",
    "Integration & Delivery",
    "Logging & Tracing",
    "Monitoring",
    "Modernization & Migration",
    "Networking",
    "OpenShift Optional",
    "Security",
    "Storage",
    "Streaming & Messaging",
    "Observability",
];

pub fn validate(ctx: &Ctx<'_>, custom: Option<&[String]>) -> Vec<Finding> {
    let Some(m) = ctx.csv else { return Vec::new() };
    let Some(value) = str_at(&m.object, "/metadata/annotations/categories") else {
        return Vec::new();
    };
    let (set, which): (Vec<&str>, &str) = match custom {
        Some(c) => (c.iter().map(String::as_str).collect(), "custom"),
        None => (STANDARD.to_vec(), "standard"),
    };
    value
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .filter(|c| !set.contains(c))
        .map(|c| {
            Finding::error("categories", "categories", format!("({}) csv.Metadata.Annotations[\"categories\"] value {c:?} is not in the set of {which} categories", ctx.csv_name()))
                .file(m.file.clone())
                .field("metadata.annotations[categories]")
                .hint(format!("use a comma-separated list of: {}", set.join(", ")))
        })
        .collect()
}
