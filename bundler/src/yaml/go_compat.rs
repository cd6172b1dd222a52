//! YAML corners where a YAML 1.2 reader and OLM's Go loaders could disagree, each with the
//! verdict of go-yaml v2 + sigs.k8s.io/yaml (operator-registry and operator-framework/api read
//! manifests and catalogs through `k8s.io/apimachinery/pkg/util/yaml.NewYAMLOrJSONDecoder`,
//! which hands each document to `sigs.k8s.io/yaml.Unmarshal`: go-yaml v2 into `interface{}`,
//! `convertToJSONableObject`, then `encoding/json`). The Go verdicts come from reading that
//! code; the function is named on each row.

use std::path::Path;

use serde_json::{Value, json};

use super::{parse_documents, parse_value};

/// What Go makes of a document: its JSON value, or an error.
enum Go {
    Is(Value),
    Fails,
}

struct Case {
    name: &'static str,
    text: String,
    go: Go,
    /// Where the Go verdict comes from.
    #[allow(dead_code)]
    why: &'static str,
}

fn case(name: &'static str, text: &str, go: Go, why: &'static str) -> Case {
    Case {
        name,
        text: text.to_string(),
        go,
        why,
    }
}

fn cases() -> Vec<Case> {
    use Go::{Fails, Is};
    vec![
        case(
            "duplicate key",
            "a: 1\nb: 2\na: 3\n",
            Is(json!({"a": 3, "b": 2})),
            "go-yaml v2 decode.go decoder.mapping: SetMapIndex per key, last wins",
        ),
        case(
            "duplicate key in a CRD schema",
            "schema:\n  properties:\n    x:\n      type: string\n      description: d\n      type: integer\n",
            Is(json!({"schema": {"properties": {"x": {"type": "integer", "description": "d"}}}})),
            "go-yaml v2 decode.go decoder.mapping",
        ),
        case(
            "duplicate key in a flow mapping",
            "a: {k: 1, k: 2}\n",
            Is(json!({"a": {"k": 2}})),
            "go-yaml v2 decode.go decoder.mapping",
        ),
        case(
            "merge key",
            "base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  z: 3\n",
            Is(json!({"base": {"x": 1, "z": 2}, "m": {"x": 1, "z": 3}})),
            "go-yaml v2 decode.go decoder.merge / isMerge",
        ),
        case(
            "merge of a sequence of maps",
            "a: &a {x: 1}\nb: &b {x: 2, z: 2}\nm:\n  <<: [*a, *b]\n",
            Is(json!({"a": {"x": 1}, "b": {"x": 2, "z": 2}, "m": {"x": 1, "z": 2}})),
            "go-yaml v2 decode.go decoder.merge: earlier maps take precedence",
        ),
        case(
            "!!str tag",
            "v: !!str 123\n",
            Is(json!({"v": "123"})),
            "go-yaml v2 resolve.go resolve: any data is accepted as !!str",
        ),
        case(
            "!!int tag on a quoted scalar",
            "v: !!int \"7\"\n",
            Is(json!({"v": 7})),
            "go-yaml v2 resolve.go resolve",
        ),
        case(
            "unknown local tag",
            "v: !custom x\n",
            Is(json!({"v": "x"})),
            "go-yaml v2 resolve.go resolve: !resolvableTag returns the text",
        ),
        case(
            "YAML 1.1 booleans",
            "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: N\ng: True\n",
            Is(
                json!({"a": true, "b": false, "c": true, "d": false, "e": true, "f": false, "g": true}),
            ),
            "go-yaml v2 resolve.go resolveMapList",
        ),
        case(
            "YAML 1.1 boolean keys",
            "y: 1\nn: 2\n'y': 3\n",
            Is(json!({"true": 1, "false": 2, "y": 3})),
            "go-yaml v2 resolve.go resolveMapList; sigs.k8s.io/yaml writes bool keys as text",
        ),
        case(
            "quoted booleans stay strings",
            "a: 'yes'\nb: \"on\"\n",
            Is(json!({"a": "yes", "b": "on"})),
            "go-yaml v2 resolve.go resolve: quoted scalars carry !!str",
        ),
        case(
            "YAML 1.1 octal",
            "defaultMode: 0644\nb: 0777\nc: -010\n",
            Is(json!({"defaultMode": 420, "b": 511, "c": -8})),
            "go-yaml v2 resolve.go resolve: strconv.ParseInt(plain, 0, 64)",
        ),
        case(
            "0o, 0x, 0b and underscores",
            "a: 0o17\nb: 0x1F\nc: 0b101\nd: 1_000\n",
            Is(json!({"a": 15, "b": 31, "c": 5, "d": 1000})),
            "go-yaml v2 resolve.go resolve: underscores removed, ParseInt base 0",
        ),
        case(
            "decimal integers and floats",
            "a: 7\nb: -3\nc: 1.5\nd: .5\ne: 1e3\n",
            Is(json!({"a": 7, "b": -3, "c": 1.5, "d": 0.5, "e": 1000.0})),
            "go-yaml v2 resolve.go resolve: yamlStyleFloat",
        ),
        case(
            "largest uint64",
            "v: 18446744073709551615\n",
            Is(json!({"v": 18446744073709551615u64})),
            "go-yaml v2 resolve.go resolve: strconv.ParseUint",
        ),
        case(
            "base 60 is a string",
            "v: 1:20\n",
            Is(json!({"v": "1:20"})),
            "go-yaml v2 resolve.go resolve: base 60 floats purposefully unsupported",
        ),
        case(
            "timestamps stay strings",
            "v: 2001-12-14\n",
            Is(json!({"v": "2001-12-14"})),
            "go-yaml v2 decode.go decoder.scalar: timestamps into interface{} are kept as strings",
        ),
        case(
            "versions stay strings",
            "a: 1.2.3\nb: v1\n",
            Is(json!({"a": "1.2.3", "b": "v1"})),
            "go-yaml v2 resolve.go resolve: neither int nor yamlStyleFloat",
        ),
        case(
            "null spellings",
            "a: ~\nb: null\nc: NULL\nd:\ne: nULL\n",
            Is(json!({"a": null, "b": null, "c": null, "d": null, "e": "nULL"})),
            "go-yaml v2 resolve.go resolveMapList",
        ),
        case(
            "integer and boolean keys become strings",
            "1: a\ntrue: b\n",
            Is(json!({"1": "a", "true": "b"})),
            "sigs.k8s.io/yaml yaml.go convertToJSONableObject: int and bool keys",
        ),
        case(
            "enum item `=`",
            "enum:\n- =\n- '!='\n",
            Is(json!({"enum": ["=", "!="]})),
            "go-yaml v2 resolve.go resolve: no !!value type",
        ),
        case(
            "byte order mark",
            "\u{feff}a: 1\n",
            Is(json!({"a": 1})),
            "go-yaml v2 readerc.go yaml_parser_determine_encoding skips the BOM",
        ),
        case(
            "CRLF line breaks",
            "a: 1\r\nb: |\r\n  x\r\n  y\r\nc: >-\r\n  p\r\n  q\r\n",
            Is(json!({"a": 1, "b": "x\ny\n", "c": "p q"})),
            "go-yaml v2 scannerc.go: line breaks are normalized to \\n",
        ),
        case(
            "mixed-case boolean",
            "v: yEs\n",
            Is(json!({"v": "yEs"})),
            "go-yaml v2 resolve.go resolveMapList lists y|Y|yes|Yes|YES only",
        ),
        case(
            "merge key after an explicit key",
            "m:\n  z: 3\n  <<: {x: 1, z: 2}\n",
            Is(json!({"m": {"x": 1, "z": 2}})),
            "go-yaml v2 decode.go decoder.mapping applies `<<` in document order",
        ),
        case(
            "float out of range",
            "v: 1e400\n",
            Is(json!({"v": "1e400"})),
            "go-yaml v2 resolve.go resolve: ParseFloat fails, so the text stays a string",
        ),
        case(
            "infinity cannot become JSON",
            "v: .inf\n",
            Fails,
            "sigs.k8s.io/yaml yaml.go yamlToJSON: json.Marshal rejects +Inf",
        ),
        case(
            "null key",
            "~: a\n",
            Fails,
            "sigs.k8s.io/yaml yaml.go convertToJSONableObject: unsupported map key",
        ),
        case(
            "collection key",
            "? [a]\n: 1\n",
            Fails,
            "go-yaml v2 decode.go decoder.mapping: invalid map key",
        ),
        case(
            "tab indentation",
            "a:\n\tb: 1\n",
            Fails,
            "go-yaml v2 scannerc.go: found character that cannot start any token",
        ),
        case(
            "unclosed flow sequence",
            "a: [1, 2\nb: 3\n",
            Fails,
            "go-yaml v2 parserc.go: did not find expected ',' or ']'",
        ),
    ]
}

/// Ours, by both entry points: the multi-document reader (bundles, templates, configs) and the
/// catalog reader (fast paths first).
fn ours(text: &str) -> Result<Value, String> {
    let path = Path::new("c.yaml");
    let docs = parse_documents(path, text).map_err(|e| e.to_string());
    let one = parse_value(path, text).map_err(|e| e.to_string());
    match (docs, one) {
        (Ok(d), Ok(v)) => {
            let d = d.into_iter().next().unwrap_or(Value::Null);
            assert_eq!(d, v, "the two entry points differ on {text:?}");
            Ok(v)
        }
        (Err(a), Err(_)) => Err(a),
        (a, b) => panic!("the two entry points differ on {text:?}: {a:?} vs {b:?}"),
    }
}

#[test]
fn corners_read_as_go_reads_them() {
    let mut wrong = Vec::new();
    for c in cases() {
        let got = ours(&c.text);
        let same = match (&c.go, &got) {
            (Go::Is(want), Ok(v)) => json_eq(want, v),
            (Go::Fails, Err(_)) => true,
            _ => false,
        };
        if !same {
            wrong.push(format!("{}: ours {:?}", c.name, got));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Equal as Go's encoding/json would print them: `1000.0` and `1000` are both `1000`.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn very_long_lines_are_read_whole() {
    // apimachinery's YAMLReader reads lines of any length (LineReader.Read joins
    // bufio.Reader.ReadLine prefixes); the 1.28 MB CSVs of real bundles need it.
    let long = "x".repeat(3 << 20);
    let text = format!("a: {long}\nb: \"{long}\"\n");
    let v = ours(&text).unwrap();
    assert_eq!(v["a"].as_str().map(str::len), Some(3 << 20));
    assert_eq!(v["b"].as_str().map(str::len), Some(3 << 20));
}
