//! Where a blob's bytes are, and reading or writing them in bounded pieces while hashing.
//!
//! Small documents (manifests, configs) live in memory; layers live in files: a layer we
//! build is spooled to a temporary file as it is compressed, and a layer read from an OCI
//! layout stays the layout's file. Nothing reads a layer into memory whole, so memory does not
//! grow with layer or image size.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures::Stream;
use sha2::{Digest as _, Sha256};

/// The size of the pieces blobs are read and written in.
pub const CHUNK: usize = 256 * 1024;

/// Where a blob's bytes are.
#[derive(Debug, Clone)]
pub enum BlobData {
    Memory(Bytes),
    /// A temporary file that belongs to the blob (removed when the last clone is dropped, or
    /// on an interrupt).
    Spooled(Arc<crate::scratch::ScratchFile>),
    /// A file that belongs to someone else (an OCI layout's blob).
    Stored(PathBuf),
}

/// One blob with its descriptor facts.
#[derive(Debug, Clone)]
pub struct Blob {
    pub media_type: String,
    pub digest: String,
    size: u64,
    pub data: BlobData,
}

impl Blob {
    /// A blob held in memory; its size is the bytes' length.
    pub fn in_memory(media_type: impl Into<String>, digest: String, data: Bytes) -> Self {
        Blob {
            media_type: media_type.into(),
            digest,
            size: data.len() as u64,
            data: BlobData::Memory(data),
        }
    }

    /// A blob whose bytes are in a file (`size` as the descriptor says).
    pub fn in_file(
        media_type: impl Into<String>,
        digest: String,
        size: u64,
        data: BlobData,
    ) -> Self {
        Blob {
            media_type: media_type.into(),
            digest,
            size,
            data,
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The file holding the blob, when it is in one.
    pub fn path(&self) -> Option<&Path> {
        match &self.data {
            BlobData::Memory(_) => None,
            BlobData::Spooled(p) => Some(p),
            BlobData::Stored(p) => Some(p),
        }
    }

    /// A blocking reader over the blob's bytes.
    pub fn reader(&self) -> io::Result<Box<dyn Read + Send>> {
        Ok(match &self.data {
            BlobData::Memory(b) => Box::new(io::Cursor::new(b.clone())),
            BlobData::Spooled(p) => Box::new(std::fs::File::open(&**p)?),
            BlobData::Stored(p) => Box::new(std::fs::File::open(p)?),
        })
    }

    /// The whole blob in memory: for manifests and configs, never for layers.
    pub fn bytes(&self) -> io::Result<Bytes> {
        match &self.data {
            BlobData::Memory(b) => Ok(b.clone()),
            _ => {
                let mut out = Vec::with_capacity(self.size.min(1 << 24) as usize);
                self.reader()?.read_to_end(&mut out)?;
                Ok(Bytes::from(out))
            }
        }
    }

    /// The blob as a stream of pieces of at most [`CHUNK`] bytes.
    pub fn stream(&self) -> io::Result<ByteStream> {
        Ok(match &self.data {
            BlobData::Memory(b) => {
                let b = b.clone();
                let pieces: Vec<Bytes> = (0..b.len())
                    .step_by(CHUNK)
                    .map(|s| b.slice(s..(s + CHUNK).min(b.len())))
                    .collect();
                Box::pin(futures::stream::iter(pieces.into_iter().map(Ok)))
            }
            BlobData::Spooled(p) => file_stream(p)?,
            BlobData::Stored(p) => file_stream(p)?,
        })
    }
}

/// A stream of a blob's pieces.
pub type ByteStream = Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>;

/// Reads a file as a stream of pieces, on tokio's blocking pool one piece at a time.
fn file_stream(path: &Path) -> io::Result<ByteStream> {
    let file = std::fs::File::open(path)?;
    Ok(Box::pin(futures::stream::unfold(
        Some(file),
        |state| async move {
            let mut file = state?;
            let result = tokio::task::spawn_blocking(move || {
                let mut buf = BytesMut::zeroed(CHUNK);
                let mut filled = 0;
                while filled < CHUNK {
                    match file.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return (Err(e), None),
                    }
                }
                buf.truncate(filled);
                if filled == 0 {
                    (Ok(None), None)
                } else {
                    (Ok(Some(buf.freeze())), Some(file))
                }
            })
            .await;
            match result {
                Ok((Ok(Some(piece)), file)) => Some((Ok(piece), file)),
                Ok((Ok(None), _)) => None,
                Ok((Err(e), _)) => Some((Err(e), None)),
                Err(join) => Some((Err(io::Error::other(join.to_string())), None)),
            }
        },
    )))
}

/// Passes a blob's pieces through while hashing and counting them; at the end, a content
/// that does not match the expected digest and size becomes an error item, so whoever reads
/// the stream (an upload, a file writer) fails instead of storing it.
pub struct Verified<S> {
    inner: S,
    hasher: Option<Sha256>,
    seen: u64,
    digest: String,
    size: u64,
    what: String,
}

impl<S> Verified<S> {
    /// `what` names the blob in the error (e.g. `blob sha256:... of quay.io/a/b`).
    pub fn new(inner: S, digest: &str, size: u64, what: String) -> Self {
        Verified {
            inner,
            hasher: Some(Sha256::new()),
            seen: 0,
            digest: digest.to_string(),
            size,
            what,
        }
    }
}

impl<S> Stream for Verified<S>
where
    S: Stream<Item = io::Result<Bytes>> + Unpin,
{
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(piece))) => {
                this.seen += piece.len() as u64;
                if this.seen > this.size {
                    this.hasher = None;
                    return Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{}: more than the {} bytes its descriptor says",
                            this.what, this.size
                        ),
                    ))));
                }
                if let Some(h) = &mut this.hasher {
                    h.update(&piece);
                }
                Poll::Ready(Some(Ok(piece)))
            }
            Poll::Ready(None) => {
                let Some(h) = this.hasher.take() else {
                    return Poll::Ready(None);
                };
                let actual = format!("sha256:{}", hex::encode(h.finalize()));
                if this.seen != this.size {
                    Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "{}: {} bytes instead of the {} its descriptor says",
                            this.what, this.seen, this.size
                        ),
                    ))))
                } else if actual != this.digest {
                    Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{}: digest mismatch: expected {}, content has {actual}",
                            this.what, this.digest
                        ),
                    ))))
                } else {
                    Poll::Ready(None)
                }
            }
            other => other,
        }
    }
}

/// A writer that hashes and counts what goes through it.
pub struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// The inner writer, the `sha256:` digest and the byte count of what was written.
    pub fn finish(self) -> (W, String, u64) {
        (
            self.inner,
            format!("sha256:{}", hex::encode(self.hasher.finalize())),
            self.written,
        )
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;

    fn digest(b: &[u8]) -> String {
        crate::image::sha256_digest(b)
    }

    #[tokio::test]
    async fn verified_streams_pass_good_content_and_fail_bad() {
        let data = Bytes::from(vec![7u8; CHUNK * 2 + 5]);
        let blob = Blob::in_memory("x", digest(&data), data.clone());
        let pieces: Vec<_> = Verified::new(
            blob.stream().unwrap(),
            &blob.digest,
            blob.size(),
            "b".into(),
        )
        .collect()
        .await;
        assert!(pieces.iter().all(Result::is_ok));
        assert_eq!(pieces.len(), 3);

        let wrong = Verified::new(
            blob.stream().unwrap(),
            &digest(b"x"),
            blob.size(),
            "b".into(),
        );
        let last = wrong.collect::<Vec<_>>().await.pop().unwrap();
        assert!(last.unwrap_err().to_string().contains("digest mismatch"));

        let short = Verified::new(
            blob.stream().unwrap(),
            &blob.digest,
            blob.size() + 1,
            "b".into(),
        );
        let last = short.collect::<Vec<_>>().await.pop().unwrap();
        assert!(last.unwrap_err().to_string().contains("instead of"));
    }

    #[tokio::test]
    async fn file_blobs_stream_in_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b");
        let data = vec![1u8; CHUNK + 10];
        std::fs::write(&p, &data).unwrap();
        let blob = Blob::in_file("x", digest(&data), data.len() as u64, BlobData::Stored(p));
        let pieces: Vec<Bytes> = blob.stream().unwrap().map(|r| r.unwrap()).collect().await;
        assert_eq!(
            pieces.iter().map(Bytes::len).collect::<Vec<_>>(),
            [CHUNK, 10]
        );
        assert_eq!(blob.bytes().unwrap().len(), data.len());
    }
}
