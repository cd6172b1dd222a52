//! One CRD version's OpenAPI schema, flattened to field paths, and the rules for a change to
//! one field.
//!
//! Paths are written as operator-controller writes them (`^` is the root, `.name` a property,
//! `[*]` the items of a list or the values of a map): `^.spec.containers[*].image`. Each
//! field is compared without its children (they have paths of their own); every attribute a
//! rule understands is checked and set aside, and whatever else differs is an unhandled
//! change, which is refused as operator-controller refuses it (`crdupgradesafety`:
//! `ChangeValidator`, `checks.go`; rule texts from kubernetes-sigs/crdify).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Rule;

/// Field path -> the field's schema without its children.
pub type FlatSchema = BTreeMap<String, Map<String, Value>>;

/// Keys holding child schemas: compared through the children's own paths.
const CHILD_KEYS: [&str; 3] = ["properties", "items", "additionalProperties"];

/// Keys that document and never validate: a change to them is safe.
const DOC_KEYS: [&str; 4] = ["description", "title", "example", "externalDocs"];

/// Flattens `schema` (the version's `openAPIV3Schema`) into its fields.
pub fn flatten(schema: &Value) -> FlatSchema {
    let mut out = FlatSchema::new();
    walk(schema, "^".to_string(), &mut out);
    out
}

fn walk(schema: &Value, path: String, out: &mut FlatSchema) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    // The field's own attributes: everything but child schemas (copied without them, so a
    // deep schema is not copied once per level).
    let own: Map<String, Value> = obj
        .iter()
        .filter(|(k, v)| {
            !(k.as_str() == "properties" || (CHILD_KEYS.contains(&k.as_str()) && v.is_object()))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(Value::Object(props)) = obj.get("properties") {
        for (name, child) in props {
            walk(child, format!("{path}.{name}"), out);
        }
    }
    if let Some(items @ Value::Object(_)) = obj.get("items") {
        walk(items, format!("{path}[*]"), out);
    }
    if let Some(extra @ Value::Object(_)) = obj.get("additionalProperties") {
        walk(extra, format!("{path}[*]"), out);
    }
    // A list and a map at one path (never both in a valid schema): keep the first.
    out.entry(path).or_insert(own);
}

/// One breaking change to one field, before it is placed in a CRD and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub rule: Rule,
    pub message: String,
}

fn change(rule: Rule, message: String) -> Change {
    Change { rule, message }
}

/// Compares one field's old and new schema (children excluded) and returns what breaks.
pub fn compare_field(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<Change> {
    let mut old = old.clone();
    let mut new = new.clone();
    for key in CHILD_KEYS {
        // `additionalProperties: true/false` is the field's own setting; schemas are children.
        if old.get(key).is_some_and(Value::is_object) {
            old.remove(key);
        }
        if new.get(key).is_some_and(Value::is_object) {
            new.remove(key);
        }
    }
    if same(&Value::Object(old.clone()), &Value::Object(new.clone())) {
        return Vec::new();
    }
    let mut out = Vec::new();
    enum_rule(&old, &new, &mut out);
    required_rule(&old, &new, &mut out);
    for (key, rule) in [
        ("maximum", Rule::Maximum),
        ("maxItems", Rule::MaxItems),
        ("maxLength", Rule::MaxLength),
        ("maxProperties", Rule::MaxProperties),
    ] {
        bound_rule(&old, &new, key, rule, Bound::Max, &mut out);
    }
    for (key, rule) in [
        ("minimum", Rule::Minimum),
        ("minItems", Rule::MinItems),
        ("minLength", Rule::MinLength),
        ("minProperties", Rule::MinProperties),
    ] {
        bound_rule(&old, &new, key, rule, Bound::Min, &mut out);
    }
    default_rule(&old, &new, &mut out);
    type_rule(&old, &new, &mut out);
    format_rule(&old, &new, &mut out);
    tightened_flag(&old, &new, "exclusiveMaximum", Rule::Maximum, &mut out);
    tightened_flag(&old, &new, "exclusiveMinimum", Rule::Minimum, &mut out);
    tightened_flag(&old, &new, "uniqueItems", Rule::UniqueItems, &mut out);
    nullable_rule(&old, &new, &mut out);
    pattern_rule(&old, &new, &mut out);
    preserve_unknown_rule(&old, &new, &mut out);
    validations_rule(&old, &new, &mut out);

    // Whatever no rule looked at and is not documentation.
    let handled: &[&str] = &[
        "enum",
        "required",
        "maximum",
        "maxItems",
        "maxLength",
        "maxProperties",
        "minimum",
        "minItems",
        "minLength",
        "minProperties",
        "default",
        "type",
        "format",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "uniqueItems",
        "nullable",
        "pattern",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    ];
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let unhandled: Vec<String> = keys
        .into_iter()
        .filter(|k| !handled.contains(&k.as_str()) && !DOC_KEYS.contains(&k.as_str()))
        .filter(|k| !same_opt(old.get(k.as_str()), new.get(k.as_str())))
        .map(|k| {
            format!(
                "{k} {} -> {}",
                show(old.get(k.as_str())),
                show(new.get(k.as_str()))
            )
        })
        .collect();
    if !unhandled.is_empty() {
        out.push(change(
            Rule::Unhandled,
            format!(
                "unhandled changes found ({}), refusing to determine that change is safe",
                unhandled.join("; ")
            ),
        ));
    }
    out
}

/// JSON equality with numbers compared by value (`100` and `100.0` are one number).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn same_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// A value for a message: compact JSON, `<none>` when absent.
fn show(v: Option<&Value>) -> String {
    match v {
        None => "<none>".into(),
        Some(v) => v.to_string(),
    }
}

fn list(values: &[&Value]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(" "))
}

fn enum_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let empty = Vec::new();
    let o = old.get("enum").and_then(Value::as_array).unwrap_or(&empty);
    let n = new.get("enum").and_then(Value::as_array).unwrap_or(&empty);
    if o.is_empty() && !n.is_empty() {
        let added: Vec<&Value> = n.iter().collect();
        out.push(change(
            Rule::Enum,
            format!(
                "enum constraints {} added when there were no restrictions previously",
                list(&added)
            ),
        ));
        return;
    }
    if n.is_empty() {
        return; // restriction lifted
    }
    let removed: Vec<&Value> = o.iter().filter(|v| !n.iter().any(|w| same(v, w))).collect();
    if !removed.is_empty() {
        out.push(change(
            Rule::Enum,
            format!(
                "enums {} removed from the set of previously allowed values",
                list(&removed)
            ),
        ));
    }
}

fn required_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let names = |m: &Map<String, Value>| -> Vec<String> {
        m.get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let o = names(old);
    let mut added: Vec<String> = names(new).into_iter().filter(|n| !o.contains(n)).collect();
    added.sort();
    added.dedup();
    if !added.is_empty() {
        out.push(change(
            Rule::Required,
            format!("new required fields [{}] added", added.join(" ")),
        ));
    }
}

#[derive(Clone, Copy)]
enum Bound {
    Min,
    Max,
}

/// A number as written (`5`, `0.5`), for messages.
fn num(v: &Value) -> String {
    v.to_string()
}

fn bound_rule(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    key: &str,
    rule: Rule,
    bound: Bound,
    out: &mut Vec<Change>,
) {
    let o = old.get(key).filter(|v| v.is_number());
    let n = new.get(key).filter(|v| v.is_number());
    match (o, n) {
        (None, Some(n)) => out.push(change(
            rule,
            format!(
                "{key}: constraint {} added when there were no restrictions previously",
                num(n)
            ),
        )),
        (Some(o), Some(n)) => {
            let (of, nf) = (o.as_f64().unwrap_or(0.0), n.as_f64().unwrap_or(0.0));
            match bound {
                Bound::Max if nf < of => out.push(change(
                    rule,
                    format!("{key}: constraint decreased from {} to {}", num(o), num(n)),
                )),
                Bound::Min if nf > of => out.push(change(
                    rule,
                    format!("{key}: constraint increased from {} to {}", num(o), num(n)),
                )),
                _ => {}
            }
        }
        _ => {}
    }
}

fn default_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    match (old.get("default"), new.get("default")) {
        (None, Some(n)) => out.push(change(
            Rule::Default,
            format!("default value {n} added when there was no default previously"),
        )),
        (Some(o), None) => out.push(change(Rule::Default, format!("default value {o} removed"))),
        (Some(o), Some(n)) if !same(o, n) => out.push(change(
            Rule::Default,
            format!("default value changed from {o} to {n}"),
        )),
        _ => {}
    }
}

fn type_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let (o, n) = (old.get("type"), new.get("type"));
    if o != n {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
        out.push(change(
            Rule::Type,
            format!("type changed from {:?} to {:?}", s(o), s(n)),
        ));
    }
    let (o, n) = (
        old.get("x-kubernetes-int-or-string"),
        new.get("x-kubernetes-int-or-string"),
    );
    if o.and_then(Value::as_bool).unwrap_or(false) != n.and_then(Value::as_bool).unwrap_or(false) {
        out.push(change(
            Rule::Type,
            format!(
                "x-kubernetes-int-or-string changed from {} to {}",
                show(o),
                show(n)
            ),
        ));
    }
}

/// A format added or changed rejects values the old one accepted; a format removed is safe.
fn format_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let s = |m: &Map<String, Value>| {
        m.get("format")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (o, n) = (s(old), s(new));
    if o != n && !n.is_empty() {
        out.push(change(
            Rule::Format,
            format!("format changed from {o:?} to {n:?}"),
        ));
    }
}

/// A boolean constraint that tightens when it turns true (`exclusiveMaximum`, `uniqueItems`).
fn tightened_flag(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    key: &str,
    rule: Rule,
    out: &mut Vec<Change>,
) {
    let flag = |m: &Map<String, Value>| m.get(key).and_then(Value::as_bool).unwrap_or(false);
    if !flag(old) && flag(new) {
        out.push(change(
            rule,
            format!("{key}: constraint added when there was none previously"),
        ));
    }
}

fn nullable_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let flag = |m: &Map<String, Value>| m.get("nullable").and_then(Value::as_bool).unwrap_or(false);
    if flag(old) && !flag(new) {
        out.push(change(
            Rule::Nullable,
            "nullable changed from true to false".into(),
        ));
    }
}

fn pattern_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    match (old.get("pattern"), new.get("pattern")) {
        (None, Some(n)) => out.push(change(
            Rule::Pattern,
            format!("pattern {n} added when there was none previously"),
        )),
        (Some(o), Some(n)) if o != n => out.push(change(
            Rule::Pattern,
            format!("pattern changed from {o} to {n}"),
        )),
        _ => {}
    }
}

/// Dropping `x-kubernetes-preserve-unknown-fields` makes the API server prune the unknown
/// fields of every stored object on its next write.
fn preserve_unknown_rule(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    out: &mut Vec<Change>,
) {
    let key = "x-kubernetes-preserve-unknown-fields";
    let flag = |m: &Map<String, Value>| m.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag(old) && !flag(new) {
        out.push(change(
            Rule::PreserveUnknownFields,
            format!("{key} removed: unknown fields of stored objects are pruned"),
        ));
    }
}

/// CEL rules added (or changed) can refuse updates to objects the old schema accepted.
fn validations_rule(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let key = "x-kubernetes-validations";
    let empty = Vec::new();
    let o = old.get(key).and_then(Value::as_array).unwrap_or(&empty);
    let n = new.get(key).and_then(Value::as_array).unwrap_or(&empty);
    let added: Vec<&Value> = n
        .iter()
        .filter(|v| !o.iter().any(|w| same_opt(w.get("rule"), v.get("rule"))))
        .collect();
    if !added.is_empty() {
        let rules: Vec<String> = added
            .iter()
            .map(|v| show(v.get("rule")))
            .collect::<Vec<_>>();
        out.push(change(
            Rule::Validations,
            format!("validation rules [{}] added", rules.join(" ")),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn rules(old: Value, new: Value) -> Vec<(Rule, String)> {
        compare_field(&field(old), &field(new))
            .into_iter()
            .map(|c| (c.rule, c.message))
            .collect()
    }

    #[test]
    fn flatten_names_fields_like_operator_controller() {
        let s = json!({"type":"object","properties":{"spec":{"type":"object","properties":{
            "list":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},
            "labels":{"type":"object","additionalProperties":{"type":"string"}}}}}});
        let keys: Vec<String> = flatten(&s).into_keys().collect();
        assert_eq!(
            keys,
            [
                "^",
                "^.spec",
                "^.spec.labels",
                "^.spec.labels[*]",
                "^.spec.list",
                "^.spec.list[*]",
                "^.spec.list[*].name"
            ]
        );
    }

    #[test]
    fn tightening_is_reported_and_loosening_passes() {
        assert_eq!(
            rules(json!({"maximum": 10}), json!({"maximum": 5})),
            [(
                Rule::Maximum,
                "maximum: constraint decreased from 10 to 5".into()
            )]
        );
        assert!(rules(json!({"maximum": 5}), json!({"maximum": 10})).is_empty());
        assert!(rules(json!({"minLength": 5}), json!({})).is_empty());
        assert_eq!(
            rules(json!({}), json!({"minItems": 1}))[0].1,
            "minItems: constraint 1 added when there were no restrictions previously"
        );
        assert_eq!(
            rules(json!({"enum": ["a", "b"]}), json!({"enum": ["a"]}))[0].1,
            "enums [\"b\"] removed from the set of previously allowed values"
        );
        assert!(rules(json!({"enum": ["a"]}), json!({"enum": ["a", "b"]})).is_empty());
        assert!(rules(json!({"description": "x"}), json!({"description": "y"})).is_empty());
        assert!(rules(json!({"pattern": "^a$"}), json!({})).is_empty());
        assert!(rules(json!({"format": "email"}), json!({})).is_empty());
        assert!(
            rules(
                json!({"default": 0, "maximum": 100}),
                json!({"default": 0.0, "maximum": 100.0})
            )
            .is_empty()
        );
    }

    #[test]
    fn unknown_attributes_are_refused() {
        let r = rules(
            json!({"x-kubernetes-list-type": "atomic"}),
            json!({"x-kubernetes-list-type": "set"}),
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, Rule::Unhandled);
        assert!(
            r[0].1
                .contains("x-kubernetes-list-type \"atomic\" -> \"set\"")
        );
    }
}
