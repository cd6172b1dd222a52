//! Sixteen bytes at a time, the bytes the block reader ([`super::block`]) looks for: line
//! feeds, the `:` and `#` that make keys and comments, and what JSON escapes.
//!
//! Catalog lines are mostly 20 to 80 bytes long: too short for memchr, whose calls cost more
//! than such a line, and long enough that a byte-by-byte loop costs several instructions a
//! byte. On x86_64, SSE2 (part of the baseline, so on every such CPU) compares sixteen bytes
//! in a few instructions; elsewhere, the same masks come from 64-bit words.

/// Sixteen bytes of `bytes` from `at`, zeros past the end: no line holds a zero byte (the
/// reader takes only printable text), so they never match.
#[inline]
pub(super) fn chunk_at(bytes: &[u8], at: usize) -> [u8; 16] {
    let mut chunk = [0u8; 16];
    match bytes.get(at..at + 16) {
        Some(sixteen) => chunk.copy_from_slice(sixteen),
        None => {
            let rest = bytes.get(at..).unwrap_or_default();
            chunk[..rest.len()].copy_from_slice(rest);
        }
    }
    chunk
}

/// Bit `i` set where byte `i` of `chunk` is a line feed; and where it is a `:` or `#`.
#[inline]
pub(super) fn line_marks(chunk: &[u8; 16]) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    return sse2::line_marks(chunk);
    #[cfg(not(target_arch = "x86_64"))]
    return words::line_marks(chunk);
}

/// Bit `i` set where byte `i` of `chunk` is one JSON escapes: `"`, `\` or below 0x20.
#[inline]
pub(super) fn escapes(chunk: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    return sse2::escapes(chunk);
    #[cfg(not(target_arch = "x86_64"))]
    return words::escapes(chunk);
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// One bit a byte: where `eq` (a comparison's result) is all ones.
    fn bits(eq: __m128i) -> u32 {
        // SAFETY: SSE2 is part of the x86_64 baseline: the instruction exists on every CPU
        // this code runs on.
        (unsafe { _mm_movemask_epi8(eq) }) as u32 & 0xffff
    }

    /// `chunk` in a vector register.
    fn load(chunk: &[u8; 16]) -> __m128i {
        // SAFETY: reads the sixteen bytes of `chunk` (an unaligned load may read any
        // address); SSE2 is part of the x86_64 baseline.
        unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) }
    }

    /// Where the bytes of `v` are `b`, as a vector.
    fn equal(v: __m128i, b: u8) -> __m128i {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe { _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)) }
    }

    pub(super) fn line_marks(chunk: &[u8; 16]) -> (u32, u32) {
        let v = load(chunk);
        // SAFETY: SSE2 is part of the x86_64 baseline.
        let specials = unsafe { _mm_or_si128(equal(v, b':'), equal(v, b'#')) };
        (bits(equal(v, b'\n')), bits(specials))
    }

    pub(super) fn escapes(chunk: &[u8; 16]) -> u32 {
        let v = load(chunk);
        // SAFETY: SSE2 is part of the x86_64 baseline.
        let found = unsafe {
            // Bytes up to 0x1f are those whose unsigned maximum with 0x1f is 0x1f.
            let controls =
                _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
            _mm_or_si128(controls, _mm_or_si128(equal(v, b'"'), equal(v, b'\\')))
        };
        bits(found)
    }
}

/// The masks from two 64-bit words, for other targets (and tested against SSE2 on x86_64).
#[cfg(any(test, not(target_arch = "x86_64")))]
mod words {
    const LOW_BITS: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);

    /// The two little-endian words of `chunk`.
    fn halves(chunk: &[u8; 16]) -> [u64; 2] {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&chunk[..8]);
        hi.copy_from_slice(&chunk[8..]);
        [u64::from_le_bytes(lo), u64::from_le_bytes(hi)]
    }

    /// The high bit of each byte of `word` that is `b`, exactly.
    fn equal(word: u64, b: u8) -> u64 {
        let x = word ^ (LOW_BITS * u64::from(b));
        // Low seven bits plus 0x7f carry into the high bit unless they are all zero.
        !(((x & !HIGH_BITS) + !HIGH_BITS) | x) & HIGH_BITS
    }

    /// The high bit of each byte of `word` below 0x20.
    fn controls(word: u64) -> u64 {
        // Low seven bits plus 0x60 reach the high bit from 0x20 on; bytes from 0x80 have it.
        !(((word & !HIGH_BITS) + LOW_BITS * 0x60) | word) & HIGH_BITS
    }

    /// One bit a byte from the high bits of each half (the multiply gathers them).
    fn bits(f: impl Fn(u64) -> u64, chunk: &[u8; 16]) -> u32 {
        let [lo, hi] = halves(chunk).map(|w| (f(w) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56);
        (lo | (hi << 8)) as u32
    }

    pub(super) fn line_marks(chunk: &[u8; 16]) -> (u32, u32) {
        (
            bits(|w| equal(w, b'\n'), chunk),
            bits(|w| equal(w, b':') | equal(w, b'#'), chunk),
        )
    }

    pub(super) fn escapes(chunk: &[u8; 16]) -> u32 {
        bits(|w| equal(w, b'"') | equal(w, b'\\') | controls(w), chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The masks byte by byte.
    fn by_byte(chunk: &[u8; 16], f: impl Fn(u8) -> bool) -> u32 {
        (0..16).filter(|&i| f(chunk[i])).map(|i| 1 << i).sum()
    }

    #[test]
    fn masks_are_the_bytes_looked_for() {
        let mut chunks = Vec::new();
        for b in 0..=255u8 {
            for at in [0, 5, 7, 8, 15] {
                let mut chunk = [b'a'; 16];
                chunk[at] = b;
                chunk[(at + 9) % 16] = b;
                chunks.push(chunk);
                chunks.push([b; 16]);
            }
        }
        let text = b"  key: value # c\n\"q\\\" \x01\x1f\x20\x7f\xc3\xa9:#\n";
        for at in 0..text.len() + 2 {
            chunks.push(chunk_at(text, at));
        }
        for chunk in &chunks {
            let lines = (
                by_byte(chunk, |b| b == b'\n'),
                by_byte(chunk, |b| b == b':' || b == b'#'),
            );
            let escaped = by_byte(chunk, |b| b < 0x20 || b == b'"' || b == b'\\');
            assert_eq!(line_marks(chunk), lines, "{chunk:?}");
            assert_eq!(words::line_marks(chunk), lines, "{chunk:?}");
            assert_eq!(escapes(chunk), escaped, "{chunk:?}");
            assert_eq!(words::escapes(chunk), escaped, "{chunk:?}");
        }
    }

    #[test]
    fn chunks_are_padded_with_zeros() {
        assert_eq!(chunk_at(b"abc", 1), *b"bc\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(chunk_at(b"abc", 3), [0; 16]);
        assert_eq!(chunk_at(b"abc", 9), [0; 16]);
    }
}
