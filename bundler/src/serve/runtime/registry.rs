//! The `api.Registry` and `api.ExperimentalRegistry` services with opm's semantics
//! (operator-registry `pkg/server/server.go`, `pkg/cache/cache.go`, `pkg/cache/pkgs.go`).
//!
//! opm returns plain Go errors from its handlers, which grpc-go sends as status `Unknown` with
//! the error text; we send the same code and texts so clients matching on them keep working.
//! Where opm iterates Go maps (nondeterministic order) we use the catalog's sorted order.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tonic::{Request, Response, Status};

use super::store::{EntryView, Store};
use crate::serve::proto::api::{
    self, experimental_registry_server::ExperimentalRegistry, registry_server::Registry,
};

/// Longest name echoed back in an error: a status message travels in an HTTP/2 header, and a
/// multi-megabyte one would be refused by the client's header limit instead of being shown.
const MAX_ECHO: usize = 1024;

/// The registry service over a loaded [`Store`].
#[derive(Debug, Clone)]
pub struct RegistryService {
    store: Arc<Store>,
}

impl RegistryService {
    pub fn new(store: Arc<Store>) -> Self {
        RegistryService { store }
    }
}

/// Go's `%q` of a string (strconv.Quote), cut to [`MAX_ECHO`] characters.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_ECHO) + 2);
    out.push('"');
    for (n, c) in s.chars().enumerate() {
        if n == MAX_ECHO {
            out.push_str("...");
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => {
                let v = c as u32;
                if v <= 0xffff {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A name printed with Go's `%s`, cut like [`go_quote`].
fn plain(s: &str) -> String {
    match s.char_indices().nth(MAX_ECHO) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn unknown(msg: String) -> Status {
    Status::unknown(msg)
}

fn internal(e: super::store::StoreError) -> Status {
    tracing::error!(error = %e, "reading bundle payload");
    Status::internal(e.to_string())
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

fn stream_of<T: Send + 'static>(items: Vec<T>) -> BoxStream<T> {
    Box::pin(futures::stream::iter(items.into_iter().map(Ok)))
}

fn entry(e: &EntryView<'_>, replaces: &str) -> api::ChannelEntry {
    api::ChannelEntry {
        package_name: e.package.name.clone(),
        channel_name: e.channel.name.clone(),
        bundle_name: e.bundle_name().to_string(),
        replaces: replaces.to_string(),
    }
}

impl RegistryService {
    /// GetBundle-style result: replaces/skips cleared, payload included (opm `getTrimmedBundle`).
    fn trimmed(&self, e: &EntryView<'_>) -> Result<api::Bundle, Status> {
        let mut b = self.store.api_bundle(e, true).map_err(internal)?;
        b.replaces.clear();
        b.skips.clear();
        Ok(b)
    }

    /// opm `GetLatestChannelEntriesThatProvide`: channel heads providing the API; skips become
    /// extra entries only when the skipped bundle is in the same channel.
    fn latest_providers(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Vec<api::ChannelEntry>, Status> {
        let mut out = Vec::new();
        for p in self.store.packages() {
            for c in &p.channels {
                let Some(h) = self.store.head(p, c) else {
                    continue;
                };
                if h.provides(group, version, kind) {
                    out.push(entry(&h, &h.entry.replaces));
                    for s in &h.entry.skips {
                        if *s != h.entry.replaces && self.store.channel_has(p, c, s) {
                            out.push(entry(&h, s));
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(unknown(format!(
                "no channel entries found that provide group:{} version:{} kind:{}",
                go_quote(group),
                go_quote(version),
                go_quote(kind)
            )));
        }
        Ok(out)
    }
}

#[tonic::async_trait]
impl Registry for RegistryService {
    type ListPackagesStream = BoxStream<api::PackageName>;
    type GetChannelEntriesThatReplaceStream = BoxStream<api::ChannelEntry>;
    type GetChannelEntriesThatProvideStream = BoxStream<api::ChannelEntry>;
    type GetLatestChannelEntriesThatProvideStream = BoxStream<api::ChannelEntry>;
    type ListBundlesStream = BoxStream<api::Bundle>;

    async fn list_packages(
        &self,
        _: Request<api::ListPackageRequest>,
    ) -> Result<Response<Self::ListPackagesStream>, Status> {
        let names = self
            .store
            .packages()
            .iter()
            .map(|p| api::PackageName {
                name: p.name.clone(),
            })
            .collect();
        Ok(Response::new(stream_of(names)))
    }

    async fn get_package(
        &self,
        req: Request<api::GetPackageRequest>,
    ) -> Result<Response<api::Package>, Status> {
        let name = &req.get_ref().name;
        let Some(p) = self.store.package(name) else {
            return Err(unknown(format!("package {} not found", go_quote(name))));
        };
        // Channels are stored sorted by name, which is the order opm sends.
        let channels = p
            .channels
            .iter()
            .map(|c| api::Channel {
                name: c.name.clone(),
                csv_name: self
                    .store
                    .head(p, c)
                    .map(|h| h.bundle_name().to_string())
                    .unwrap_or_default(),
                deprecation: c.deprecation.clone(),
            })
            .collect();
        Ok(Response::new(api::Package {
            name: p.name.clone(),
            channels,
            default_channel_name: p.default_channel.clone(),
            deprecation: p.deprecation.clone(),
        }))
    }

    async fn get_bundle(
        &self,
        req: Request<api::GetBundleRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.get_ref();
        if self.store.package(&r.pkg_name).is_none() {
            return Err(unknown(format!(
                "package {} not found",
                go_quote(&r.pkg_name)
            )));
        }
        if self.store.channel(&r.pkg_name, &r.channel_name).is_none() {
            return Err(unknown(format!(
                "package {}, channel {} not found",
                go_quote(&r.pkg_name),
                go_quote(&r.channel_name)
            )));
        }
        let Some(e) = self.store.entry(&r.pkg_name, &r.channel_name, &r.csv_name) else {
            return Err(unknown(format!(
                "package {}, channel {}, bundle {} not found",
                go_quote(&r.pkg_name),
                go_quote(&r.channel_name),
                go_quote(&r.csv_name)
            )));
        };
        Ok(Response::new(self.trimmed(&e)?))
    }

    async fn get_bundle_for_channel(
        &self,
        req: Request<api::GetBundleInChannelRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.get_ref();
        let Some(p) = self.store.package(&r.pkg_name) else {
            return Err(unknown(format!(
                "package {} not found",
                go_quote(&r.pkg_name)
            )));
        };
        let head = self
            .store
            .channel(&r.pkg_name, &r.channel_name)
            .and_then(|c| self.store.head(p, c));
        let Some(h) = head else {
            return Err(unknown(format!(
                "package {}, channel {} not found",
                go_quote(&r.pkg_name),
                go_quote(&r.channel_name)
            )));
        };
        Ok(Response::new(self.trimmed(&h)?))
    }

    async fn get_channel_entries_that_replace(
        &self,
        req: Request<api::GetAllReplacementsRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatReplaceStream>, Status> {
        let name = &req.get_ref().csv_name;
        let mut out = Vec::new();
        for e in self.store.entries() {
            if e.entry.replaces == *name {
                out.push(entry(&e, &e.entry.replaces));
            }
            for s in &e.entry.skips {
                if s == name && *s != e.entry.replaces {
                    out.push(entry(&e, &e.entry.replaces));
                }
            }
        }
        if out.is_empty() {
            return Err(unknown(format!(
                "no channel entries found that replace {}",
                plain(name)
            )));
        }
        Ok(Response::new(stream_of(out)))
    }

    async fn get_bundle_that_replaces(
        &self,
        req: Request<api::GetReplacementRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.get_ref();
        let Some(p) = self.store.package(&r.pkg_name) else {
            return Err(unknown(format!("package {} not found", plain(&r.pkg_name))));
        };
        let Some(c) = self.store.channel(&r.pkg_name, &r.channel_name) else {
            return Err(unknown(format!(
                "package {}, channel {} not found",
                go_quote(&r.pkg_name),
                go_quote(&r.channel_name)
            )));
        };
        for entry in &c.entries {
            let replaces = entry.replaces == r.csv_name || entry.skips.contains(&r.csv_name);
            if !replaces {
                continue;
            }
            if let Some(bundle) = p.bundles.get(entry.bundle as usize) {
                let view = EntryView {
                    package: p,
                    channel: c,
                    entry,
                    bundle,
                };
                return Ok(Response::new(self.trimmed(&view)?));
            }
        }
        Err(unknown(format!(
            "no entry found for package {}, channel {}",
            go_quote(&r.pkg_name),
            go_quote(&r.channel_name)
        )))
    }

    async fn get_channel_entries_that_provide(
        &self,
        req: Request<api::GetAllProvidersRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatProvideStream>, Status> {
        let r = req.get_ref();
        let mut out = Vec::new();
        for e in self.store.entries() {
            if e.provides(&r.group, &r.version, &r.kind) {
                out.push(entry(&e, &e.entry.replaces));
                // opm lists every skip here, in the channel or not.
                for s in &e.entry.skips {
                    if *s != e.entry.replaces {
                        out.push(entry(&e, s));
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(unknown(format!(
                "no channel entries found that provide group:{} version:{} kind:{}",
                go_quote(&r.group),
                go_quote(&r.version),
                go_quote(&r.kind)
            )));
        }
        Ok(Response::new(stream_of(out)))
    }

    async fn get_latest_channel_entries_that_provide(
        &self,
        req: Request<api::GetLatestProvidersRequest>,
    ) -> Result<Response<Self::GetLatestChannelEntriesThatProvideStream>, Status> {
        let r = req.get_ref();
        let out = self.latest_providers(&r.group, &r.version, &r.kind)?;
        Ok(Response::new(stream_of(out)))
    }

    async fn get_default_bundle_that_provides(
        &self,
        req: Request<api::GetDefaultProviderRequest>,
    ) -> Result<Response<api::Bundle>, Status> {
        let r = req.get_ref();
        let mut latest = self.latest_providers(&r.group, &r.version, &r.kind)?;
        latest.sort_by(|a, b| a.package_name.cmp(&b.package_name));
        for e in &latest {
            let Some(p) = self.store.package(&e.package_name) else {
                continue;
            };
            if e.channel_name == p.default_channel
                && let Some(view) =
                    self.store
                        .entry(&e.package_name, &e.channel_name, &e.bundle_name)
            {
                return Ok(Response::new(self.trimmed(&view)?));
            }
        }
        Err(unknown(format!(
            "no entry found that provides group:{} version:{} kind:{}",
            go_quote(&r.group),
            go_quote(&r.version),
            go_quote(&r.kind)
        )))
    }

    async fn list_bundles(
        &self,
        _: Request<api::ListBundlesRequest>,
    ) -> Result<Response<Self::ListBundlesStream>, Status> {
        // Built lazily, one bundle per poll, so a slow client holds one message, not the
        // catalog, and a client that goes away stops the work.
        let store = self.store.clone();
        let stream = futures::stream::unfold(0usize, move |i| {
            let store = store.clone();
            async move {
                let e = store.entry_at(i)?;
                // With an image, OLM unpacks the bundle itself; opm then strips the manifests.
                let with_payload = e
                    .bundle
                    .base
                    .as_ref()
                    .is_some_and(|b| b.bundle_path.is_empty());
                let item = store.api_bundle(&e, with_payload).map_err(internal);
                Some((item, i + 1))
            }
        });
        Ok(Response::new(Box::pin(stream)))
    }
}

#[tonic::async_trait]
impl ExperimentalRegistry for RegistryService {
    type ExperimentalListPackageCustomSchemasStream = BoxStream<prost_types::Struct>;

    async fn experimental_list_package_custom_schemas(
        &self,
        req: Request<api::ExperimentalListPackageCustomSchemasRequest>,
    ) -> Result<Response<Self::ExperimentalListPackageCustomSchemasStream>, Status> {
        let r = req.get_ref();
        let Some(p) = self.store.package(&r.package_name) else {
            return Err(unknown(format!(
                "package {} not found",
                go_quote(&r.package_name)
            )));
        };
        let mut out = Vec::new();
        for blob in p.custom_blobs.iter().filter(|b| b.schema == r.schema) {
            let value: serde_json::Value = serde_json::from_str(&blob.json)
                .map_err(|e| Status::internal(format!("decode stored blob: {e}")))?;
            if let serde_json::Value::Object(map) = value {
                out.push(to_struct(map));
            }
        }
        Ok(Response::new(stream_of(out)))
    }
}

fn to_struct(map: serde_json::Map<String, serde_json::Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: map.into_iter().map(|(k, v)| (k, to_value(v))).collect(),
    }
}

fn to_value(v: serde_json::Value) -> prost_types::Value {
    use prost_types::value::Kind;
    use serde_json::Value as J;
    let kind = match v {
        J::Null => Kind::NullValue(0),
        J::Bool(b) => Kind::BoolValue(b),
        J::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        J::String(s) => Kind::StringValue(s),
        J::Array(a) => Kind::ListValue(prost_types::ListValue {
            values: a.into_iter().map(to_value).collect(),
        }),
        J::Object(m) => Kind::StructValue(to_struct(m)),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::go_quote;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote("foo"), "\"foo\"");
        assert_eq!(go_quote("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\x01\"");
        assert_eq!(go_quote("é"), "\"é\"");
        let long = "x".repeat(5000);
        assert_eq!(go_quote(&long).len(), 1024 + 2 + 3);
    }
}
