//! Image pull specs, read the way OLM reads them: `reference.ParseNormalizedNamed` of
//! containers/image `docker/reference` (operator-registry's `validateImagePullSpec` imports
//! `go.podman.io/image/v5/docker/reference`), whose grammar is distribution's `regexp.go`:
//!
//! ```text
//! reference := name [ ":" tag ] [ "@" digest ]
//! name      := [ domain-and-port "/" ] path-component ( "/" path-component )*
//! path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
//! domain-and-port := ( domain-name | "[" ipv6 "]" ) [ ":" [0-9]+ ]
//! domain-name := [a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])? ( "." ... )*
//! tag       := [\w][\w.-]{0,127}
//! digest    := algorithm ":" [0-9a-fA-F]{32,}, then go-digest's check (sha256/384/512, lower hex)
//! ```
//!
//! `ParseNormalizedNamed` first splits the domain off with `SplitDockerDomain`: the first
//! component is a domain only when it contains `.` or `:` or is `localhost` (so `UPPER/case` is
//! a Docker Hub path, and an uppercase path is refused), then prefixes `docker.io/` (and
//! `library/` for one-component names) before matching.

/// A pull spec `ParseNormalizedNamed` refuses, with its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ImageRefError(String);

fn fail<T>(msg: &str) -> Result<T, ImageRefError> {
    Err(ImageRefError(msg.to_string()))
}

/// Checks an image pull spec exactly as `reference.ParseNormalizedNamed` does.
///
/// Nothing is allocated unless the spec is refused: the normalised name
/// (`domain/remainder`) is never built, its static `docker.io/` and `library/` prefix is
/// accounted for instead (both are valid path components and count toward the name length).
pub fn validate(s: &str) -> Result<(), ImageRefError> {
    if s.len() == 64 && s.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return Err(ImageRefError(format!(
            "invalid repository name ({s}), cannot specify 64-byte hexadecimal strings"
        )));
    }
    let (prefix, tail, remainder) = normalized_parts(s);
    let remote = &remainder[..find_byte(b':', remainder.as_bytes()).unwrap_or(remainder.len())];
    let uppercase = if remote.is_ascii() {
        !all_bytes(remote.as_bytes(), |b| !b.is_ascii_uppercase())
    } else {
        // `to_lowercase` also maps non-ASCII letters: ask it, as `ParseNormalizedNamed` does.
        let (_, remainder) = split_docker_domain(s);
        let remote = remainder.split(':').next().unwrap_or_default();
        remote.to_lowercase() != remote
    };
    if uppercase {
        return fail("invalid reference format: repository name must be lowercase");
    }
    let Some((name_len, digest)) = match_normalized(prefix, tail) else {
        // Refused: build the normalised name to tell why.
        return parse(&format!("{prefix}{tail}"));
    };
    if name_len > 255 {
        return fail("repository name must not be more than 255 characters");
    }
    if let Some(d) = digest {
        validate_digest(d)?;
    }
    Ok(())
}

/// [`split_docker_domain`] without building anything: the normalised name is `prefix` + `tail`
/// (`prefix` is empty when `tail` is `s` itself), and `remainder` is the part after the domain
/// as written (without an added `library/`).
fn normalized_parts(s: &str) -> (&'static str, &str, &str) {
    let docker_hub = |remainder: &str| {
        if find_byte(b'/', remainder.as_bytes()).is_some() {
            "docker.io/"
        } else {
            "docker.io/library/"
        }
    };
    match registry_host(s) {
        Some(host) => {
            let remainder = &s[host.len() + 1..];
            if host == "docker.io" || host == "index.docker.io" {
                (docker_hub(remainder), remainder, remainder)
            } else {
                ("", s, remainder)
            }
        }
        None => (docker_hub(s), s, s),
    }
}

/// [`match_reference`] of `prefix` + `tail`: the name's length and the digest when it matches.
/// A non-empty `prefix` (`docker.io/` or `docker.io/library/`) holds only path components and
/// ends with `/`, so the tag and digest are found in `tail` alone and every component of the
/// name after the prefix must be a path component.
fn match_normalized<'a>(prefix: &str, tail: &'a str) -> Option<(usize, Option<&'a str>)> {
    let (name, tag, digest) = split(tail);
    if let Some(d) = digest
        && !digest_pattern(d)
    {
        return None;
    }
    if let Some(t) = tag
        && !tag_pattern(t)
    {
        return None;
    }
    let name_ok = if prefix.is_empty() {
        name_pattern(name)
    } else {
        path_components(name)
    };
    name_ok.then_some((prefix.len() + name.len(), digest))
}

/// `SplitDockerDomain`: the registry host, or `docker.io` with `library/` for official images.
pub fn split_docker_domain(name: &str) -> (String, String) {
    let (mut domain, mut remainder) = match registry_host(name) {
        Some(host) => (host.to_string(), name[host.len() + 1..].to_string()),
        None => ("docker.io".to_string(), name.to_string()),
    };
    if domain == "index.docker.io" {
        domain = "docker.io".into();
    }
    if domain == "docker.io" && !remainder.contains('/') {
        remainder = format!("library/{remainder}");
    }
    (domain, remainder)
}

/// The registry host a reference names: its first component when that has a `.` or `:` or is
/// `localhost` and a path follows (`SplitDockerDomain`'s rule).
pub fn registry_host(reference: &str) -> Option<&str> {
    let first = &reference[..find_byte(b'/', reference.as_bytes())?];
    (first.bytes().any(|b| b == b'.' || b == b':') || first == "localhost").then_some(first)
}

/// Splits `name[:tag][@digest]` without checking any part: the digest follows the first `@`,
/// the tag the last `:` that has no `/` after it.
pub fn split(reference: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, digest) = match find_byte(b'@', reference.as_bytes()) {
        Some(at) => (&reference[..at], Some(&reference[at + 1..])),
        None => (reference, None),
    };
    let last_slash = rfind_byte(b'/', rest.as_bytes()).map_or(0, |i| i + 1);
    match rfind_byte(b':', &rest.as_bytes()[last_slash..]) {
        Some(i) => (
            &rest[..last_slash + i],
            Some(&rest[last_slash + i + 1..]),
            digest,
        ),
        None => (rest, None, digest),
    }
}

/// The first `needle` in `haystack` (a plain loop: pull specs are too short for `memchr`'s setup
/// to pay off).
fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// The last `needle` in `haystack`.
fn rfind_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().rposition(|&b| b == needle)
}

/// `reference.Parse`: match the grammar, then the name length and the digest.
fn parse(s: &str) -> Result<(), ImageRefError> {
    let Some((name, digest)) = match_reference(s) else {
        if s.is_empty() {
            return fail("repository name must have at least one component");
        }
        if match_reference(&s.to_lowercase()).is_some() {
            return fail("repository name must be lowercase");
        }
        return fail("invalid reference format");
    };
    if name.len() > 255 {
        return fail("repository name must not be more than 255 characters");
    }
    if let Some(d) = digest {
        validate_digest(d)?;
    }
    Ok(())
}

/// The anchored `ReferenceRegexp`: returns the name and the digest when `s` matches.
fn match_reference(s: &str) -> Option<(&str, Option<&str>)> {
    // No `@` can appear before the digest, and none inside it; a tag follows the last `:` when
    // no `/` follows it (ports are always followed by a path).
    let (name, tag, digest) = split(s);
    if let Some(d) = digest
        && !digest_pattern(d)
    {
        return None;
    }
    if let Some(t) = tag
        && !tag_pattern(t)
    {
        return None;
    }
    name_pattern(name).then_some((name, digest))
}

/// `[domain-and-port "/"] path-component ("/" path-component)*`
fn name_pattern(name: &str) -> bool {
    path_components(name)
        || name
            .split_once('/')
            .is_some_and(|(first, rest)| domain_and_port(first) && path_components(rest))
}

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `path-component ("/" path-component)*`, where
/// `path-component := [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*`, in one pass.
fn path_components(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        // A run of `[a-z0-9]+`, at the start of a component or after a separator.
        if !b.get(i).is_some_and(|&c| lower_alnum(c)) {
            return false;
        }
        i += 1;
        while b.get(i).is_some_and(|&c| lower_alnum(c)) {
            i += 1;
        }
        match b.get(i) {
            None => return true,
            Some(b'/' | b'.') => i += 1,
            Some(b'_') => {
                i += 1;
                if b.get(i) == Some(&b'_') {
                    i += 1;
                }
            }
            Some(b'-') => {
                while b.get(i) == Some(&b'-') {
                    i += 1;
                }
            }
            Some(_) => return false,
        }
    }
}

/// `(domain-name | "[" [a-fA-F0-9:]+ "]") (":" [0-9]+)?`
fn domain_and_port(s: &str) -> bool {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return false;
        };
        let inner = &rest[..end];
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
            return false;
        }
        (&s[..end + 2], &s[end + 2..])
    } else {
        match s.find(':') {
            Some(i) => (&s[..i], &s[i..]),
            None => (s, ""),
        }
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let host_ok = host.starts_with('[')
        || host.split('.').all(|c| {
            let b = c.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
        });
    port_ok && host_ok
}

/// `[\w][\w.-]{0,127}`
fn tag_pattern(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// `[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
fn digest_pattern(d: &str) -> bool {
    let Some(colon) = find_byte(b':', d.as_bytes()) else {
        return false;
    };
    let (algo, hex) = (&d.as_bytes()[..colon], &d.as_bytes()[colon + 1..]);
    // Whether the next byte starts a component (`[A-Za-z]` must follow).
    let mut start = true;
    for &b in algo {
        if matches!(b, b'-' | b'_' | b'+' | b'.') {
            if start {
                return false;
            }
            start = true;
        } else if start {
            if !b.is_ascii_alphabetic() {
                return false;
            }
            start = false;
        } else if !b.is_ascii_alphanumeric() {
            return false;
        }
    }
    !start && hex.len() >= 32 && all_bytes(hex, |b| b.is_ascii_hexdigit())
}

/// Whether every byte passes `f`, without stopping early (which lets the loop be vectorised).
#[inline]
fn all_bytes(b: &[u8], f: impl Fn(u8) -> bool) -> bool {
    b.iter().fold(true, |ok, &c| ok & f(c))
}

/// go-digest `Digest.Validate`: a known algorithm with its exact length of lowercase hex.
fn validate_digest(d: &str) -> Result<(), ImageRefError> {
    let (algo, hex) = d.split_once(':').unwrap_or((d, ""));
    let size = match algo {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => {
            // Unknown algorithms pass the format regexp (lowercase) or are refused as malformed.
            let lower_ok = algo
                .split(['-', '_', '+', '.'])
                .all(|c| !c.is_empty() && c.bytes().all(lower_alnum))
                && hex.bytes().all(|b| b.is_ascii_hexdigit());
            return if lower_ok {
                fail("unsupported digest algorithm")
            } else {
                fail("invalid checksum digest format")
            };
        }
    };
    if hex.len() != size * 2 {
        return fail("invalid checksum digest length");
    }
    if !all_bytes(hex.as_bytes(), |b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return fail("invalid checksum digest format");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Verdicts from containers/image `docker/reference` (`normalize.go` ParseNormalizedNamed,
    //! `reference.go` Parse, `regexp.go`) and opencontainers/go-digest `Digest.Validate`.
    use super::{ImageRefError, registry_host, split, validate};

    const D64: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn splits() {
        assert_eq!(split("quay.io/a/b:v1"), ("quay.io/a/b", Some("v1"), None));
        assert_eq!(
            split("localhost:5000/a/b"),
            ("localhost:5000/a/b", None, None)
        );
        assert_eq!(
            split("q.io/a:t@sha256:00"),
            ("q.io/a", Some("t"), Some("sha256:00"))
        );
        assert_eq!(registry_host("localhost/a"), Some("localhost"));
        assert_eq!(registry_host("127.0.0.1:5000/a"), Some("127.0.0.1:5000"));
        assert_eq!(registry_host("a/b"), None);
        assert_eq!(registry_host("quay.io"), None);
    }

    #[test]
    fn table() {
        let digest = format!("quay.io/a/b@sha256:{D64}");
        let tag_and_digest = format!("localhost:5000/a/b:v1@sha256:{D64}");
        let upper_hex = format!("quay.io/a/b@sha256:{}", D64.to_uppercase());
        let unknown_algo = format!("quay.io/a/b@md5:{D64}");
        let long_name = format!("quay.io/{}", "a".repeat(250));
        let table: Vec<(&str, Result<(), &str>)> = vec![
            ("busybox", Ok(())),
            ("busybox:latest", Ok(())),
            ("library/busybox", Ok(())),
            ("docker.io/library/busybox:1.36", Ok(())),
            ("quay.io/org/op:v1.0.0", Ok(())),
            ("registry.redhat.io/ubi9/ubi-minimal:9.4-1194", Ok(())),
            ("registry.example.com:5000/a/b-c__d.e:v1.2.3", Ok(())),
            ("localhost/foo", Ok(())),
            ("localhost:5000/foo", Ok(())),
            ("[::1]:5000/foo:bar", Ok(())),
            ("Quay.io/org/op", Ok(())),
            ("a---b/c", Ok(())),
            (&digest, Ok(())),
            (&tag_and_digest, Ok(())),
            ("foo:_tag", Ok(())),
            // SplitDockerDomain does not treat an uppercase first component as a domain.
            (
                "UPPER/case",
                Err("invalid reference format: repository name must be lowercase"),
            ),
            (
                "quay.io/Org/op",
                Err("invalid reference format: repository name must be lowercase"),
            ),
            (
                "Busybox",
                Err("invalid reference format: repository name must be lowercase"),
            ),
            ("", Err("invalid reference format")),
            ("a//b", Err("invalid reference format")),
            ("-a/b", Err("invalid reference format")),
            ("a/b:", Err("invalid reference format")),
            ("a/b:-tag", Err("invalid reference format")),
            ("foo:bad tag", Err("invalid reference format")),
            ("quay.io/a/b:t@", Err("invalid reference format")),
            ("foo@sha256:abc", Err("invalid reference format")),
            ("foo@sha256", Err("invalid reference format")),
            ("a_/b", Err("invalid reference format")),
            ("quay.io:/a", Err("invalid reference format")),
            ("http://quay.io/a", Err("invalid reference format")),
            (&upper_hex, Err("invalid checksum digest format")),
            (
                "quay.io/a/b@sha256:0123456789abcdef0123456789abcdef",
                Err("invalid checksum digest length"),
            ),
            (&unknown_algo, Err("unsupported digest algorithm")),
            (
                &long_name,
                Err("repository name must not be more than 255 characters"),
            ),
            (
                D64,
                Err(
                    "invalid repository name (0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef), cannot specify 64-byte hexadecimal strings",
                ),
            ),
        ];
        for (input, want) in table {
            assert_eq!(
                validate(input).map_err(|e| e.to_string()),
                want.map_err(str::to_string),
                "{input:?}"
            );
        }
    }

    /// The implementation `validate` replaced (it builds the normalised name), kept as the
    /// oracle of `same_verdicts_as_the_reference_implementation`.
    fn validate_reference_impl(s: &str) -> Result<(), ImageRefError> {
        reference::validate(s)
    }

    /// The previous implementation, verbatim.
    mod reference {
        use super::super::ImageRefError;

        fn fail<T>(msg: &str) -> Result<T, ImageRefError> {
            Err(ImageRefError(msg.to_string()))
        }

        /// Checks an image pull spec exactly as `reference.ParseNormalizedNamed` does.
        pub fn validate(s: &str) -> Result<(), ImageRefError> {
            if s.len() == 64 && s.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
                return Err(ImageRefError(format!(
                    "invalid repository name ({s}), cannot specify 64-byte hexadecimal strings"
                )));
            }
            let (domain, remainder) = split_docker_domain(s);
            let remote = remainder.split(':').next().unwrap_or_default();
            if remote.to_lowercase() != remote {
                return fail("invalid reference format: repository name must be lowercase");
            }
            parse(&format!("{domain}/{remainder}"))
        }

        /// `SplitDockerDomain`: the registry host, or `docker.io` with `library/` for official images.
        pub fn split_docker_domain(name: &str) -> (String, String) {
            let (mut domain, mut remainder) = match registry_host(name) {
                Some(host) => (host.to_string(), name[host.len() + 1..].to_string()),
                None => ("docker.io".to_string(), name.to_string()),
            };
            if domain == "index.docker.io" {
                domain = "docker.io".into();
            }
            if domain == "docker.io" && !remainder.contains('/') {
                remainder = format!("library/{remainder}");
            }
            (domain, remainder)
        }

        /// The registry host a reference names: its first component when that has a `.` or `:` or is
        /// `localhost` and a path follows (`SplitDockerDomain`'s rule).
        pub fn registry_host(reference: &str) -> Option<&str> {
            let (first, _) = reference.split_once('/')?;
            (first.contains(['.', ':']) || first == "localhost").then_some(first)
        }

        /// Splits `name[:tag][@digest]` without checking any part: the digest follows the first `@`,
        /// the tag the last `:` that has no `/` after it.
        pub fn split(reference: &str) -> (&str, Option<&str>, Option<&str>) {
            let (rest, digest) = match reference.split_once('@') {
                Some((r, d)) => (r, Some(d)),
                None => (reference, None),
            };
            let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
            match rest[last_slash..].rfind(':') {
                Some(i) => (
                    &rest[..last_slash + i],
                    Some(&rest[last_slash + i + 1..]),
                    digest,
                ),
                None => (rest, None, digest),
            }
        }

        /// `reference.Parse`: match the grammar, then the name length and the digest.
        fn parse(s: &str) -> Result<(), ImageRefError> {
            let Some((name, digest)) = match_reference(s) else {
                if s.is_empty() {
                    return fail("repository name must have at least one component");
                }
                if match_reference(&s.to_lowercase()).is_some() {
                    return fail("repository name must be lowercase");
                }
                return fail("invalid reference format");
            };
            if name.len() > 255 {
                return fail("repository name must not be more than 255 characters");
            }
            if let Some(d) = digest {
                validate_digest(d)?;
            }
            Ok(())
        }

        /// The anchored `ReferenceRegexp`: returns the name and the digest when `s` matches.
        fn match_reference(s: &str) -> Option<(&str, Option<&str>)> {
            // No `@` can appear before the digest, and none inside it; a tag follows the last `:` when
            // no `/` follows it (ports are always followed by a path).
            let (name, tag, digest) = split(s);
            if let Some(d) = digest
                && !digest_pattern(d)
            {
                return None;
            }
            if let Some(t) = tag
                && !tag_pattern(t)
            {
                return None;
            }
            name_pattern(name).then_some((name, digest))
        }

        /// `[domain-and-port "/"] path-component ("/" path-component)*`
        fn name_pattern(name: &str) -> bool {
            let parts: Vec<&str> = name.split('/').collect();
            if parts.iter().all(|p| path_component(p)) {
                return true;
            }
            parts.len() > 1
                && domain_and_port(parts[0])
                && parts[1..].iter().all(|p| path_component(p))
        }

        fn lower_alnum(b: u8) -> bool {
            b.is_ascii_lowercase() || b.is_ascii_digit()
        }

        /// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`
        fn path_component(s: &str) -> bool {
            let b = s.as_bytes();
            if b.is_empty() || !lower_alnum(b[0]) || !lower_alnum(b[b.len() - 1]) {
                return false;
            }
            let mut i = 0;
            while i < b.len() {
                if lower_alnum(b[i]) {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && !lower_alnum(b[i]) {
                    i += 1;
                }
                let sep = &s[start..i];
                if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-')) {
                    return false;
                }
            }
            true
        }

        /// `(domain-name | "[" [a-fA-F0-9:]+ "]") (":" [0-9]+)?`
        fn domain_and_port(s: &str) -> bool {
            let (host, port) = if let Some(rest) = s.strip_prefix('[') {
                let Some(end) = rest.find(']') else {
                    return false;
                };
                let inner = &rest[..end];
                if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
                    return false;
                }
                (&s[..end + 2], &s[end + 2..])
            } else {
                match s.find(':') {
                    Some(i) => (&s[..i], &s[i..]),
                    None => (s, ""),
                }
            };
            let port_ok = port.is_empty()
                || port
                    .strip_prefix(':')
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            let host_ok = host.starts_with('[')
                || host.split('.').all(|c| {
                    let b = c.as_bytes();
                    !b.is_empty()
                        && b[0].is_ascii_alphanumeric()
                        && b[b.len() - 1].is_ascii_alphanumeric()
                        && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
                });
            port_ok && host_ok
        }

        /// `[\w][\w.-]{0,127}`
        fn tag_pattern(t: &str) -> bool {
            let b = t.as_bytes();
            !b.is_empty()
                && b.len() <= 128
                && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
        }

        /// `[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
        fn digest_pattern(d: &str) -> bool {
            let Some((algo, hex)) = d.split_once(':') else {
                return false;
            };
            let algo_ok = algo.split(['-', '_', '+', '.']).all(|c| {
                let b = c.as_bytes();
                !b.is_empty()
                    && b[0].is_ascii_alphabetic()
                    && b.iter().all(u8::is_ascii_alphanumeric)
            });
            algo_ok && hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())
        }

        /// go-digest `Digest.Validate`: a known algorithm with its exact length of lowercase hex.
        fn validate_digest(d: &str) -> Result<(), ImageRefError> {
            let (algo, hex) = d.split_once(':').unwrap_or((d, ""));
            let size = match algo {
                "sha256" => 32,
                "sha384" => 48,
                "sha512" => 64,
                _ => {
                    // Unknown algorithms pass the format regexp (lowercase) or are refused as malformed.
                    let lower_ok = algo
                        .split(['-', '_', '+', '.'])
                        .all(|c| !c.is_empty() && c.bytes().all(lower_alnum))
                        && hex.bytes().all(|b| b.is_ascii_hexdigit());
                    return if lower_ok {
                        fail("unsupported digest algorithm")
                    } else {
                        fail("invalid checksum digest format")
                    };
                }
            };
            if hex.len() != size * 2 {
                return fail("invalid checksum digest length");
            }
            if !hex.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
                return fail("invalid checksum digest format");
            }
            Ok(())
        }
    }

    /// Every seed, and every variant of it with one character deleted, inserted or replaced
    /// (from characters that matter to the grammar, plus a non-ASCII uppercase letter).
    fn corpus() -> Vec<String> {
        let mut seeds: Vec<String> = [
            "busybox",
            "busybox:latest",
            "library/busybox",
            "docker.io/library/busybox:1.36",
            "docker.io/busybox",
            "index.docker.io/busybox:1",
            "index.docker.io/org/op:v1",
            "docker.io/kubegreen/kube-green:0.4.0",
            "quay.io/org/op:v1.0.0",
            "registry.redhat.io/ubi9/ubi-minimal:9.4-1194",
            "registry.example.com:5000/a/b-c__d.e:v1.2.3",
            "gcr.io/kubebuilder/kube-rbac-proxy:v0.12.0",
            "ghcr.io/a.b/c_d/e--f:1",
            "localhost/foo",
            "localhost:5000/foo",
            "localhost:5000/a",
            "localhost",
            "[::1]:5000/foo:bar",
            "[fe80::1]/foo",
            "127.0.0.1:5000/a/b",
            "Quay.io/org/op",
            "a---b/c",
            "foo:_tag",
            "UPPER/case",
            "quay.io/Org/op",
            "Busybox",
            "",
            "a//b",
            "-a/b",
            "a/b:",
            "a/b:-tag",
            "foo:bad tag",
            "quay.io/a/b:t@",
            "foo@sha256:abc",
            "foo@sha256",
            "a_/b",
            "quay.io:/a",
            "http://quay.io/a",
            "quay.io/a/b@sha256:0123456789abcdef0123456789abcdef",
            "q.io/a:t@sha256:00",
            "a@b.c/d",
            "quay.io/ÉÉ/x",
        ]
        .map(str::to_string)
        .to_vec();
        let d64 = D64;
        seeds.extend([
            d64.to_string(),
            format!("quay.io/community-operator-pipeline-prod/sailoperator@sha256:{d64}"),
            format!("quay.io/a/b@sha256:{d64}"),
            format!("localhost:5000/a/b:v1@sha256:{d64}"),
            format!("quay.io/a/b@sha256:{}", d64.to_uppercase()),
            format!("quay.io/a/b@md5:{d64}"),
            format!("busybox@sha512:{d64}{d64}"),
            format!("a/b@sha256+b64.x_y-z:{d64}"),
            format!("a/b:v1@x1+y2:{d64}"),
            format!("quay.io/{}", "a".repeat(250)),
            format!("quay.io/{}", "a".repeat(247)),
            // At the 255-character limit once `docker.io/` and `library/` are added.
            "a".repeat(237),
            format!("x/{}", "a".repeat(243)),
            format!("docker.io/{}", "a".repeat(237)),
            format!("index.docker.io/x/{}", "a".repeat(243)),
        ]);
        let alphabet: Vec<char> = "aZ09.-_:/@[]É ".chars().collect();
        let mut out = seeds.clone();
        for seed in &seeds {
            let chars: Vec<char> = seed.chars().collect();
            for i in 0..=chars.len() {
                if i < chars.len() {
                    let mut v = chars.clone();
                    v.remove(i);
                    out.push(v.into_iter().collect());
                }
                for &c in &alphabet {
                    let mut v = chars.clone();
                    v.insert(i, c);
                    out.push(v.into_iter().collect());
                    if i < chars.len() {
                        let mut v = chars.clone();
                        v[i] = c;
                        out.push(v.into_iter().collect());
                    }
                }
            }
        }
        out
    }

    #[test]
    fn same_verdicts_as_the_reference_implementation() {
        let corpus = corpus();
        assert!(corpus.len() > 10_000, "{}", corpus.len());
        let (mut ok, mut err) = (0, 0);
        for input in &corpus {
            let want = validate_reference_impl(input);
            if want.is_ok() {
                ok += 1;
            } else {
                err += 1;
            }
            assert_eq!(validate(input), want, "{input:?}");
        }
        // The corpus exercises both verdicts.
        assert!(ok > 1_000 && err > 1_000, "{ok} accepted, {err} refused");
    }
}
