//! Container image references (`[registry[:port]/]path[:tag][@algo:hex]`), checked the way the
//! distribution reference grammar does, for catalog `image` and `relatedImages` fields.

fn is_alnum_lower(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// A path component: `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn path_component(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !is_alnum_lower(b[0]) || !is_alnum_lower(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if is_alnum_lower(b[i]) {
            i += 1;
            continue;
        }
        // a separator run
        let start = i;
        while i < b.len() && !is_alnum_lower(b[i]) {
            i += 1;
        }
        let sep = &s[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn domain(s: &str) -> bool {
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) if !h.starts_with('[') || h.ends_with(']') => (h, Some(p)),
        _ => (s, None),
    };
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    if host.starts_with('[') && host.ends_with(']') {
        return host.len() > 2;
    }
    !host.is_empty()
        && host.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        })
}

/// Checks an image pull spec; the error says what is wrong.
pub fn validate(reference: &str) -> Result<(), String> {
    if reference.is_empty() {
        return Err("repository name must have at least one component".into());
    }
    let (rest, digest) = match reference.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (reference, None),
    };
    if let Some(d) = digest {
        let Some((algo, hex)) = d.split_once(':') else {
            return Err("invalid digest format".into());
        };
        let algo_ok = !algo.is_empty()
            && algo
                .split(['+', '.', '_', '-'])
                .all(|p| !p.is_empty() && p.bytes().all(is_alnum_lower));
        if !algo_ok || hex.len() < 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err("invalid digest format".into());
        }
        if algo == "sha256" && hex.len() != 64 {
            return Err("invalid checksum digest length".into());
        }
    }
    let last_slash = rest.rfind('/').map(|i| i + 1).unwrap_or(0);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let b = t.as_bytes();
        let ok = !b.is_empty()
            && b.len() <= 128
            && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
        if !ok {
            return Err("invalid reference format".into());
        }
    }
    if name.is_empty() {
        return Err("invalid reference format".into());
    }
    if name.len() > 255 {
        return Err("repository name must not be more than 255 characters".into());
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    if parts.len() > 1 {
        let first = parts[0];
        if first.contains(['.', ':']) || first == "localhost" {
            if !domain(first) {
                return Err("invalid reference format".into());
            }
            parts.remove(0);
        }
    }
    for p in parts {
        if !path_component(p) {
            if p.bytes().any(|c| c.is_ascii_uppercase()) {
                return Err("invalid reference format: repository name must be lowercase".into());
            }
            return Err("invalid reference format".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn accepts_real_references() {
        for r in [
            "quay.io/openshift-community-operators/kube-green@sha256:0f27e1d5b9bd2e1e8bb7fa2f2b0a1e5c7d1c4e8e5a7b2f0d9c6e3a1b4c5d6e7f",
            "registry.example.com:5000/a/b-c__d.e:v1.2.3",
            "localhost/foo",
            "busybox",
            "docker.io/library/busybox:latest",
            "[::1]:5000/foo:bar",
        ] {
            assert!(validate(r).is_ok(), "{r}: {:?}", validate(r));
        }
    }

    #[test]
    fn rejects_bad_references() {
        for r in [
            "",
            "Quay.io/Foo/Bar",
            "quay.io/foo/Bar:1",
            "foo:bad tag",
            "foo@sha256:abc",
            "foo@sha256",
            "a//b",
            "-a/b",
        ] {
            assert!(validate(r).is_err(), "{r}");
        }
    }
}
