//! catalogd's content as the cache holds it, beside the index: the body of `/api/v1/all`
//! ([`ALL_FILE`]), the same body gzip-compressed once ([`GZIP_FILE`]), and each blob's
//! schema, package, name and place in the body ([`METAS_FILE`], for `/api/v1/metas`). The
//! index build writes them; the server reads them in bounded chunks, so it holds none of the
//! catalog however large it is.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt as _;

/// The body of `/api/v1/all`: one compact JSON line per blob, keys sorted.
pub const ALL_FILE: &str = "catalogd-all.jsonl";
/// [`ALL_FILE`] compressed by [`gzip_encoder`].
pub const GZIP_FILE: &str = "catalogd-all.jsonl.gz";
/// A header, then one [`Meta`] record per line of [`ALL_FILE`], in order.
pub const METAS_FILE: &str = "catalogd-metas.bin";

/// The first bytes of [`METAS_FILE`]; a change of its record layout changes them.
const MAGIC: &[u8; 8] = b"olmmeta1";
/// How much of a file one read takes while a response streams.
const CHUNK: u64 = 128 << 10;

/// The gzip stream catalogd's content is compressed with: flate2's default level and header
/// (no name, no time), so the same body always gives the same bytes.
pub fn gzip_encoder<W: Write>(w: W) -> flate2::write::GzEncoder<W> {
    flate2::write::GzEncoder::new(w, flate2::Compression::default())
}

/// One blob's place in the body, for `/api/v1/metas`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub schema: String,
    pub package: String,
    pub name: String,
    pub start: u64,
    pub end: u64,
}

impl Meta {
    /// Appends the record to `out`: both offsets, then each string with its length.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.start.to_le_bytes())?;
        out.write_all(&self.end.to_le_bytes())?;
        for s in [&self.schema, &self.package, &self.name] {
            out.write_all(&(s.len() as u32).to_le_bytes())?;
            out.write_all(s.as_bytes())?;
        }
        Ok(())
    }

    /// The next record of `r` (`None` at its end).
    fn read_from(r: &mut impl BufRead) -> io::Result<Option<Meta>> {
        if r.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let mut u64s = [0u8; 16];
        r.read_exact(&mut u64s)?;
        let (start, end) = u64s.split_at(8);
        let number = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
        let mut text = || -> io::Result<String> {
            let mut len = [0u8; 4];
            r.read_exact(&mut len)?;
            let mut bytes = vec![0; u32::from_le_bytes(len) as usize];
            r.read_exact(&mut bytes)?;
            String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        };
        Ok(Some(Meta {
            schema: text()?,
            package: text()?,
            name: text()?,
            start: number(start),
            end: number(end),
        }))
    }
}

/// What [`METAS_FILE`] starts with: the sizes of the two bodies it was written with, so a
/// server never serves a body that does not match its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetasHeader {
    pub all_len: u64,
    pub gzip_len: u64,
}

impl MetasHeader {
    /// The header's size in the file.
    pub const LEN: u64 = 24;

    /// The header's bytes.
    pub fn to_bytes(self) -> [u8; Self::LEN as usize] {
        let mut out = [0u8; Self::LEN as usize];
        out[..8].copy_from_slice(MAGIC);
        out[8..16].copy_from_slice(&self.all_len.to_le_bytes());
        out[16..].copy_from_slice(&self.gzip_len.to_le_bytes());
        out
    }

    fn parse(bytes: &[u8; Self::LEN as usize]) -> Option<MetasHeader> {
        let number = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
        (&bytes[..8] == MAGIC).then(|| MetasHeader {
            all_len: number(&bytes[8..16]),
            gzip_len: number(&bytes[16..]),
        })
    }
}

/// Why catalogd's content could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("read {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: {message} (rebuild the cache)")]
    Corrupt { path: PathBuf, message: String },
    #[error("answering a request: {0}")]
    Request(io::Error),
}

/// One file of the content, open for positional reads (any number of responses at once).
#[derive(Debug, Clone)]
pub struct OpenFile {
    pub file: Arc<File>,
    pub len: u64,
}

/// The three files, open and checked against each other.
#[derive(Debug)]
pub struct ContentFiles {
    pub all: OpenFile,
    pub gzip: OpenFile,
    metas: OpenFile,
    metas_path: PathBuf,
}

impl ContentFiles {
    /// Opens the content in `dir` (the cache's own directory).
    pub fn open(dir: &Path) -> Result<ContentFiles, ContentError> {
        let open = |name: &str| -> Result<(OpenFile, PathBuf), ContentError> {
            let path = dir.join(name);
            let io = |source| ContentError::Io {
                path: path.clone(),
                source,
            };
            let file = File::open(&path).map_err(io)?;
            let len = file.metadata().map_err(io)?.len();
            let file = Arc::new(file);
            Ok((OpenFile { file, len }, path))
        };
        let (all, _) = open(ALL_FILE)?;
        let (gzip, _) = open(GZIP_FILE)?;
        let (metas, metas_path) = open(METAS_FILE)?;
        let corrupt = |message: String| ContentError::Corrupt {
            path: metas_path.clone(),
            message,
        };
        let mut head = [0u8; MetasHeader::LEN as usize];
        metas
            .file
            .read_exact_at(&mut head, 0)
            .map_err(|e| corrupt(format!("no header: {e}")))?;
        let header =
            MetasHeader::parse(&head).ok_or_else(|| corrupt("not a metas index".into()))?;
        if (header.all_len, header.gzip_len) != (all.len, gzip.len) {
            return Err(corrupt(format!(
                "written for a body of {} bytes ({} gzip-compressed), found {} ({})",
                header.all_len, header.gzip_len, all.len, gzip.len
            )));
        }
        Ok(ContentFiles {
            all,
            gzip,
            metas,
            metas_path,
        })
    }

    /// The places in the body of the blobs `keep` selects, in body order, adjacent ones
    /// joined. Reads the metas index from disk, a buffer at a time.
    pub fn select(&self, keep: impl Fn(&Meta) -> bool) -> Result<Spans, ContentError> {
        let io = |source| ContentError::Io {
            path: self.metas_path.clone(),
            source,
        };
        let reader = AtReader {
            file: &self.metas.file,
            pos: MetasHeader::LEN,
            end: self.metas.len,
        };
        let mut r = BufReader::with_capacity(CHUNK as usize, reader);
        let mut spans = Spans::default();
        while let Some(m) = Meta::read_from(&mut r).map_err(io)? {
            if m.end > self.all.len || m.start > m.end {
                return Err(ContentError::Corrupt {
                    path: self.metas_path.clone(),
                    message: format!("a blob at {}..{} lies beyond the body", m.start, m.end),
                });
            }
            if keep(&m) {
                spans.push(m.start, m.end);
            }
        }
        Ok(spans)
    }

    /// The bytes of the body `spans` cover (for the index build's few small blobs, not for
    /// responses, which stream).
    pub fn read(&self, spans: &Spans) -> Result<Vec<u8>, ContentError> {
        let mut out = vec![0; spans.len() as usize];
        let mut at = 0;
        for &(a, b) in &spans.0 {
            let n = (b - a) as usize;
            self.all
                .file
                .read_exact_at(&mut out[at..at + n], a)
                .map_err(|source| ContentError::Io {
                    path: PathBuf::from(ALL_FILE),
                    source,
                })?;
            at += n;
        }
        Ok(out)
    }
}

/// Reads a file from `pos` to `end` by positional reads (the file's cursor is never moved, so
/// one open file serves every request).
struct AtReader<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for AtReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = (buf.len() as u64).min(self.end - self.pos) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// Byte ranges of a file, `start..end`, in order: a response body made of pieces of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spans(Vec<(u64, u64)>);

impl Spans {
    /// The whole of a file of `len` bytes.
    pub fn whole(len: u64) -> Spans {
        Spans(if len == 0 { Vec::new() } else { vec![(0, len)] })
    }

    fn push(&mut self, start: u64, end: u64) {
        if start == end {
            return;
        }
        match self.0.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => self.0.push((start, end)),
        }
    }

    /// The number of bytes they cover.
    pub fn len(&self) -> u64 {
        self.0.iter().map(|(a, b)| b - a).sum()
    }

    /// Whether they cover nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes `from..=to` of the body they make.
    pub fn slice(&self, from: u64, to: u64) -> Spans {
        let mut out = Spans::default();
        let mut at = 0;
        for &(a, b) in &self.0 {
            let (lo, hi) = (at, at + (b - a));
            if hi > from && lo <= to {
                let start = a + from.saturating_sub(lo);
                let end = b - (hi - 1).saturating_sub(to);
                out.push(start, end);
            }
            at = hi;
        }
        out
    }

    /// The body they make, read from `file` a chunk at a time as the client takes it.
    pub fn body(self, file: Arc<File>) -> Body {
        if self.is_empty() {
            // A body known to be empty, as hyper writes it (its headers in its order).
            return Body::from(Bytes::new());
        }
        let pieces = self.0.into_iter().flat_map(|(a, b)| {
            (a..b)
                .step_by(CHUNK as usize)
                .map(move |at| (at, (at + CHUNK).min(b)))
        });
        let stream = futures::stream::iter(pieces).then(move |(a, b)| {
            let file = file.clone();
            async move {
                let read = tokio::task::spawn_blocking(move || {
                    let mut buf = vec![0; (b - a) as usize];
                    file.read_exact_at(&mut buf, a).map(|()| Bytes::from(buf))
                });
                read.await.unwrap_or_else(|e| Err(io::Error::other(e)))
            }
        });
        Body::from_stream(stream)
    }

    /// Gzip-compresses the body they make (read from `file`) into memory, or into a
    /// temporary file once it outgrows [`Spool::MEMORY`].
    pub fn gzip(&self, file: &File) -> io::Result<Spool> {
        let mut enc = gzip_encoder(Spool::default());
        let mut buf = vec![0; CHUNK as usize];
        for &(a, b) in &self.0 {
            let mut at = a;
            while at < b {
                let n = (b - at).min(CHUNK) as usize;
                file.read_exact_at(&mut buf[..n], at)?;
                enc.write_all(&buf[..n])?;
                at += n as u64;
            }
        }
        enc.finish()
    }
}

/// A response body being made: in memory while small, then in an unnamed temporary file
/// (gone when dropped), so a large filtered response is never held whole.
#[derive(Debug)]
pub enum Spool {
    Memory(Vec<u8>),
    File { file: File, len: u64 },
}

impl Default for Spool {
    fn default() -> Self {
        Spool::Memory(Vec::new())
    }
}

impl Spool {
    /// How much a spool holds in memory before it moves to a file.
    pub const MEMORY: usize = 4 << 20;

    pub fn len(&self) -> u64 {
        match self {
            Spool::Memory(v) => v.len() as u64,
            Spool::File { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The spool as a response body.
    pub fn body(self) -> Body {
        match self {
            Spool::Memory(v) => Body::from(v),
            Spool::File { file, len } => Spans::whole(len).body(Arc::new(file)),
        }
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Spool::Memory(v) if v.len() + buf.len() <= Self::MEMORY => {
                v.extend_from_slice(buf);
            }
            Spool::Memory(v) => {
                let mut file = tempfile::tempfile()?;
                file.write_all(v)?;
                file.write_all(buf)?;
                let len = (v.len() + buf.len()) as u64;
                *self = Spool::File { file, len };
            }
            Spool::File { file, len } => {
                file.write_all(buf)?;
                *len += buf.len() as u64;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Spool::Memory(_) => Ok(()),
            Spool::File { file, .. } => file.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_join_and_slice() {
        let mut s = Spans::default();
        s.push(0, 10);
        s.push(10, 20);
        s.push(30, 35);
        s.push(35, 35);
        assert_eq!(s.0, [(0, 20), (30, 35)]);
        assert_eq!(s.len(), 25);
        assert_eq!(s.slice(0, 24), s);
        assert_eq!(s.slice(5, 21).0, [(5, 20), (30, 32)]);
        assert_eq!(s.slice(20, 20).0, [(30, 31)]);
        assert_eq!(s.slice(19, 19).0, [(19, 20)]);
    }

    #[test]
    fn metas_round_trip() {
        let m = Meta {
            schema: "olm.bundle".into(),
            package: "p".into(),
            name: "p.v1".into(),
            start: 7,
            end: 99,
        };
        let mut bytes = Vec::new();
        m.write_to(&mut bytes).unwrap();
        m.write_to(&mut bytes).unwrap();
        let mut r = &bytes[..];
        assert_eq!(Meta::read_from(&mut r).unwrap(), Some(m.clone()));
        assert_eq!(Meta::read_from(&mut r).unwrap(), Some(m));
        assert_eq!(Meta::read_from(&mut r).unwrap(), None);
        let h = MetasHeader {
            all_len: 5,
            gzip_len: 3,
        };
        assert_eq!(MetasHeader::parse(&h.to_bytes()), Some(h));
    }

    #[test]
    fn a_spool_moves_to_a_file_when_it_grows() {
        let mut s = Spool::default();
        s.write_all(&vec![1; Spool::MEMORY]).unwrap();
        assert!(matches!(s, Spool::Memory(_)));
        s.write_all(&[2; 10]).unwrap();
        assert!(matches!(s, Spool::File { .. }));
        assert_eq!(s.len(), Spool::MEMORY as u64 + 10);
    }
}
