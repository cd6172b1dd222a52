//! OperatorHub metadata (operator-framework/api `internal/operatorhubv2.go`): what the
//! OperatorHub tile needs: provider, maintainers, links, version, icon, minKubeVersion.

use serde_json::Value;

use super::v::{arr_at, str_at};
use super::{Ctx, Finding};
use crate::grammar::{email, request_uri};

const V: &str = "operatorhub";
/// Icon media types the OperatorHub UI renders.
pub const ICON_MEDIA_TYPES: [&str; 4] = ["image/gif", "image/jpeg", "image/png", "image/svg+xml"];

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(m) = ctx.csv else { return Vec::new() };
    let csv = &m.object;
    let name = ctx.csv_name();
    let mut out = Vec::new();
    let err = |msg: String, field: &str| {
        Finding::error(V, "operatorhub", format!("({name}) {msg}"))
            .file(m.file.clone())
            .field(field.to_string())
    };

    if str_at(csv, "/spec/provider/name").is_none_or(str::is_empty) {
        out.push(
            err(
                "csv.Spec.Provider.Name not specified".into(),
                "spec.provider.name",
            )
            .hint("set spec.provider: {name: <company or project>, url: <homepage>}"),
        );
    }
    for (i, mt) in arr_at(csv, "/spec/maintainers").iter().enumerate() {
        let n = mt.get("name").and_then(Value::as_str).unwrap_or("");
        let e = mt.get("email").and_then(Value::as_str).unwrap_or("");
        let field = format!("spec.maintainers[{i}]");
        if n.is_empty() || e.is_empty() {
            out.push(err(
                "csv.Spec.Maintainers elements should contain both name and email".into(),
                &field,
            ));
        } else if let Err(why) = email::check(e) {
            out.push(err(
                format!("csv.Spec.Maintainers email {e} is invalid: mail: {why}"),
                &format!("{field}.email"),
            ));
        }
    }
    for (i, l) in arr_at(csv, "/spec/links").iter().enumerate() {
        let n = l.get("name").and_then(Value::as_str).unwrap_or("");
        let u = l.get("url").and_then(Value::as_str).unwrap_or("");
        let field = format!("spec.links[{i}]");
        if n.is_empty() || u.is_empty() {
            out.push(err(
                "csv.Spec.Links elements should contain both name and url".into(),
                &field,
            ));
        } else if let Err(why) = request_uri::check(u) {
            out.push(
                err(
                    format!("csv.Spec.Links url {u} is invalid: parse {u:?}: {why}"),
                    &format!("{field}.url"),
                )
                .hint("use an absolute URL such as https://example.com/docs"),
            );
        }
    }
    if str_at(csv, "/spec/version").is_none_or(str::is_empty) {
        out.push(err("csv.Spec.Version must be set".into(), "spec.version"));
    }
    let icons = arr_at(csv, "/spec/icon");
    match icons.len() {
        0 => out.push(
            Finding::warning(
                V,
                "operatorhub",
                format!("({name}) csv.Spec.Icon not specified"),
            )
            .file(m.file.clone())
            .field("spec.icon")
            .hint("add spec.icon: [{base64data: <base64 of a PNG or SVG>, mediatype: image/png}]"),
        ),
        1 => {}
        _ => out.push(err(
            "csv.Spec.Icon should only have one element".into(),
            "spec.icon",
        )),
    }
    for (i, icon) in icons.iter().enumerate() {
        let data = icon.get("base64data").and_then(Value::as_str).unwrap_or("");
        let mt = icon.get("mediatype").and_then(Value::as_str).unwrap_or("");
        if data.is_empty() || mt.is_empty() {
            out.push(err(
                "csv.Spec.Icon elements should contain both data and mediatype".into(),
                &format!("spec.icon[{i}]"),
            ));
        } else if !ICON_MEDIA_TYPES.contains(&mt) {
            out.push(
                err(
                    format!("csv.Spec.Icon {mt} does not have a valid mediatype"),
                    &format!("spec.icon[{i}].mediatype"),
                )
                .hint(format!("use one of {}", ICON_MEDIA_TYPES.join(", "))),
            );
        } else {
            use base64::Engine;
            let compact: String = data.chars().filter(|c| !c.is_whitespace()).collect();
            if base64::engine::general_purpose::STANDARD
                .decode(compact)
                .is_err()
            {
                out.push(err(
                    "csv.Spec.Icon base64data is not valid base64".into(),
                    &format!("spec.icon[{i}].base64data"),
                ));
            }
        }
    }
    out
}
