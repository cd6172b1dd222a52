//! Sparse files in layers, read as Go's `archive/tar` (and so containerd and the runtimes)
//! reads them, and written sparse: a hole is skipped with a seek, never written as zeros.
//!
//! - Old GNU sparse entries (type `S`): the `tar` crate reads their map and hands the file
//!   back holes filled; [`copy_sparse`] seeks over every all-zero piece instead of writing it.
//! - PAX sparse entries (GNU tar's formats 0.0, 0.1 and 1.0, which the `tar` crate does not
//!   know): a regular entry with `GNU.sparse.*` records. Its real name is `GNU.sparse.name`,
//!   its real size `GNU.sparse.size` (0.x) or `GNU.sparse.realsize` (1.0); the map is
//!   `GNU.sparse.map` (`offset,length,...`; 0.0's repeated `GNU.sparse.offset` and
//!   `GNU.sparse.numbytes` records read as the same list) or, for 1.0, decimal lines at the
//!   start of the data (the count, then offset and length per segment), padded to 512-byte
//!   blocks. The stored data is the segments one after another.
//!
//! Either way the size that counts against the unpack limit is the real size, holes included.

use std::io::{self, Read, Seek, SeekFrom, Write};

/// A PAX sparse entry's facts, from its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaxSparse {
    /// `GNU.sparse.name`, which replaces the header's `GNUSparseFile.N/...` name.
    pub name: Option<Vec<u8>>,
    pub real_size: u64,
    /// The segments from the records (0.x); `None` for 1.0, whose map opens the data.
    pub map: Option<Vec<(u64, u64)>>,
}

/// The map at the start of a 1.0 entry's data is at most this long (Go reads it from blocks
/// as the numbers come; a map this long would describe 50,000 segments).
const MAP_1X0_BYTES: u64 = 1 << 20;

fn bad(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// The entry's PAX sparse facts, or `None` when its records do not make it one (Go's
/// `readGNUSparsePAXHeaders`: an unknown version is read as a plain file).
pub fn pax_sparse<'a>(
    records: impl Iterator<Item = (&'a [u8], &'a [u8])>,
) -> io::Result<Option<PaxSparse>> {
    let (mut major, mut minor, mut name, mut size, mut real_size, mut map) =
        (None, None, None, None, None, None);
    let mut pairs: Vec<&[u8]> = Vec::new();
    for (k, v) in records {
        match k {
            b"GNU.sparse.major" => major = Some(v),
            b"GNU.sparse.minor" => minor = Some(v),
            b"GNU.sparse.name" => name = Some(v),
            b"GNU.sparse.size" => size = Some(v),
            b"GNU.sparse.realsize" => real_size = Some(v),
            b"GNU.sparse.map" => map = Some(v),
            // 0.0: one record per number, in order.
            b"GNU.sparse.offset" | b"GNU.sparse.numbytes" => pairs.push(v),
            _ => {}
        }
    }
    let joined;
    if map.is_none() && !pairs.is_empty() {
        joined = pairs.join(&b","[..]);
        map = Some(&joined);
    }
    let (major, minor) = (major.unwrap_or_default(), minor.unwrap_or_default());
    let v1 = match (major, minor) {
        (b"0", b"0" | b"1") => false,
        (b"1", b"0") => true,
        (b"", b"") if map.is_some_and(|m| !m.is_empty()) => false,
        _ => return Ok(None),
    };
    let number = |v: &[u8]| -> io::Result<u64> {
        std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                bad(format!(
                    "sparse file: bad number {:?}",
                    String::from_utf8_lossy(v)
                ))
            })
    };
    let real_size = match size.or(real_size) {
        Some(s) => number(s)?,
        None => return Err(bad("sparse file without its size")),
    };
    let map = match v1 {
        true => None,
        false => {
            let text = map.unwrap_or_default();
            let numbers = match text.is_empty() {
                true => Vec::new(),
                false => text
                    .split(|b| *b == b',')
                    .map(number)
                    .collect::<io::Result<Vec<u64>>>()?,
            };
            if numbers.len() % 2 != 0 {
                return Err(bad("sparse file: its map has an odd count of numbers"));
            }
            Some(numbers.chunks(2).map(|p| (p[0], p[1])).collect())
        }
    };
    Ok(Some(PaxSparse {
        name: name.filter(|n| !n.is_empty()).map(<[u8]>::to_vec),
        real_size,
        map,
    }))
}

/// Reads a 1.0 map from the start of the data (whole 512-byte blocks); returns it and the
/// bytes it took.
pub fn read_map_1x0(data: &mut impl Read, stored: u64) -> io::Result<(Vec<(u64, u64)>, u64)> {
    let mut text = Vec::new();
    let mut block = [0u8; 512];
    let mut newlines = 0u64;
    let mut wanted = 1u64;
    let mut count = None;
    while newlines < wanted {
        if text.len() as u64 + 512 > MAP_1X0_BYTES.min(stored) {
            return Err(bad("sparse file: its map is too long or cut short"));
        }
        data.read_exact(&mut block)?;
        newlines += block.iter().filter(|b| **b == b'\n').count() as u64;
        text.extend_from_slice(&block);
        if count.is_none() && newlines >= 1 {
            let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
            let n: u64 = std::str::from_utf8(first)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad("sparse file: bad map count"))?;
            count = Some(n);
            wanted = n
                .checked_mul(2)
                .and_then(|w| w.checked_add(1))
                .ok_or_else(|| bad("sparse file: bad map count"))?;
        }
    }
    let mut tokens = text.split(|b| *b == b'\n').skip(1);
    let mut next = || -> io::Result<u64> {
        let t = tokens.next().unwrap_or_default();
        std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("sparse file: bad map entry"))
    };
    let mut map = Vec::new();
    for _ in 0..count.unwrap_or(0) {
        map.push((next()?, next()?));
    }
    Ok((map, text.len() as u64))
}

/// Checks a map against the real size and the data stored (Go's `validateSparseEntries`, and
/// its check that the data is exactly the segments).
pub fn check_map(map: &[(u64, u64)], real_size: u64, data: u64) -> io::Result<()> {
    let mut end = 0u64;
    let mut total = 0u64;
    for &(offset, len) in map {
        let stop = offset
            .checked_add(len)
            .ok_or_else(|| bad("sparse file: a segment past any size"))?;
        if offset < end || stop > real_size {
            return Err(bad(
                "sparse file: segments overlap, go backwards or pass its size",
            ));
        }
        end = stop;
        total += len;
    }
    if total != data {
        return Err(bad(format!(
            "sparse file: its segments hold {total} bytes, the entry {data}"
        )));
    }
    Ok(())
}

/// Writes the segments of `map`, read one after another from `data`, at their offsets of
/// `file`, which ends up `real_size` long: the holes are never written.
pub fn write_segments(
    file: &mut std::fs::File,
    data: &mut impl Read,
    map: &[(u64, u64)],
    real_size: u64,
) -> io::Result<()> {
    for &(offset, len) in map {
        file.seek(SeekFrom::Start(offset))?;
        let copied = io::copy(&mut data.take(len), file)?;
        if copied != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "sparse file: its data ends early",
            ));
        }
    }
    file.set_len(real_size)
}

/// Copies `data` (a sparse file with its holes read as zeros) into `file`, seeking over
/// every piece that is all zeros.
pub fn copy_sparse(file: &mut std::fs::File, data: &mut impl Read) -> io::Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    let mut at = 0u64;
    loop {
        let n = match data.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf[..n].iter().all(|b| *b == 0) {
            file.seek(SeekFrom::Current(n as i64))?;
        } else {
            file.write_all(&buf[..n])?;
        }
        at += n as u64;
    }
    file.set_len(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(list: &[(&'static str, &'static str)]) -> Vec<(&'static [u8], &'static [u8])> {
        list.iter()
            .map(|(k, v)| (k.as_bytes(), v.as_bytes()))
            .collect()
    }

    #[test]
    fn pax_sparse_versions_read_as_go_reads_them() {
        let r = |l: &[(&'static str, &'static str)]| pax_sparse(records(l).into_iter());
        // Not sparse: nothing, or an unknown version.
        assert_eq!(r(&[("path", "x")]).unwrap(), None);
        assert_eq!(
            r(&[("GNU.sparse.major", "2"), ("GNU.sparse.minor", "0")]).unwrap(),
            None
        );
        // 0.1: the map in a record.
        let s = r(&[
            ("GNU.sparse.major", "0"),
            ("GNU.sparse.minor", "1"),
            ("GNU.sparse.name", "real/name"),
            ("GNU.sparse.size", "100"),
            ("GNU.sparse.map", "0,5,90,10"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.name.as_deref(), Some(&b"real/name"[..]));
        assert_eq!((s.real_size, s.map), (100, Some(vec![(0, 5), (90, 10)])));
        // 0.0: numbers one record each, no version.
        let s = r(&[
            ("GNU.sparse.size", "7"),
            ("GNU.sparse.offset", "1"),
            ("GNU.sparse.numbytes", "2"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.map, Some(vec![(1, 2)]));
        // 1.0: the map is in the data.
        let s = r(&[
            ("GNU.sparse.major", "1"),
            ("GNU.sparse.minor", "0"),
            ("GNU.sparse.realsize", "4096"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((s.real_size, s.map), (4096, None));
        assert!(r(&[("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0")]).is_err());
        assert!(r(&[("GNU.sparse.size", "x"), ("GNU.sparse.map", "1,2")]).is_err());
        assert!(r(&[("GNU.sparse.size", "9"), ("GNU.sparse.map", "1,2,3")]).is_err());
    }

    #[test]
    fn maps_are_checked_and_written_with_holes() {
        let mut data = b"3\n0\n2\n10\n1\n4094\n2\n".to_vec();
        data.resize(512, 0);
        data.extend_from_slice(b"abcdef");
        let mut r = &data[..];
        let (map, taken) = read_map_1x0(&mut r, data.len() as u64).unwrap();
        assert_eq!(
            (map.clone(), taken),
            (vec![(0, 2), (10, 1), (4094, 2)], 512)
        );
        assert!(check_map(&map, 4096, 5).is_ok());
        assert!(check_map(&map, 4095, 5).is_err(), "past the size");
        assert!(check_map(&map, 4096, 6).is_err(), "data left over");
        assert!(check_map(&[(5, 1), (4, 1)], 10, 2).is_err(), "backwards");
        assert!(check_map(&[(u64::MAX, 2)], u64::MAX, 2).is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        write_segments(&mut f, &mut r, &map, 4096).unwrap();
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len(), 4096);
        assert_eq!(
            (&back[..2], back[10], &back[4094..]),
            (&b"ab"[..], b'c', &b"de"[..])
        );
        // A count that promises more numbers than there are blocks.
        let mut short = b"1000\n".to_vec();
        short.resize(512, 0);
        assert!(read_map_1x0(&mut &short[..], 512).is_err());
    }

    #[test]
    fn zeros_become_holes() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        let mut data = vec![0u8; 64 << 20];
        data[5] = 1;
        copy_sparse(&mut f, &mut &data[..]).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), 64 << 20);
        assert!(meta.blocks() * 512 < 1 << 20, "{} blocks", meta.blocks());
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }
}
