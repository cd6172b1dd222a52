//! Notations other tools define and we must read exactly as they do: one implementation each,
//! with table tests whose verdicts come from the upstream Go code. Depends on nothing else in
//! the crate, so every layer may use it.
//!
//! - [`semver_range`]: blang/semver v4 versions and ranges (`olm.skipRange`, dependencies).
//! - [`mm_semver`]: Masterminds/semver v3 bounds (oc-mirror's `minVersion`/`maxVersion`).
//! - [`image_ref`]: image pull specs, as distribution's `ParseNormalizedNamed` reads them.
//! - [`k8s_names`]: Kubernetes names, labels and qualified names (apimachinery validation).
//! - [`go_duration`]: Go's `time.ParseDuration`.
//! - [`go_json`]: the HTML escaping Go's `encoding/json` applies to strings.
//! - [`go_xml`]: text and attributes as Go's `encoding/xml` escapes them (JUnit reports).
//! - [`go_json_read`]: JSON read as Go's `encoding/json` reads it into structs (signed
//!   documents), or refused where another reader would read it otherwise.
//! - [`go_base64`]: base64 as Go's `encoding/json` reads `[]byte` (catalog blobs, PEM bodies).
//! - [`email`], [`request_uri`]: the `net/mail` and `net/url` checks operator-sdk's validators run.
//! - [`www_authenticate`]: registry auth challenges, as distribution's client reads them.

pub mod calendar;
pub mod email;
pub mod go_base64;
pub mod go_duration;
pub mod go_json;
pub mod go_json_read;
pub mod go_xml;
pub mod image_ref;
pub mod k8s_names;
pub mod label_selector;
pub mod mm_semver;
pub mod request_uri;
pub mod semver_range;
pub mod www_authenticate;
