//! The input side of go-yaml v2 (`readerc.go`): byte order marks, UTF-8 and UTF-16 decoding,
//! the characters YAML forbids, and *when* a bad byte is reported.
//!
//! go-yaml decodes its input lazily, 512 raw bytes at a time, and reports a bad byte only when
//! the scanner asks for a character past the last block it decoded. So a control character
//! after the end of the first document of a chunk fails the chunk when it sits in a block the
//! scanner had to decode, and is never seen otherwise. The whole input is decoded here at once,
//! and the scanner asks [`Input::cache`] before it looks ahead, which replays go-yaml's block
//! boundaries to fail at the same point.
//!
//! go-yaml's `is_bom` looks at the start of its sliding buffer, not at the current position,
//! so a byte order mark at the start of a line is skipped only when the buffer was last
//! refilled there. [`Input::bom_at_buffer_start`] keeps that quirk.

/// Raw bytes go-yaml reads at a time (`input_raw_buffer_size`).
const RAW_BLOCK: usize = 512;

/// Zero bytes after the text: the scanner looks a few bytes ahead of any character.
const PADDING: usize = 16;

/// What go-yaml's reader reports, with the raw offset it names (not part of the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderError {
    pub problem: &'static str,
    pub offset: usize,
}

/// A decoded chunk as the scanner reads it.
pub struct Input {
    /// The text as UTF-8, followed by [`PADDING`] zeros (go-yaml's end-of-stream NUL).
    pub buf: Vec<u8>,
    /// Bytes of `buf` that are text.
    len: usize,
    /// Where each of go-yaml's decoding passes ends in `buf` (the last one holds the rest).
    pass_ends: Vec<usize>,
    /// The pass that meets the first bad byte, and what it reports.
    error: Option<(usize, ReaderError)>,
    /// The next pass to decode.
    next_pass: usize,
    /// How far the text is decoded.
    frontier: usize,
    /// Once go-yaml has read past the end: the NUL characters it has put after the text (one
    /// more each time the scanner asks for more than is left).
    nuls: Option<usize>,
    /// Where go-yaml's buffer started at its last refill.
    buffer_start: usize,
}

impl Input {
    /// Decodes `raw` as go-yaml's reader would, remembering where it would fail.
    pub fn new(raw: &[u8]) -> Input {
        let (encoding, bom) = match raw {
            [0xff, 0xfe, ..] => (Encoding::Utf16Le, 2),
            [0xfe, 0xff, ..] => (Encoding::Utf16Be, 2),
            [0xef, 0xbb, 0xbf, ..] => (Encoding::Utf8, 3),
            _ => (Encoding::Utf8, 0),
        };
        let mut decoded = match encoding {
            Encoding::Utf8 => utf8(raw, bom),
            Encoding::Utf16Le | Encoding::Utf16Be => utf16(raw, bom, encoding == Encoding::Utf16Le),
        };
        // go-yaml's first read fills its raw buffer; an input shorter than a byte order mark
        // needs a second read, which reports the end: the first pass already knows it.
        if raw.len() < 3
            && let Some((pass, _)) = decoded.error.as_mut()
        {
            *pass = 0;
        }
        let len = decoded.buf.len();
        decoded.buf.resize(len + PADDING, 0);
        Input {
            buf: decoded.buf,
            len,
            pass_ends: decoded.pass_ends,
            error: decoded.error,
            next_pass: 0,
            frontier: 0,
            nuls: None,
            buffer_start: 0,
        }
    }

    /// go-yaml's `cache(parser, n)`: makes sure `n` characters from `pos` are decoded, or
    /// reports the reader error go-yaml would report on the way.
    #[inline]
    pub fn cache(&mut self, pos: usize, n: usize) -> Result<(), ReaderError> {
        if self.frontier.saturating_sub(pos) >= 4 * n || self.unread(pos, n) >= n {
            return Ok(());
        }
        self.refill(pos, n)
    }

    #[cold]
    fn refill(&mut self, pos: usize, n: usize) -> Result<(), ReaderError> {
        // go-yaml moves the unread characters to the start of its buffer first.
        self.buffer_start = pos;
        if let Some(nuls) = self.nuls.as_mut() {
            // Past the end, each refill adds a NUL.
            *nuls += 1;
            return Ok(());
        }
        while self.unread(pos, n) < n {
            if let Some((pass, error)) = &self.error
                && *pass == self.next_pass
            {
                return Err(error.clone());
            }
            match self.pass_ends.get(self.next_pass) {
                Some(&end) => self.frontier = end,
                // The read after the last block reports the end: a NUL follows the text.
                None => {
                    self.frontier = self.len;
                    self.nuls = Some(1);
                    return Ok(());
                }
            }
            self.next_pass += 1;
        }
        Ok(())
    }

    /// Characters decoded and not read from `pos` on (go-yaml's `unread`), counting at most
    /// `n`.
    fn unread(&self, pos: usize, n: usize) -> usize {
        let mut at = pos;
        let mut count = 0;
        while count < n && at < self.frontier {
            at += width(self.buf[at]).max(1);
            if at > self.frontier {
                break;
            }
            count += 1;
        }
        count + self.nuls.unwrap_or(0)
    }

    /// go-yaml's `is_bom(parser.buffer, ...)`: a byte order mark at the start of its buffer.
    pub fn bom_at_buffer_start(&self) -> bool {
        self.buf.get(self.buffer_start..self.buffer_start + 3) == Some(&[0xef, 0xbb, 0xbf][..])
            && self.buffer_start < self.len
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
}

struct Decoded {
    buf: Vec<u8>,
    pass_ends: Vec<usize>,
    error: Option<(usize, ReaderError)>,
}

/// The width of a UTF-8 character from its first byte (0: not a first byte).
#[inline]
pub fn width(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xe0 == 0xc0 {
        2
    } else if b & 0xf0 == 0xe0 {
        3
    } else if b & 0xf8 == 0xf0 {
        4
    } else {
        0
    }
}

/// Whether go-yaml's reader lets the character through.
fn allowed(c: u32) -> bool {
    matches!(c, 0x09 | 0x0a | 0x0d | 0x20..=0x7e | 0x85 | 0xa0..=0xd7ff | 0xe000..=0xfffd | 0x10000..=0x10ffff)
}

/// The pass that decodes a character ending at raw offset `end` (passes read
/// [`RAW_BLOCK`] bytes each; a character is decoded once all its bytes are read).
fn pass_of(end: usize) -> usize {
    end.saturating_sub(1) / RAW_BLOCK
}

/// The pass that reads raw offset `at`.
fn pass_reading(at: usize) -> usize {
    at / RAW_BLOCK
}

/// The passes over `raw.len()` bytes and where each ends in the decoded text, given the
/// decoded offset after each character (by its raw end).
fn data_passes(raw_len: usize) -> usize {
    raw_len.div_ceil(RAW_BLOCK).max(1)
}

/// UTF-8 input after a `bom`-byte mark: valid text is copied as it is.
fn utf8(raw: &[u8], bom: usize) -> Decoded {
    let text = &raw[bom..];
    let passes = data_passes(raw.len());
    let mut pass_ends = Vec::with_capacity(passes);
    for k in 0..passes {
        // The last complete character within the pass's raw bytes.
        let mut end = ((k + 1) * RAW_BLOCK).min(raw.len());
        while end < raw.len() && end > bom && raw[end] & 0xc0 == 0x80 {
            end -= 1;
        }
        pass_ends.push(end.max(bom) - bom);
    }
    let error = match std::str::from_utf8(text) {
        Ok(s) if !has_forbidden(s.as_bytes()) => None,
        _ => first_utf8_error(raw, bom),
    };
    let mut buf = Vec::with_capacity(text.len() + PADDING);
    buf.extend_from_slice(text);
    Decoded {
        buf,
        pass_ends,
        error,
    }
}

/// Whether valid UTF-8 holds a character go-yaml refuses: C0 controls but tab, line feed and
/// carriage return, DEL, C1 controls but NEL, U+FFFE and U+FFFF.
fn has_forbidden(bytes: &[u8]) -> bool {
    let mut bad = 0u8;
    for &b in bytes {
        bad |= u8::from(b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r') | u8::from(b == 0x7f);
    }
    if bad != 0 {
        return true;
    }
    memchr::memchr2_iter(0xc2, 0xef, bytes).any(|i| {
        let next = |k: usize| bytes.get(i + k).copied().unwrap_or(0);
        match bytes[i] {
            0xc2 => (0x80..=0x9f).contains(&next(1)) && next(1) != 0x85,
            _ => next(1) == 0xbf && matches!(next(2), 0xbe | 0xbf),
        }
    })
}

/// go-yaml's UTF-8 decoding loop, character by character, up to its first complaint.
fn first_utf8_error(raw: &[u8], bom: usize) -> Option<(usize, ReaderError)> {
    let mut at = bom;
    let err = |problem, offset| ReaderError { problem, offset };
    while at < raw.len() {
        let lead = raw[at];
        let w = width(lead);
        if w == 0 {
            return Some((pass_reading(at), err("invalid leading UTF-8 octet", at)));
        }
        if at + w > raw.len() {
            // Noticed only once the read after the last block reports the end.
            return Some((
                data_passes(raw.len()),
                err("incomplete UTF-8 octet sequence", at),
            ));
        }
        let pass = pass_of(at + w);
        let mut value = u32::from(match w {
            1 => lead & 0x7f,
            2 => lead & 0x1f,
            3 => lead & 0x0f,
            _ => lead & 0x07,
        });
        for k in 1..w {
            let b = raw[at + k];
            if b & 0xc0 != 0x80 {
                return Some((pass, err("invalid trailing UTF-8 octet", at + k)));
            }
            value = (value << 6) + u32::from(b & 0x3f);
        }
        let shortest = match w {
            1 => true,
            2 => value >= 0x80,
            3 => value >= 0x800,
            _ => value >= 0x10000,
        };
        if !shortest {
            return Some((pass, err("invalid length of a UTF-8 sequence", at)));
        }
        if (0xd800..=0xdfff).contains(&value) || value > 0x10ffff {
            return Some((pass, err("invalid Unicode character", at)));
        }
        if !allowed(value) {
            return Some((pass, err("control characters are not allowed", at)));
        }
        at += w;
    }
    None
}

/// UTF-16 input after its byte order mark, decoded to UTF-8.
fn utf16(raw: &[u8], bom: usize, little: bool) -> Decoded {
    let unit = |at: usize| -> u32 {
        let (lo, hi) = if little {
            (raw[at], raw[at + 1])
        } else {
            (raw[at + 1], raw[at])
        };
        u32::from(lo) | (u32::from(hi) << 8)
    };
    let passes = data_passes(raw.len());
    let mut pass_ends = vec![0usize; passes];
    let mut buf = Vec::with_capacity(raw.len() + PADDING);
    let mut error = None;
    let mut at = bom;
    let err = |problem, offset| ReaderError { problem, offset };
    while at < raw.len() {
        if at + 2 > raw.len() {
            error = Some((passes, err("incomplete UTF-16 character", at)));
            break;
        }
        let mut value = unit(at);
        if value & 0xfc00 == 0xdc00 {
            error = Some((pass_of(at + 2), err("unexpected low surrogate area", at)));
            break;
        }
        let w = if value & 0xfc00 == 0xd800 {
            if at + 4 > raw.len() {
                error = Some((passes, err("incomplete UTF-16 surrogate pair", at)));
                break;
            }
            let low = unit(at + 2);
            if low & 0xfc00 != 0xdc00 {
                error = Some((pass_of(at + 4), err("expected low surrogate area", at + 2)));
                break;
            }
            value = 0x10000 + ((value & 0x3ff) << 10) + (low & 0x3ff);
            4
        } else {
            2
        };
        if !allowed(value) {
            error = Some((
                pass_of(at + w),
                err("control characters are not allowed", at),
            ));
            break;
        }
        let c = char::from_u32(value).unwrap_or('\u{fffd}');
        let mut tmp = [0u8; 4];
        buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        at += w;
        let pass = pass_of(at);
        if let Some(end) = pass_ends.get_mut(pass) {
            *end = buf.len();
        }
    }
    // A pass that decodes nothing new ends where the previous one did.
    for k in 1..pass_ends.len() {
        pass_ends[k] = pass_ends[k].max(pass_ends[k - 1]);
    }
    Decoded {
        buf,
        pass_ends,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_wait_for_their_block() {
        let mut text = b"a: 1\n".repeat(200);
        text.push(0x01);
        let mut input = Input::new(&text);
        // The first block decodes fine.
        assert!(input.cache(0, 4).is_ok());
        assert!(input.cache(500, 4).is_ok());
        // The control character sits in the second block.
        let err = input.cache(1000, 4).unwrap_err();
        assert_eq!(err.problem, "control characters are not allowed");
    }

    #[test]
    fn utf16_is_decoded() {
        let input = Input::new(b"\xfe\xff\x00a\x00:\x00 \x001\x00\n");
        assert_eq!(&input.buf[..input.len], b"a: 1\n");
        let input = Input::new(b"\xff\xfea\x00:\x00 \x001\x00\n");
        assert_eq!(
            input.error.unwrap().1.problem,
            "incomplete UTF-16 character"
        );
    }

    #[test]
    fn bad_utf8_is_named_as_go_names_it() {
        let problem = |raw: &[u8]| Input::new(raw).error.map(|(_, e)| e.problem);
        assert_eq!(problem(b"a: \xff\n"), Some("invalid leading UTF-8 octet"));
        assert_eq!(
            problem(b"a: \xc0\x80\n"),
            Some("invalid length of a UTF-8 sequence")
        );
        assert_eq!(
            problem(b"a: \xed\xa0\x80\n"),
            Some("invalid Unicode character")
        );
        assert_eq!(problem(b"a: \xc3"), Some("incomplete UTF-8 octet sequence"));
        assert_eq!(
            problem(b"a: \xc2\x80\n"),
            Some("control characters are not allowed")
        );
        assert_eq!(problem(b"a: \xc2\x85\n"), None);
        assert_eq!(problem("a: é\u{feff}\n".as_bytes()), None);
    }
}
