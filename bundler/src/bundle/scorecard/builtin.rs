//! The six tests of operator-sdk's `scorecard-test` image, read from the bundle in-process
//! with operator-sdk's rules (`internal/scorecard/tests`): the custom resources come from the
//! CSV's `alm-examples` (never from a cluster), and each test's name, state, errors,
//! suggestions and log are the ones the image prints.
//!
//! Two things differ on purpose, both to give the same bytes on every run: keys of a CR's
//! `spec`/`status` are visited in sorted order (Go visits a map in random order), and the
//! `olm-crds-have-validation` log names the CRDs instead of dumping Go's struct text of each.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{State, TestConfiguration, TestResult, TestStatus};
use crate::bundle::load::BundleDir;
use crate::bundle::validate::{self, Finding, Level, Options};
use crate::confined::{EntryKind, RelPath, Tree};

pub const BASIC_CHECK_SPEC: &str = "basic-check-spec";
pub const OLM_BUNDLE_VALIDATION: &str = "olm-bundle-validation";
pub const OLM_CRDS_HAVE_VALIDATION: &str = "olm-crds-have-validation";
pub const OLM_CRDS_HAVE_RESOURCES: &str = "olm-crds-have-resources";
pub const OLM_SPEC_DESCRIPTORS: &str = "olm-spec-descriptors";
pub const OLM_STATUS_DESCRIPTORS: &str = "olm-status-descriptors";

/// The built-in tests, in the order the image lists them.
pub const ALL: [&str; 6] = [
    OLM_BUNDLE_VALIDATION,
    OLM_CRDS_HAVE_VALIDATION,
    OLM_CRDS_HAVE_RESOURCES,
    OLM_SPEC_DESCRIPTORS,
    OLM_STATUS_DESCRIPTORS,
    BASIC_CHECK_SPEC,
];

/// The executable inside the scorecard-test image.
pub const ENTRYPOINT: &str = "scorecard-test";

/// Whether `image` is operator-sdk's scorecard-test image (any registry, tag or digest, so a
/// mirrored copy counts too).
pub fn is_scorecard_test_image(image: &str) -> bool {
    let no_digest = image.split('@').next().unwrap_or("");
    let repo = match no_digest.rfind(':') {
        Some(i) if !no_digest[i..].contains('/') => &no_digest[..i],
        _ => no_digest,
    };
    repo.rsplit('/').next() == Some("scorecard-test")
}

/// Whether the test runs in-process here: the scorecard-test image with its entrypoint.
pub fn is_builtin(test: &TestConfiguration) -> bool {
    is_scorecard_test_image(&test.image)
        && test.entrypoint.first().map(String::as_str) == Some(ENTRYPOINT)
}

/// A bundle read once for all the tests, or why it could not be.
pub struct Loaded<'a> {
    tree: &'a Tree,
    /// The bundle as the format and content validators read it (for olm-bundle-validation).
    bundle: Result<BundleDir, String>,
    /// The objects the other tests read: the CSV's directory, found as operator-framework/
    /// api's `GetBundleFromDir` finds it (the first CSV under the bundle root, walked in name
    /// order), so a bundle with its objects at the top level is still read.
    objects: Result<Objects, String>,
}

/// The CSV and the other objects beside it.
pub struct Objects {
    csv: Value,
    others: Vec<Value>,
}

impl Objects {
    fn csv(&self) -> &Value {
        &self.csv
    }
}

/// Files bigger than this are not taken for a CSV while searching.
const MAX_SEARCHED_FILE: u64 = 16 << 20;

/// The documents of the regular file `rel` of `tree`, when it reads as YAML and is no larger
/// than `limit`.
fn documents_of(tree: &Tree, rel: &RelPath, limit: u64) -> Option<Vec<Value>> {
    let bytes = tree.read_bounded(rel, limit).ok()??;
    crate::yaml::parse_documents(&tree.shown(rel), bytes).ok()
}

/// The first directory under `dir` (names in order, depth first, links not followed) that
/// holds a CSV.
fn find_csv_dir(tree: &Tree, dir: &RelPath, depth: usize) -> Option<RelPath> {
    if depth > 8 {
        return None;
    }
    for (name, kind) in tree.read_dir(dir).ok()? {
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(child) = dir.child(&name) else {
            continue;
        };
        match kind {
            EntryKind::Dir => {
                if let Some(found) = find_csv_dir(tree, &child, depth + 1) {
                    return Some(found);
                }
            }
            EntryKind::File => {
                let is_csv = documents_of(tree, &child, MAX_SEARCHED_FILE)
                    .and_then(|docs| docs.into_iter().next())
                    .is_some_and(|d| {
                        d.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion")
                    });
                if is_csv {
                    return Some(dir.clone());
                }
            }
            _ => {}
        }
    }
    None
}

/// Files bigger than this are not read as objects beside the CSV.
const MAX_OBJECT_FILE: u64 = 64 << 20;

fn objects_of(tree: &Tree, bundle: &Result<BundleDir, String>) -> Result<Objects, String> {
    if let Ok(b) = bundle
        && let Some(csv) = b.csvs().next()
    {
        return Ok(Objects {
            csv: csv.object.clone(),
            others: b.manifests.iter().map(|m| m.object.clone()).collect(),
        });
    }
    let shown = tree.shown_root();
    let not_found = || format!("bundle in directory {} not found", shown.display());
    let dir = find_csv_dir(tree, &RelPath::root(), 0).ok_or_else(not_found)?;
    let entries = tree
        .read_dir(&dir)
        .map_err(|e| format!("{}: {e}", tree.shown(&dir).display()))?;
    let mut csv = None;
    let mut others = Vec::new();
    for (name, kind) in entries {
        if kind != EntryKind::File || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(rel) = dir.child(&name) else {
            continue;
        };
        let Some(docs) = documents_of(tree, &rel, MAX_OBJECT_FILE) else {
            continue;
        };
        for d in docs {
            if csv.is_none()
                && d.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion")
            {
                csv = Some(d.clone());
            }
            others.push(d);
        }
    }
    let csv = csv.ok_or_else(not_found)?;
    Ok(Objects { csv, others })
}

impl<'a> Loaded<'a> {
    /// Reads the bundle `tree` holds (confined to it when it is an unpacked image).
    pub fn load(tree: &'a Tree) -> Self {
        let bundle = BundleDir::load_tree(tree).map_err(|e| e.to_string());
        let objects = objects_of(tree, &bundle);
        Loaded {
            tree,
            bundle,
            objects,
        }
    }
}

/// Runs `test` when it is built in; `None` for a test of another image.
pub fn run(loaded: &Loaded<'_>, test: &TestConfiguration) -> Option<TestStatus> {
    if !is_builtin(test) {
        return None;
    }
    let Some(name) = test.entrypoint.get(1) else {
        // The image exits with this before printing a result, which operator-sdk turns into
        // a failed result.
        return Some(TestStatus::one(TestResult::from_error(
            "test name argument is required",
            "",
        )));
    };
    let bundle = match &loaded.objects {
        Ok(b) => b,
        Err(e) => return Some(TestStatus::one(TestResult::from_error(e.clone(), ""))),
    };
    let r = match name.as_str() {
        BASIC_CHECK_SPEC => check_spec(bundle),
        OLM_BUNDLE_VALIDATION => bundle_validation(loaded.tree, &loaded.bundle),
        OLM_CRDS_HAVE_VALIDATION => crds_have_validation(bundle),
        OLM_CRDS_HAVE_RESOURCES => crds_have_resources(bundle),
        OLM_SPEC_DESCRIPTORS => descriptors(bundle, OLM_SPEC_DESCRIPTORS, Descriptor::Spec),
        OLM_STATUS_DESCRIPTORS => descriptors(bundle, OLM_STATUS_DESCRIPTORS, Descriptor::Status),
        _ => valid_tests(),
    };
    Some(TestStatus::one(r))
}

/// What the image prints for an entrypoint it does not know.
fn valid_tests() -> TestResult {
    let mut r = TestResult::pass("");
    r.state = State::Fail;
    r.errors.push(format!(
        "Valid tests for this image include: {}",
        ALL.join(", ")
    ));
    r
}

/// One custom resource of `alm-examples`.
pub type Cr = Map<String, Value>;

/// The CSV's `alm-examples` as operator-sdk's `GetCRs` reads them: none when the annotation
/// is absent or empty; every element must be an object with a `kind`.
pub fn crs(csv: &Value) -> Result<Vec<Cr>, String> {
    let Some(text) = csv
        .pointer("/metadata/annotations/alm-examples")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    else {
        return Ok(Vec::new());
    };
    let fail = |why: String| format!("failed to parse alm-examples annotation: {why}");
    let top: Value = serde_json::from_str(text).map_err(|e| fail(e.to_string()))?;
    let go_type = |v: &Value| match v {
        Value::Object(_) => "object",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Null => "null",
    };
    match &top {
        Value::Null => return Ok(Vec::new()),
        Value::Array(_) => {}
        other => {
            return Err(fail(format!(
                "json: cannot unmarshal {} into Go value of type []unstructured.Unstructured",
                go_type(other)
            )));
        }
    }
    let raws: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| fail(e.to_string()))?;
    let mut out = Vec::with_capacity(raws.len());
    for raw in raws {
        let v: Value = serde_json::from_str(raw.get()).map_err(|e| fail(e.to_string()))?;
        let obj = match v {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                return Err(fail(format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    go_type(&other)
                )));
            }
        };
        if obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            return Err(fail(format!("Object 'Kind' is missing in '{}'", raw.get())));
        }
        out.push(obj);
    }
    Ok(out)
}

fn str_at<'v>(v: &'v Cr, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn cr_name(cr: &Cr) -> &str {
    cr.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `Unstructured.GroupVersionKind()`: an apiVersion with more than one `/` gives the empty GVK.
fn gvk(cr: &Cr) -> (String, String, String) {
    let gv = str_at(cr, "apiVersion");
    let kind = str_at(cr, "kind").to_string();
    match gv.matches('/').count() {
        _ if gv.is_empty() || gv == "/" => (String::new(), String::new(), kind),
        0 => (String::new(), gv.to_string(), kind),
        1 => {
            let (g, v) = gv.split_once('/').expect("one slash");
            (g.to_string(), v.to_string(), kind)
        }
        _ => Default::default(),
    }
}

fn gvk_string(cr: &Cr) -> String {
    let (g, v, k) = gvk(cr);
    format!("{g}/{v}, Kind={k}")
}

/// A CR field Go reads as `map[string]interface{}`; `None` when absent or null. Go panics
/// on any other type, which the image reports as a failure: so do we, naming the field.
fn block<'v>(cr: &'v Cr, field: &str) -> Result<Option<&'v Map<String, Value>>, String> {
    match cr.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(format!(
            "{field} of the custom resource {} in alm-examples is not an object",
            cr_name(cr)
        )),
    }
}

fn sorted_keys(m: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    keys
}

/// `basic-check-spec`: every CR of alm-examples has a `spec`.
fn check_spec(b: &Objects) -> TestResult {
    let mut r = TestResult::pass(BASIC_CHECK_SPEC);
    let crs = match crs(b.csv()) {
        Ok(c) => c,
        Err(e) => {
            r.errors
                .push(format!("error getting custom resources: {e}"));
            r.state = State::Fail;
            Vec::new()
        }
    };
    for cr in &crs {
        if cr.get("spec").is_none_or(Value::is_null) {
            r.errors.push(format!(
                "error spec does not exist for the custom resource {}",
                cr_name(cr)
            ));
            r.state = State::Fail;
            return r;
        }
    }
    r
}

/// How a finding of the validators reads in a scorecard result.
fn finding_text(f: &Finding) -> String {
    let text = f.to_string();
    let rest = text.split_once(' ').map_or(text.as_str(), |(_, r)| r);
    let level = match f.level {
        Level::Error => "Error",
        Level::Warning => "Warning",
    };
    format!("{level}: {rest}")
}

/// `olm-bundle-validation`: the bundle format check and the api's default validators,
/// errors failing the test and warnings becoming suggestions. The log is what operator-
/// registry's format check logs (logrus text, without the time field).
fn bundle_validation(tree: &Tree, b: &Result<BundleDir, String>) -> TestResult {
    let mut r = TestResult::pass(OLM_BUNDLE_VALIDATION);
    let b = match b {
        Ok(b) => b,
        Err(e) => {
            r.errors.push(e.clone());
            r.state = State::Fail;
            return r;
        }
    };
    let mut log = String::new();
    let line = |log: &mut String, level: &str, msg: &str| {
        log.push_str(&format!("level={level} msg=\"{msg}\" name=bundle-test\n"));
    };
    let is_dir = |name: &str| RelPath::parse(name).is_ok_and(|rel| tree.is_dir(&rel));
    let manifests = is_dir("manifests");
    let metadata = is_dir("metadata");
    if manifests {
        line(&mut log, "debug", "Found manifests directory");
    }
    if metadata {
        line(&mut log, "debug", "Found metadata directory");
    }
    if manifests && metadata {
        line(
            &mut log,
            "debug",
            "Getting mediaType info from manifests directory",
        );
        if b.annotations.is_some() {
            line(&mut log, "info", "Found annotations file");
        }
        if b.dependencies.is_empty() {
            line(
                &mut log,
                "info",
                "Could not find optional dependencies file",
            );
        } else {
            line(&mut log, "info", "Found dependencies file");
        }
    }
    let report = validate::validate(b, &Options::default());
    for f in report.errors() {
        r.errors.push(finding_text(f));
        r.state = State::Fail;
    }
    for f in report.warnings() {
        r.suggestions.push(finding_text(f));
    }
    r.log = log;
    r
}

/// A CRD as operator-sdk sees it after converting v1beta1 to v1: its name, kind and each
/// version's schema (`None` when the version has no validation).
struct Crd {
    name: String,
    kind: String,
    versions: Vec<(String, Option<Value>)>,
}

fn crds(b: &Objects) -> Vec<Crd> {
    let all: Vec<&Value> = b
        .others
        .iter()
        .filter(|o| o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .collect();
    let of = |api: &'static str| {
        all.iter()
            .copied()
            .filter(move |o| o.get("apiVersion").and_then(Value::as_str) == Some(api))
    };
    let s = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let not_null = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
    let mut out = Vec::new();
    for o in of("apiextensions.k8s.io/v1") {
        let versions = o
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .map(|v| (s(v, "/name"), not_null(v.get("schema"))))
                    .collect()
            })
            .unwrap_or_default();
        out.push(Crd {
            name: s(o, "/metadata/name"),
            kind: s(o, "/spec/names/kind"),
            versions,
        });
    }
    for o in of("apiextensions.k8s.io/v1beta1") {
        // v1beta1's top-level validation applies to every version without its own schema;
        // a CRD with only `spec.version` has that one version.
        let top = not_null(o.pointer("/spec/validation"));
        let mut versions: Vec<(String, Option<Value>)> = o
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .map(|v| {
                        (
                            s(v, "/name"),
                            not_null(v.get("schema")).or_else(|| top.clone()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if versions.is_empty() && !s(o, "/spec/version").is_empty() {
            versions.push((s(o, "/spec/version"), top.clone()));
        }
        out.push(Crd {
            name: s(o, "/metadata/name"),
            kind: s(o, "/spec/names/kind"),
            versions,
        });
    }
    out
}

/// `olm-crds-have-validation`: every spec and status field of each CR is in its CRD's schema.
fn crds_have_validation(b: &Objects) -> TestResult {
    let mut r = TestResult::pass(OLM_CRDS_HAVE_VALIDATION);
    let crs = match crs(b.csv()) {
        Ok(c) => c,
        Err(e) => {
            r.errors.push(e);
            r.state = State::Error;
            return r;
        }
    };
    r.log += &format!("Loaded {} Custom Resources from alm-examples\n", crs.len());
    let crds = crds(b);
    let names: Vec<&str> = crds.iter().map(|c| c.name.as_str()).collect();
    r.log += &format!("Loaded CustomresourceDefinitions: [{}]\n", names.join(" "));
    for cr in &crs {
        if let Err(e) = cr_from_crd_api(cr, &crds, &mut r) {
            r.errors.push(e);
            r.state = State::Fail;
        }
    }
    r
}

fn cr_from_crd_api(cr: &Cr, crds: &[Crd], r: &mut TestResult) -> Result<(), String> {
    let (_, version, kind) = gvk(cr);
    for crd in crds {
        for (vname, schema) in &crd.versions {
            if !version.eq_ignore_ascii_case(vname) || !kind.eq_ignore_ascii_case(&crd.kind) {
                continue;
            }
            let Some(schema) = schema else {
                r.suggestions
                    .push(format!("Add CRD validation for {}/{vname}", crd.kind));
                continue;
            };
            let mut failed = false;
            for field in ["spec", "status"] {
                let Some(values) = block(cr, field)? else {
                    continue;
                };
                let props = schema
                    .pointer(&format!("/openAPIV3Schema/properties/{field}/properties"))
                    .and_then(Value::as_object);
                for key in sorted_keys(values) {
                    if props.is_none_or(|p| !p.contains_key(key)) {
                        failed = true;
                        r.suggestions.push(format!(
                            "Add CRD validation for {field} field `{key}` in {kind}/{version}"
                        ));
                    }
                }
            }
            if failed {
                r.state = State::Fail;
                return Ok(());
            }
        }
    }
    Ok(())
}

/// `olm-crds-have-resources`: every owned CRD lists the resources it uses.
fn crds_have_resources(b: &Objects) -> TestResult {
    let csv = b.csv();
    let mut r = TestResult::pass(OLM_CRDS_HAVE_RESOURCES);
    r.log += &format!("Loaded ClusterServiceVersion: {}\n", csv_name(csv));
    for owned in owned(csv) {
        let n = owned
            .get("resources")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if n == 0 {
            r.state = State::Fail;
            r.errors
                .push("Owned CRDs do not have resources specified".to_string());
            return r;
        }
    }
    r
}

fn csv_name(csv: &Value) -> &str {
    csv.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn owned(csv: &Value) -> &[Value] {
    csv.pointer("/spec/customresourcedefinitions/owned")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Descriptor {
    Spec,
    Status,
}

/// The owned CRD description a CR belongs to: same kind and version.
fn owned_for<'v>(csv: &'v Value, cr: &Cr) -> Option<&'v Value> {
    // The kind as `GetKind()` reads it; the version from `GroupVersionKind()`.
    let kind = str_at(cr, "kind");
    let (_, version, _) = gvk(cr);
    owned(csv).iter().find(|o| {
        o.get("kind").and_then(Value::as_str).unwrap_or("") == kind
            && o.get("version").and_then(Value::as_str).unwrap_or("") == version
    })
}

fn no_owned_crd(cr: &Cr, r: &mut TestResult) {
    r.errors.push(format!(
        "Failed to find an owned CRD for CR {} with GVK {}",
        cr_name(cr),
        gvk_string(cr)
    ));
    r.state = State::Fail;
}

/// `olm-spec-descriptors` / `olm-status-descriptors`.
fn descriptors(b: &Objects, name: &str, which: Descriptor) -> TestResult {
    let csv = b.csv();
    let mut r = TestResult::pass(name);
    r.log += &format!("Loaded ClusterServiceVersion: {}\n", csv_name(csv));
    let crs = match crs(csv) {
        Ok(c) => c,
        Err(e) => {
            r.errors.push(e);
            r.state = State::Error;
            return r;
        }
    };
    r.log += &format!("Loaded {} Custom Resources from alm-examples\n", crs.len());
    for cr in &crs {
        let checked = match which {
            Descriptor::Spec => spec_descriptors(cr, csv, &mut r),
            Descriptor::Status => status_descriptor(cr, csv, &mut r),
        };
        if let Err(e) = checked {
            r.errors.push(e);
            r.state = State::Fail;
        }
    }
    r
}

fn spec_descriptors(cr: &Cr, csv: &Value, r: &mut TestResult) -> Result<(), String> {
    // A CR without a spec fails the test without an error message, as upstream does.
    let Some(spec) = block(cr, "spec")? else {
        r.state = State::Fail;
        return Ok(());
    };
    let Some(crd) = owned_for(csv, cr) else {
        no_owned_crd(cr, r);
        return Ok(());
    };
    let paths: Vec<&str> = crd
        .get("specDescriptors")
        .and_then(Value::as_array)
        .map(|ds| {
            ds.iter()
                .map(|d| d.get("path").and_then(Value::as_str).unwrap_or(""))
                .collect()
        })
        .unwrap_or_default();
    for key in sorted_keys(spec) {
        if !paths.contains(&key.as_str()) {
            r.errors
                .push(format!("{key} does not have a spec descriptor"));
            r.suggestions
                .push(format!("Add a spec descriptor for {key}"));
            r.state = State::Fail;
        }
    }
    Ok(())
}

fn status_descriptor(cr: &Cr, csv: &Value, r: &mut TestResult) -> Result<(), String> {
    let Some(crd) = owned_for(csv, cr) else {
        no_owned_crd(cr, r);
        return Ok(());
    };
    let name = crd.get("name").and_then(Value::as_str).unwrap_or("");
    let has_status = block(cr, "status")?.is_some_and(|s| !s.is_empty());
    if !has_status {
        r.suggestions.push(format!(
            "{name} does not have status spec. Note that all objects that represent a physical resource whose state may vary from the user's desired intent SHOULD have a spec and a status. More info: https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#spec-and-status"
        ));
    }
    let descriptors = crd
        .get("statusDescriptors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if has_status && descriptors == 0 {
        r.errors
            .push(format!("{name} does not have a status descriptor"));
        r.suggestions.push(format!(
            "add status descriptor for the crd {name}. If your project is built using Golang you can use the csv markers. More info: https://sdk.operatorframework.io/docs/building-operators/golang/references/markers/"
        ));
        r.state = State::Fail;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn csv_with(examples: &str) -> Value {
        json!({"metadata": {"name": "op.v1", "annotations": {"alm-examples": examples}}})
    }

    #[test]
    fn the_image_is_recognised_by_repository_whatever_the_registry_tag_or_digest() {
        for image in [
            "quay.io/operator-framework/scorecard-test:v1.42.0",
            "quay.io/operator-framework/scorecard-test",
            "mirror.example:5000/ofw/scorecard-test@sha256:abcd",
            "localhost:5000/scorecard-test:dev",
        ] {
            assert!(is_scorecard_test_image(image), "{image}");
        }
        for image in [
            "quay.io/example/custom-scorecard-tests:v1",
            "quay.io/operator-framework/scorecard-test-kuttl:v1.42.0",
            "scorecard-test-x",
        ] {
            assert!(!is_scorecard_test_image(image), "{image}");
        }
    }

    #[test]
    fn alm_examples_read_as_gets_crs_reads_them() {
        assert!(crs(&json!({})).unwrap().is_empty());
        assert!(crs(&csv_with("")).unwrap().is_empty());
        assert!(crs(&csv_with("null")).unwrap().is_empty());
        assert_eq!(
            crs(&csv_with(r#"[{"kind":"A"},{"kind":"B"}]"#))
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            crs(&csv_with(r#"{"kind":"A"}"#)).unwrap_err(),
            "failed to parse alm-examples annotation: json: cannot unmarshal object into Go value of type []unstructured.Unstructured"
        );
        assert_eq!(
            crs(&csv_with(r#"[ {"apiVersion": "v1"} ]"#)).unwrap_err(),
            r#"failed to parse alm-examples annotation: Object 'Kind' is missing in '{"apiVersion": "v1"}'"#
        );
        assert!(
            crs(&csv_with("[1]"))
                .unwrap_err()
                .ends_with("cannot unmarshal number into Go value of type map[string]interface {}")
        );
        assert!(
            crs(&csv_with("[{"))
                .unwrap_err()
                .starts_with("failed to parse alm-examples annotation: ")
        );
    }

    fn cr(v: Value) -> Cr {
        v.as_object().unwrap().clone()
    }

    /// The cases of operator-sdk's `bundle_test.go` ("CRDs have validation test").
    #[test]
    fn crds_have_validation_as_upstreams_unit_cases() {
        let crds = vec![Crd {
            name: String::new(),
            kind: "TestKind".into(),
            versions: vec![(
                "v1".into(),
                Some(
                    json!({"openAPIV3Schema": {"properties": {"spec": {"properties": {"node": {}}}}}}),
                ),
            )],
        }];
        let run = |c: Value| {
            let mut r = TestResult::pass("t");
            cr_from_crd_api(&cr(c), &crds, &mut r).unwrap();
            r
        };
        let ok = run(
            json!({"apiVersion": "test.example.com/v1", "kind": "TestKind", "spec": {"node": "val"}}),
        );
        assert_eq!(ok.state, State::Pass);
        let missing = run(
            json!({"apiVersion": "test.example.com/v1", "kind": "TestKind", "spec": {"items": "val"}}),
        );
        assert_eq!(missing.state, State::Fail);
        assert_eq!(
            missing.suggestions,
            ["Add CRD validation for spec field `items` in TestKind/v1"]
        );
        let other = run(
            json!({"apiVersion": "Cache/v2", "kind": "MemcachedKind", "spec": {"node": "val"}}),
        );
        assert_eq!(other.state, State::Pass);
    }

    /// The cases of `bundle_test.go` ("Test Status and Spec Descriptors", "Check CRDs for
    /// resources", `checkSpec`).
    #[test]
    fn descriptors_resources_and_spec_as_upstreams_unit_cases() {
        let csv = json!({"spec": {"customresourcedefinitions": {"owned": [{
            "name": "Test", "version": "v1", "kind": "TestKind",
            "statusDescriptors": [{"path": "status"}], "specDescriptors": [{"path": "spec"}]
        }]}}});
        let status = |c: Value| {
            let mut r = TestResult::pass("t");
            status_descriptor(&cr(c), &csv, &mut r).unwrap();
            r.state
        };
        let spec = |c: Value| {
            let mut r = TestResult::pass("t");
            spec_descriptors(&cr(c), &csv, &mut r).unwrap();
            r.state
        };
        let full = json!({"apiVersion": "test.example.com/v1", "kind": "TestKind",
                          "status": {"status": "val"}, "spec": {"spec": "val"}});
        assert_eq!(status(full.clone()), State::Pass);
        assert_eq!(spec(full), State::Pass);
        assert_eq!(status(json!({})), State::Fail);
        assert_eq!(status(json!({"status": {"status": "val"}})), State::Fail);
        assert_eq!(status(json!({"node": {"node": "val"}})), State::Fail);
        assert_eq!(
            spec(
                json!({"apiVersion": "test.example.com/v1", "kind": "TestKind", "status": {"status": "val"}})
            ),
            State::Fail
        );
    }

    #[test]
    fn spec_keys_without_descriptors_are_reported_in_sorted_order() {
        let csv = json!({"spec": {"customresourcedefinitions": {"owned": [{
            "name": "ms.x", "version": "v1", "kind": "M", "specDescriptors": [{"path": "size"}]
        }]}}});
        let mut r = TestResult::pass("t");
        let c = cr(
            json!({"apiVersion": "x/v1", "kind": "M", "spec": {"zeta": 1, "size": 3, "alpha": 2}}),
        );
        spec_descriptors(&c, &csv, &mut r).unwrap();
        assert_eq!(
            r.errors,
            [
                "alpha does not have a spec descriptor",
                "zeta does not have a spec descriptor"
            ]
        );
        assert_eq!(
            r.suggestions,
            [
                "Add a spec descriptor for alpha",
                "Add a spec descriptor for zeta"
            ]
        );
        let mut r = TestResult::pass("t");
        let other =
            cr(json!({"apiVersion": "x/v2", "kind": "M", "metadata": {"name": "m"}, "spec": {}}));
        spec_descriptors(&other, &csv, &mut r).unwrap();
        assert_eq!(
            r.errors,
            ["Failed to find an owned CRD for CR m with GVK x/v2, Kind=M"]
        );
    }

    #[test]
    fn gvk_reads_api_version_as_apimachinery_does() {
        assert_eq!(
            gvk_string(&cr(json!({"apiVersion": "a/b/c", "kind": "K"}))),
            "/, Kind="
        );
        assert_eq!(
            gvk_string(&cr(json!({"apiVersion": "v1", "kind": "K"}))),
            "/v1, Kind=K"
        );
        assert_eq!(gvk_string(&cr(json!({"kind": "K"}))), "/, Kind=K");
    }
}
