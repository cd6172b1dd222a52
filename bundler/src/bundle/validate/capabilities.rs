//! The `capabilities` annotation must name one of the five operator capability levels
//! (operator-framework/api `StandardCapabilitiesValidator`).

use super::v::str_at;
use super::{Ctx, Finding};

pub const LEVELS: [&str; 5] = [
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(m) = ctx.csv else { return Vec::new() };
    match str_at(&m.object, "/metadata/annotations/capabilities") {
        Some(c) if !c.is_empty() && !LEVELS.contains(&c) => vec![
            Finding::error("capabilities", "capabilities", format!("({}) csv.Metadata.Annotations.Capabilities {c:?} is not a valid capabilities level", ctx.csv_name()))
                .file(m.file.clone())
                .field("metadata.annotations[capabilities]")
                .hint(format!("use one of: {}", LEVELS.join(", "))),
        ],
        _ => Vec::new(),
    }
}
