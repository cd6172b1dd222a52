//! The SBOM of an image we built: an SPDX 2.3 JSON document listing every file of the image
//! with its SHA1 and SHA256, the Debian packages the host's dpkg database says own its shared
//! libraries (`pkg:deb` purls), and the Rust crates compiled into a binary that carries
//! cargo-auditable's `.dep-v0` section (`pkg:cargo` purls), as syft catalogs the same image.
//!
//! The files are read back from the image's layers, not from the build's inputs, so the
//! document describes exactly the bytes that were stored. The same image (and the same
//! dpkg database) gives the same document bytes: its namespace comes from the image digest
//! and its `created` time from the image config's.
//!
//! - [`spdx`]: the document model and writer.
//! - [`dpkg`]: which Debian package owns a file, as `dpkg -S` answers it.
//! - [`auditable`]: cargo-auditable's dependency data.

pub mod auditable;
pub mod dpkg;
pub mod spdx;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use sha1::Sha1;
use sha2::{Digest as _, Sha256};

use super::elf::{self, ElfError};
use super::model::{Artifact, Image, ModelError};
use auditable::{AuditableError, Crate, Kind};
use dpkg::{DebPackage, DpkgError};
use spdx::{Checksum, Document, ExternalRef, Package, Relationship};

/// What the document says about where the image came from.
#[derive(Debug, Clone)]
pub struct SbomOptions {
    /// The image's name in the document: its repository, or the binary's name.
    pub name: String,
    /// The root the image's shared libraries were copied from (normally `/`): its dpkg
    /// database and os-release name their packages.
    pub sysroot: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum SbomError {
    #[error("SBOM: reading layer {digest}: {source}")]
    Layer {
        digest: String,
        #[source]
        source: std::io::Error,
    },
    #[error("SBOM: {0}")]
    Elf(#[from] ElfError),
    #[error("SBOM: {0}")]
    Auditable(#[from] AuditableError),
    #[error("SBOM: {0}")]
    Dpkg(#[from] DpkgError),
    #[error("SBOM: {0}")]
    Model(#[from] ModelError),
}

/// One regular file of an image's final filesystem.
#[derive(Debug, Clone)]
struct ScannedFile {
    sha1: String,
    sha256: String,
    elf: bool,
    /// The runtime crates of its `.dep-v0` section.
    crates: Vec<Crate>,
}

/// The SPDX 2.3 JSON bytes of `artifact`'s SBOM (for an index, one document with a package
/// per platform image).
pub fn spdx_json(artifact: &Artifact, opts: &SbomOptions) -> Result<Vec<u8>, SbomError> {
    Ok(document(artifact, opts)?.to_json())
}

/// The SBOM of `artifact` as a document.
pub fn document(artifact: &Artifact, opts: &SbomOptions) -> Result<Document, SbomError> {
    let distro = dpkg::distro(&opts.sysroot);
    let mut b = Builder::default();
    let root = image_package(&opts.name, artifact.digest(), None);
    let root_id = root.spdx_id.clone();
    b.relations
        .insert(Relationship::new(spdx::DOCUMENT_ID, "DESCRIBES", &root_id));
    b.roots.push(root);
    let mut created = None;
    // Every platform's files first, so the dpkg database is read once for all of them.
    let scanned = artifact
        .images()
        .iter()
        .map(|image| Ok((image, image.parsed_config()?, scan(image)?)))
        .collect::<Result<Vec<_>, SbomError>>()?;
    let elf_paths: BTreeSet<String> = scanned
        .iter()
        .flat_map(|(_, _, files)| files.iter().filter(|(_, f)| f.elf).map(|(p, _)| p.clone()))
        .collect();
    let owners = dpkg::owners(&opts.sysroot, &elf_paths)?;
    for (image, config, files) in &scanned {
        created = created.or(config.created.clone());
        let image_id = match artifact {
            Artifact::Image(_) => root_id.clone(),
            Artifact::Index(_) => {
                let p = image_package(&opts.name, &image.digest, Some(&config.architecture));
                let id = p.spdx_id.clone();
                b.relations
                    .insert(Relationship::new(&root_id, "CONTAINS", &id));
                b.roots.push(p);
                id
            }
        };
        for (path, file) in files {
            let file_id = b.file(&image.digest, path, file);
            b.relations
                .insert(Relationship::new(&image_id, "CONTAINS", &file_id));
            if let Some(deb) = owners.get(path)
                && same_content(&opts.sysroot, path, &file.sha256)
            {
                let deb_id = b.deb(deb, &distro);
                b.relations
                    .insert(Relationship::new(&image_id, "CONTAINS", &deb_id));
                b.relations
                    .insert(Relationship::new(&deb_id, "CONTAINS", &file_id));
            }
            let ids: Vec<Option<String>> = file
                .crates
                .iter()
                .map(|c| (c.kind == Kind::Runtime).then(|| b.cargo(c, path)))
                .collect();
            for (c, id) in file.crates.iter().zip(&ids) {
                let Some(id) = id else { continue };
                b.relations
                    .insert(Relationship::new(&image_id, "CONTAINS", id));
                b.relations
                    .insert(Relationship::new(&file_id, "CONTAINS", id));
                for dep in c.dependencies.iter().filter_map(|&d| ids[d].as_ref()) {
                    b.relations.insert(Relationship::new(id, "DEPENDS_ON", dep));
                }
            }
        }
    }
    let hex = super::digest_hex(artifact.digest()).unwrap_or(artifact.digest());
    let name_part: String = opts
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._/".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    b.verify_packages();
    let mut relationships: Vec<Relationship> = b.relations.into_iter().collect();
    // The document's DESCRIBES first, the rest in sorted order.
    relationships.sort_by_key(|r| (r.relationship_type != "DESCRIBES", r.clone()));
    let mut files: Vec<spdx::File> = b.files.into_values().collect();
    files.sort();
    Ok(Document {
        spdx_version: spdx::SPDX_VERSION,
        data_license: spdx::DATA_LICENSE,
        spdx_id: spdx::DOCUMENT_ID,
        name: opts.name.clone(),
        document_namespace: format!(
            "https://spdx.org/spdxdocs/olm/image/{}-{hex}",
            name_part.trim_matches('/')
        ),
        creation_info: spdx::CreationInfo {
            creators: vec![format!("Tool: olm-{}", env!("CARGO_PKG_VERSION"))],
            created: created.unwrap_or_else(|| crate::reproducible::rfc3339(0)),
        },
        packages: b
            .roots
            .into_iter()
            .chain(b.packages.into_values())
            .collect(),
        files,
        relationships,
    })
}

/// The document's parts as they are found; maps keyed by SPDX id keep them sorted and single.
#[derive(Default)]
struct Builder {
    roots: Vec<Package>,
    packages: BTreeMap<String, Package>,
    files: BTreeMap<String, spdx::File>,
    relations: BTreeSet<Relationship>,
}

impl Builder {
    /// Marks every package that CONTAINS files as analysed, with its verification code.
    fn verify_packages(&mut self) {
        let mut sha1s: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for r in &self.relations {
            if r.relationship_type != "CONTAINS" {
                continue;
            }
            if let Some(f) = self.files.get(&r.related_spdx_element) {
                sha1s
                    .entry(r.spdx_element_id.as_str())
                    .or_default()
                    .push(f.checksums[0].checksum_value.as_str());
            }
        }
        for p in self.roots.iter_mut().chain(self.packages.values_mut()) {
            if let Some(sums) = sha1s.get(p.spdx_id.as_str()) {
                p.files_analyzed = true;
                p.package_verification_code =
                    Some(spdx::VerificationCode::of(sums.iter().copied()));
            }
        }
    }
}

impl Builder {
    fn file(&mut self, image_digest: &str, path: &str, f: &ScannedFile) -> String {
        let id = spdx::id("File", path, &format!("{image_digest}{path}"));
        self.files.entry(id.clone()).or_insert_with(|| spdx::File {
            // SPDX wants a relative name: `./usr/lib/...`.
            file_name: format!(".{path}"),
            spdx_id: id.clone(),
            checksums: vec![
                Checksum {
                    algorithm: "SHA1",
                    checksum_value: f.sha1.clone(),
                },
                Checksum {
                    algorithm: "SHA256",
                    checksum_value: f.sha256.clone(),
                },
            ],
            license_concluded: spdx::NOASSERTION,
            copyright_text: spdx::NOASSERTION,
        });
        id
    }

    fn deb(&mut self, deb: &DebPackage, distro: &dpkg::Distro) -> String {
        let purl = deb.purl(distro);
        let id = spdx::id("Package", &format!("deb-{}", deb.name), &purl);
        self.packages.entry(id.clone()).or_insert_with(|| {
            let mut p = Package::new(&deb.name, id.clone(), Some(&deb.version));
            if let Some(m) = &deb.maintainer {
                p.supplier = supplier(m);
            }
            p.source_info =
                Some("acquired package info from the dpkg database (var/lib/dpkg)".into());
            p.external_refs.push(ExternalRef::purl(purl));
            p
        });
        id
    }

    fn cargo(&mut self, c: &Crate, binary: &str) -> String {
        let purl = auditable::purl(c);
        let key = format!("{purl} {}", c.source);
        let id = spdx::id("Package", &format!("cargo-{}-{}", c.name, c.version), &key);
        self.packages.entry(id.clone()).or_insert_with(|| {
            let mut p = Package::new(&c.name, id.clone(), Some(&c.version));
            p.source_info = Some(format!(
                "acquired package info from the cargo-auditable data ({}) of {binary}",
                auditable::SECTION
            ));
            p.primary_package_purpose = Some(if c.root { "APPLICATION" } else { "LIBRARY" });
            p.external_refs.push(ExternalRef::purl(purl));
            p
        });
        id
    }
}

/// SPDX's `Person: name (email)` from a Debian `Name <email>`.
fn supplier(maintainer: &str) -> String {
    match maintainer.split_once('<') {
        Some((name, rest)) => format!(
            "Person: {} ({})",
            name.trim(),
            rest.trim_end().trim_end_matches('>')
        ),
        None => format!("Person: {}", maintainer.trim()),
    }
}

/// The image's own package: its name, digest and (for a platform image) architecture.
fn image_package(name: &str, digest: &str, arch: Option<&str>) -> Package {
    let id = spdx::id("Image", name, &format!("{name}@{digest}"));
    let mut p = Package::new(name, id, Some(digest));
    let short = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    let mut purl = format!(
        "pkg:oci/{}@{}",
        spdx::purl_escape(&short),
        spdx::purl_escape(digest)
    );
    let mut qualifiers = Vec::new();
    if let Some(a) = arch {
        qualifiers.push(format!("arch={}", spdx::purl_escape(a)));
    }
    if name.contains('/') {
        qualifiers.push(format!("repository_url={}", spdx::purl_escape(name)));
    }
    if !qualifiers.is_empty() {
        purl = format!("{purl}?{}", qualifiers.join("&"));
    }
    p.external_refs.push(ExternalRef::purl(purl));
    p.primary_package_purpose = Some("CONTAINER");
    p
}

/// Whether the host file at `path` under `sysroot` is the image's file (an image file at a
/// path dpkg owns on the host is the package's only when it has the same bytes).
fn same_content(sysroot: &Path, path: &str, sha256: &str) -> bool {
    let Ok(mut f) = std::fs::File::open(sysroot.join(path.trim_start_matches('/'))) else {
        return false;
    };
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h).is_ok() && hex::encode(h.finalize()) == sha256
}

/// The regular files of the image's final filesystem (layers applied in order, whiteouts
/// honoured), hashed, with the crates of every ELF file that has a `.dep-v0` section.
fn scan(image: &Image) -> Result<BTreeMap<String, ScannedFile>, SbomError> {
    let mut files: BTreeMap<String, ScannedFile> = BTreeMap::new();
    for blob in &image.layers {
        let lerr = |source| SbomError::Layer {
            digest: blob.digest.clone(),
            source,
        };
        let raw =
            std::io::BufReader::with_capacity(super::blob::CHUNK, blob.reader().map_err(lerr)?);
        let reader: Box<dyn Read> = if blob.media_type.ends_with("gzip") {
            Box::new(flate2::read::GzDecoder::new(raw))
        } else {
            Box::new(raw)
        };
        let mut archive = tar::Archive::new(reader);
        for entry in archive.entries().map_err(lerr)? {
            let mut entry = entry.map_err(lerr)?;
            let rel = entry.path().map_err(lerr)?;
            let parts: Vec<String> = rel
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect();
            let Some((name, parent)) = parts.split_last() else {
                continue;
            };
            let dir = format!("/{}", parent.join("/"));
            let dir = dir.trim_end_matches('/');
            if let Some(hidden) = name.strip_prefix(".wh.") {
                if hidden == ".wh..opq" {
                    remove_under(&mut files, dir);
                } else {
                    let gone = format!("{dir}/{hidden}");
                    files.remove(&gone);
                    remove_under(&mut files, &gone);
                }
                continue;
            }
            let path = format!("{dir}/{name}");
            // A new entry replaces a file at its path; a file or link also replaces a
            // directory (and what was under it), while a directory entry keeps its contents.
            files.remove(&path);
            if !entry.header().entry_type().is_dir() {
                remove_under(&mut files, &path);
            }
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let file = read_file(&mut entry, &path).map_err(|e| match e {
                ReadError::Io(source) => lerr(source),
                ReadError::Sbom(e) => e,
            })?;
            files.insert(path, file);
        }
    }
    Ok(files)
}

/// Forgets every file under the directory `dir`.
fn remove_under(files: &mut BTreeMap<String, ScannedFile>, dir: &str) {
    let prefix = format!("{dir}/");
    let under: Vec<String> = files
        .range(prefix.clone()..)
        .take_while(|(p, _)| p.starts_with(&prefix))
        .map(|(p, _)| p.clone())
        .collect();
    for p in under {
        files.remove(&p);
    }
}

enum ReadError {
    Io(std::io::Error),
    Sbom(SbomError),
}

/// Hashes one file's bytes as they stream by; an ELF file is also spooled to an anonymous
/// temporary file, whose section headers are then read in place (memory stays a few chunks,
/// whatever the binary's size).
fn read_file(r: &mut impl Read, path: &str) -> Result<ScannedFile, ReadError> {
    use std::io::Write as _;
    let (mut s1, mut s256) = (Sha1::new(), Sha256::new());
    // The magic number whole, however the reader splits its first bytes (a gzip stream may
    // hand out fewer than four).
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < head.len() {
        match r.read(&mut head[got..]).map_err(ReadError::Io)? {
            0 => break,
            n => got += n,
        }
    }
    let mut spool = match &head[..got] == b"\x7fELF" {
        true => {
            let file = tempfile::tempfile().map_err(ReadError::Io)?;
            Some(std::io::BufWriter::with_capacity(super::blob::CHUNK, file))
        }
        false => None,
    };
    let mut buf = vec![0u8; super::blob::CHUNK];
    let mut piece = &head[..got];
    loop {
        if let Some(w) = &mut spool {
            w.write_all(piece).map_err(ReadError::Io)?;
        }
        s1.update(piece);
        s256.update(piece);
        let n = r.read(&mut buf).map_err(ReadError::Io)?;
        if n == 0 {
            break;
        }
        piece = &buf[..n];
    }
    let elf = spool.is_some();
    let mut crates = Vec::new();
    if let Some(w) = spool {
        let file = w.into_inner().map_err(|e| ReadError::Io(e.into_error()))?;
        let p = Path::new(path);
        let max = auditable::MAX_SECTION;
        // A file that only starts like ELF is listed and hashed, like any other file.
        let section = match elf::file_section(&file, p, auditable::SECTION, max) {
            Ok(s) => s,
            Err(ElfError::NotElf { .. }) => None,
            Err(e) => return Err(ReadError::Sbom(e.into())),
        };
        if let Some(section) = section {
            crates = auditable::decode(&section, p).map_err(|e| ReadError::Sbom(e.into()))?;
        }
    }
    Ok(ScannedFile {
        sha1: hex::encode(s1.finalize()),
        sha256: hex::encode(s256.finalize()),
        elf,
        crates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::layer::{LayerBuilder, Owner};
    use crate::image::model::ImageBuilder;

    /// A reader that hands out one byte per call, as a decompressor may at a block edge.
    struct OneByte<'a>(&'a [u8]);

    impl Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((b, rest)), Some(out)) => {
                    *out = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn an_elf_read_a_byte_at_a_time_is_still_elf() {
        let sample = auditable::tests::SAMPLE.as_bytes();
        let elf =
            elf::tests::tiny_elf(&[(auditable::SECTION, &auditable::tests::compress(sample))]);
        let Ok(f) = read_file(&mut OneByte(&elf), "bin/demo") else {
            panic!("the file did not read");
        };
        assert!(f.elf);
        assert!(!f.crates.is_empty());
        assert_eq!(f.sha256, hex::encode(Sha256::digest(&elf)));
    }

    fn sample_image() -> Image {
        let sample = auditable::tests::SAMPLE.as_bytes();
        let elf =
            elf::tests::tiny_elf(&[(auditable::SECTION, &auditable::tests::compress(sample))]);
        let mut base = LayerBuilder::new(0);
        base.file("etc/passwd", &b"root"[..], 0o644, Owner::Root)
            .unwrap();
        base.file("gone/a", &b"a"[..], 0o644, Owner::Root).unwrap();
        base.file("opaque/b", &b"b"[..], 0o644, Owner::Root)
            .unwrap();
        let mut app = LayerBuilder::new(0);
        app.file("usr/local/bin/demo", elf, 0o755, Owner::Root)
            .unwrap();
        app.file("etc/passwd", &b"root2"[..], 0o644, Owner::Root)
            .unwrap();
        app.file(".wh.gone", &b""[..], 0o644, Owner::Root).unwrap();
        app.file("opaque/.wh..wh..opq", &b""[..], 0o644, Owner::Root)
            .unwrap();
        app.symlink("bin/demo", "/usr/local/bin/demo").unwrap();
        ImageBuilder::new("linux", "amd64", 86_400)
            .layer(base.finish().unwrap(), "base")
            .layer(app.finish().unwrap(), "app")
            .build()
    }

    fn opts() -> SbomOptions {
        SbomOptions {
            name: "registry.example/org/demo".into(),
            // No dpkg database there: no Debian packages.
            sysroot: PathBuf::from("/nonexistent-sysroot"),
        }
    }

    #[test]
    fn the_final_filesystem_is_listed_with_both_checksums() {
        let image = sample_image();
        let files = scan(&image).unwrap();
        let paths: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(paths, ["/etc/passwd", "/usr/local/bin/demo"]);
        let passwd = &files["/etc/passwd"];
        assert_eq!(passwd.sha256, hex::encode(Sha256::digest(b"root2")));
        assert_eq!(passwd.sha1, hex::encode(Sha1::digest(b"root2")));
        assert!(!passwd.elf);
        let demo = &files["/usr/local/bin/demo"];
        assert!(demo.elf);
        assert_eq!(demo.crates.len(), 3);
    }

    #[test]
    fn the_document_is_spdx_and_deterministic() {
        let image: Artifact = sample_image().into();
        let opts = opts();
        let bytes = spdx_json(&image, &opts).unwrap();
        assert_eq!(
            bytes,
            spdx_json(&image, &opts).unwrap(),
            "same image, same bytes"
        );
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["spdxVersion"], "SPDX-2.3");
        assert_eq!(v["dataLicense"], "CC0-1.0");
        assert_eq!(v["creationInfo"]["created"], "1970-01-02T00:00:00Z");
        let hex = digest_hex_of(&image);
        assert_eq!(
            v["documentNamespace"],
            format!("https://spdx.org/spdxdocs/olm/image/registry.example/org/demo-{hex}")
        );
        let purls: Vec<&str> = v["packages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["externalRefs"].as_array().unwrap())
            .map(|r| r["referenceLocator"].as_str().unwrap())
            .collect();
        // The image, then the runtime crates (the build-only `cc` is not in the binary).
        assert!(purls[0].starts_with("pkg:oci/demo@sha256%3A"), "{purls:?}");
        assert!(purls.contains(&"pkg:cargo/adler@0.2.3"), "{purls:?}");
        assert!(purls.contains(&"pkg:cargo/demo@0.1.0"), "{purls:?}");
        assert!(!purls.iter().any(|p| p.contains("/cc@")), "{purls:?}");
        let rels = v["relationships"].as_array().unwrap();
        assert_eq!(rels[0]["relationshipType"], "DESCRIBES");
        assert!(rels.iter().any(|r| r["relationshipType"] == "DEPENDS_ON"));
        assert_eq!(v["files"].as_array().unwrap().len(), 2);
    }

    fn digest_hex_of(a: &Artifact) -> String {
        crate::image::digest_hex(a.digest()).unwrap().to_string()
    }

    #[test]
    fn a_bad_dep_section_names_the_file() {
        let elf = elf::tests::tiny_elf(&[(auditable::SECTION, b"not zlib")]);
        let mut app = LayerBuilder::new(0);
        app.file("usr/local/bin/bad", elf, 0o755, Owner::Root)
            .unwrap();
        let image: Artifact = ImageBuilder::new("linux", "amd64", 0)
            .layer(app.finish().unwrap(), "app")
            .build()
            .into();
        let e = spdx_json(&image, &opts()).unwrap_err().to_string();
        assert!(
            e.contains("/usr/local/bin/bad: section .dep-v0: not a zlib"),
            "{e}"
        );
    }

    #[test]
    fn an_index_has_one_package_per_platform_image() {
        use crate::image::model::ImageIndex;
        let image = |arch: &str| {
            let mut l = LayerBuilder::new(0);
            l.file("bin/app", arch.as_bytes().to_vec(), 0o755, Owner::Root)
                .unwrap();
            ImageBuilder::new("linux", arch, 0)
                .layer(l.finish().unwrap(), "app")
                .build()
        };
        let index = Artifact::Index(ImageIndex::of(vec![image("amd64"), image("arm64")]).unwrap());
        let doc = document(&index, &opts()).unwrap();
        assert_eq!(doc.packages.len(), 3, "the index and two images");
        assert!(doc.packages[0].version_info.as_deref() == Some(index.digest()));
        let purls: Vec<&str> = doc.packages[1..]
            .iter()
            .map(|p| p.external_refs[0].reference_locator.as_str())
            .collect();
        assert!(
            purls[0].contains("arch=") && purls[1].contains("arch="),
            "{purls:?}"
        );
        // The same path in two images: two files, two ids.
        assert_eq!(doc.files.len(), 2);
        assert_ne!(doc.files[0].spdx_id, doc.files[1].spdx_id);
        let contains = |from: &str| {
            doc.relationships
                .iter()
                .filter(|r| r.spdx_element_id == from && r.relationship_type == "CONTAINS")
                .count()
        };
        assert_eq!(contains(&doc.packages[0].spdx_id), 2);
        assert_eq!(contains(&doc.packages[1].spdx_id), 1);
        assert!(doc.packages[1].files_analyzed && !doc.packages[0].files_analyzed);
    }

    #[test]
    fn supplier_from_maintainer() {
        assert_eq!(
            supplier("GNU Libc Maintainers <debian-glibc@lists.debian.org>"),
            "Person: GNU Libc Maintainers (debian-glibc@lists.debian.org)"
        );
    }
}
