//! A render's output on its way to opm's order: each blob is written out as text as soon as
//! it is read (to an unnamed temporary file, the spill), and only its place in the output
//! ([`Place`]) is kept in memory. When every input is read, the text is copied from the spill
//! in order. opm orders blobs across the whole catalog (packages by name, wherever their files
//! are), so nothing can be written to the output before the last input is read; the spill
//! keeps memory to the places, whatever the catalog's size.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use super::declcfg::{Blob, Place, TextFormat};

/// How much text a [`Source`] gathers before it appends it to the spill.
const BATCH: usize = 1 << 20;

/// The temporary file blobs are written to, in the order they are formatted.
#[derive(Debug)]
pub struct Spill {
    format: TextFormat,
    file: Mutex<SpillFile>,
    entries: Mutex<Vec<Entry>>,
}

#[derive(Debug)]
struct SpillFile {
    file: File,
    len: u64,
}

/// One blob in the spill: where it goes in the output, and where its text is.
#[derive(Debug)]
struct Entry {
    rootless: bool,
    package: Arc<str>,
    rank: u8,
    name: Box<str>,
    /// The input's position: which source, then which blob of it.
    read: (u64, u32),
    offset: u64,
    len: u64,
}

impl Entry {
    fn key(&self) -> (bool, &str, u8, &str, (u64, u32)) {
        (
            self.rootless,
            &self.package,
            self.rank,
            &self.name,
            self.read,
        )
    }
}

impl Spill {
    /// An empty spill in the temporary directory (`TMPDIR`), for text in `format`.
    pub fn new(format: TextFormat) -> io::Result<Spill> {
        Ok(Spill {
            format,
            file: Mutex::new(SpillFile {
                file: tempfile::tempfile()?,
                len: 0,
            }),
            entries: Mutex::new(Vec::new()),
        })
    }

    /// A writer for the blobs of one input (a file, a bundle), numbered `source`: sources are
    /// ordered by that number, and may be written from several threads at once.
    pub fn source(&self, source: u64) -> Source<'_> {
        Source {
            spill: self,
            source,
            next: 0,
            text: Vec::new(),
            pending: Vec::new(),
            packages: HashMap::new(),
        }
    }

    /// Writes every blob to `out`, in opm's order.
    pub fn write_to(self, out: &mut impl Write) -> io::Result<()> {
        let mut entries = self
            .entries
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let file = self
            .file
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .file;
        entries.sort_unstable_by(|a, b| a.key().cmp(&b.key()));
        let mut buf = vec![0; BATCH];
        let mut copy = |start: u64, end: u64| -> io::Result<()> {
            let mut at = start;
            while at < end {
                let n = (end - at).min(BATCH as u64) as usize;
                file.read_exact_at(&mut buf[..n], at)?;
                out.write_all(&buf[..n])?;
                at += n as u64;
            }
            Ok(())
        };
        // Blobs that follow each other in the spill are copied as one piece: a catalog
        // written in opm's order (as most are) is copied in a few large pieces.
        let mut run: Option<(u64, u64)> = None;
        for e in &entries {
            match &mut run {
                Some((_, end)) if *end == e.offset => *end += e.len,
                _ => {
                    if let Some((a, b)) = run {
                        copy(a, b)?;
                    }
                    run = Some((e.offset, e.offset + e.len));
                }
            }
        }
        if let Some((a, b)) = run {
            copy(a, b)?;
        }
        Ok(())
    }
}

/// Writes one input's blobs into a [`Spill`], a batch at a time.
pub struct Source<'a> {
    spill: &'a Spill,
    source: u64,
    next: u32,
    text: Vec<u8>,
    /// Entries whose text is in `text`, their offsets counted from its start.
    pending: Vec<Entry>,
    /// The package names met, shared by their blobs' entries.
    packages: HashMap<Box<str>, Arc<str>>,
}

impl Source<'_> {
    /// Formats `blob` into the spill.
    pub fn push(&mut self, blob: Blob<'_>) -> io::Result<()> {
        let Place {
            rootless,
            package,
            rank,
            name,
        } = blob.place();
        let package = match self.packages.get(package) {
            Some(p) => p.clone(),
            None => {
                let p: Arc<str> = Arc::from(package);
                self.packages.insert(package.into(), p.clone());
                p
            }
        };
        let offset = self.text.len() as u64;
        self.spill.format.append(blob, &mut self.text);
        self.pending.push(Entry {
            rootless,
            package,
            rank,
            name: name.into(),
            read: (self.source, self.next),
            offset,
            len: self.text.len() as u64 - offset,
        });
        self.next += 1;
        if self.text.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends the gathered text to the spill and records its blobs.
    fn flush(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let base = {
            let mut f = self
                .spill
                .file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f.file.write_all(&self.text)?;
            let base = f.len;
            f.len += self.text.len() as u64;
            base
        };
        self.text.clear();
        for e in &mut self.pending {
            e.offset += base;
        }
        self.spill
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .append(&mut self.pending);
        Ok(())
    }

    /// Writes what is left of this input.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::declcfg::{Bundle, DeclarativeConfig, Meta, Package};

    /// Blobs spread over sources in any order come out as the in-memory writer puts them.
    #[test]
    fn the_spill_writes_what_the_in_memory_writer_writes() {
        let mut cfg = DeclarativeConfig::default();
        for i in 0..40 {
            let package = format!("p{}", (i * 7) % 5);
            cfg.bundles.push(Bundle {
                schema: "olm.bundle".into(),
                name: format!("{package}.v{}", i % 3),
                package: package.clone(),
                image: format!("quay.io/x/{i}"),
                ..Default::default()
            });
            if i % 9 == 0 {
                cfg.packages.push(Package {
                    schema: "olm.package".into(),
                    name: package,
                    ..Default::default()
                });
            }
        }
        cfg.others.push(Meta {
            schema: "x.rootless".into(),
            blob: serde_json::json!({"schema": "x.rootless"}),
            ..Default::default()
        });
        for format in [TextFormat::Json, TextFormat::GoYaml] {
            let spill = Spill::new(format).unwrap();
            // Three sources, the second written first: input order is the sources' numbers.
            let blobs: Vec<Blob> = cfg.blobs().collect();
            let (a, rest) = blobs.split_at(20);
            let (b, c) = rest.split_at(10);
            for (n, part) in [(1, b), (0, a), (2, c)] {
                let mut s = spill.source(n);
                for blob in part {
                    s.push(*blob).unwrap();
                }
                s.finish().unwrap();
            }
            let mut out = Vec::new();
            spill.write_to(&mut out).unwrap();
            let expected = match format {
                TextFormat::Json => cfg.to_json(),
                TextFormat::GoYaml => cfg.to_go_yaml(),
            };
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }
}
