//! A fast, non-cryptographic hasher (FxHash's word at a time, with a folded multiply) for hash
//! maps and sets keyed by names the program itself loaded, such as catalog package, channel
//! and bundle names.
//!
//! The standard library's SipHash resists hash flooding by untrusted keys, which costs most of
//! the time of lookups that run tens of thousands of times per catalog. Keys here come from the
//! files being checked, and the worst a colliding set of names can do is slow their own check
//! down, so a multiply per word is enough. The hash is fixed (unseeded): never let the
//! iteration order of such a map reach any output.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub type FastHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub type FastHashSet<T> = HashSet<T, BuildHasherDefault<FxHasher>>;

/// An empty [`FastHashMap`] with room for `capacity` entries.
pub fn map_with_capacity<K, V>(capacity: usize) -> FastHashMap<K, V> {
    FastHashMap::with_capacity_and_hasher(capacity, Default::default())
}

/// An empty [`FastHashSet`] with room for `capacity` items.
pub fn set_with_capacity<T>(capacity: usize) -> FastHashSet<T> {
    FastHashSet::with_capacity_and_hasher(capacity, Default::default())
}

/// One word of state: each input word is mixed in by a folded multiply (the 128-bit product's
/// halves xored), which carries a difference in any bit of the word into every bit of the
/// state. FxHash's plain multiply only carries bits upwards: names that differ in a word's
/// high bytes (`pkg.v1.0.0`, `pkg.v2.0.0`) then agree in all the low bits, and in the bits
/// the table keeps as tags.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        let product = u128::from(self.hash ^ word) * u128::from(K);
        self.hash = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::{FastHashMap, FxHasher, map_with_capacity, set_with_capacity};
    use std::hash::{BuildHasher, BuildHasherDefault};

    fn hash(s: &str) -> u64 {
        BuildHasherDefault::<FxHasher>::default().hash_one(s)
    }

    #[test]
    fn equal_keys_hash_equal_and_distinct_keys_apart() {
        assert_eq!(hash("quay.io/a/b"), hash("quay.io/a/b"));
        let keys = [
            "",
            "a",
            "a\0",
            "b",
            "ab",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
        ];
        let hashes: std::collections::BTreeSet<u64> = keys.iter().map(|k| hash(k)).collect();
        assert_eq!(hashes.len(), keys.len());
    }

    #[test]
    fn maps_and_sets_work_and_names_spread() {
        let keys: Vec<String> = (0..1000).map(|i| format!("pkg.v{i}.0.0")).collect();
        // Names that differ in a digit or two land on different hashes (a weak hash would
        // keep the maps correct but make every lookup a scan).
        let distinct: std::collections::BTreeSet<u64> = keys.iter().map(|k| hash(k)).collect();
        assert_eq!(distinct.len(), keys.len());
        let buckets: std::collections::BTreeSet<u64> = keys.iter().map(|k| hash(k) >> 54).collect();
        assert!(buckets.len() > 500, "top bits used: {}", buckets.len());
        let mut m: FastHashMap<&str, usize> = map_with_capacity(2);
        let mut s = set_with_capacity(1000);
        for (i, k) in keys.iter().enumerate() {
            m.insert(k.as_str(), i);
            assert!(s.insert(k.as_str()));
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m["pkg.v42.0.0"], 42);
        assert!(!s.insert("pkg.v7.0.0"));
    }
}
