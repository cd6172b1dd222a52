//! Go's `sort.Slice`, step for step: opm sorts each bundle's `relatedImages` by image with it,
//! and `sort.Slice` is not stable, so where two entries share an image the order they come out
//! in is whatever this algorithm leaves. Byte-identical output needs the same algorithm, not
//! just a sort: pattern-defeating quicksort (Go 1.19 and later, `sort/zsortfunc.go`) with
//! insertion sort for ranges of at most 12 elements, Tukey's ninther from 50, heapsort after
//! too many unbalanced partitions, and the xorshift scrambling of Go 1.24 and later.
//!
//! Index arithmetic follows the Go code literally, quirks included (`partial_insertion_sort`
//! shifts down to index 1 of the whole slice, not of the range), because they decide where
//! equal elements land.

/// Sorts `data` as Go's `sort.Slice(data, less)` does.
pub fn sort_slice<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let limit = bits_len(n);
    let mut d = Data { data, less };
    pdqsort(&mut d, 0, n, limit);
}

struct Data<'a, T, F> {
    data: &'a mut [T],
    less: F,
}

impl<T, F: Fn(&T, &T) -> bool> Data<'_, T, F> {
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }
}

/// Go's `bits.Len`: the number of bits needed to represent `x` (0 for 0).
fn bits_len(x: usize) -> usize {
    (usize::BITS - x.leading_zeros()) as usize
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

/// Go's `xorshift` (`sort/sort.go`): the 64-bit triple 13, 7, 17.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn next_power_of_two(length: usize) -> usize {
    1 << bits_len(length)
}

fn insertion_sort<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, a: usize, b: usize) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && d.less(j, j - 1) {
            d.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sift_down<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, lo: usize, hi: usize, first: usize) {
    let mut root = lo;
    loop {
        let mut child = 2 * root + 1;
        if child >= hi {
            return;
        }
        if child + 1 < hi && d.less(first + child, first + child + 1) {
            child += 1;
        }
        if !d.less(first + root, first + child) {
            return;
        }
        d.swap(first + root, first + child);
        root = child;
    }
}

fn heap_sort<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, a: usize, b: usize) {
    let first = a;
    let hi = b - a;
    for i in (0..=(hi.saturating_sub(1)) / 2).rev() {
        sift_down(d, i, hi, first);
    }
    for i in (0..hi).rev() {
        d.swap(first, first + i);
        sift_down(d, 0, i, first);
    }
}

fn pdqsort<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, mut a: usize, mut b: usize, limit: usize) {
    const MAX_INSERTION: usize = 12;
    let mut limit = limit;
    let mut was_balanced = true;
    let mut was_partitioned = true;
    loop {
        let length = b - a;
        if length <= MAX_INSERTION {
            insertion_sort(d, a, b);
            return;
        }
        if limit == 0 {
            heap_sort(d, a, b);
            return;
        }
        if !was_balanced {
            break_patterns(d, a, b);
            limit -= 1;
        }
        let (mut pivot, mut hint) = choose_pivot(d, a, b);
        if hint == Hint::Decreasing {
            reverse_range(d, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = Hint::Increasing;
        }
        if was_balanced
            && was_partitioned
            && hint == Hint::Increasing
            && partial_insertion_sort(d, a, b)
        {
            return;
        }
        if a > 0 && !d.less(a - 1, pivot) {
            a = partition_equal(d, a, b, pivot);
            continue;
        }
        let (mid, already) = partition(d, a, b, pivot);
        was_partitioned = already;
        let (left, right) = (mid - a, b - mid);
        let balance_threshold = length / 8;
        if left < right {
            was_balanced = left >= balance_threshold;
            pdqsort(d, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right >= balance_threshold;
            pdqsort(d, mid + 1, b, limit);
            b = mid;
        }
    }
}

fn partition<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<T, F>,
    a: usize,
    b: usize,
    pivot: usize,
) -> (usize, bool) {
    d.swap(a, pivot);
    // Go's i and j are ints and j may pass below i; i starts at a+1 >= 1 so j >= a >= 0.
    let (mut i, mut j) = (a + 1, b - 1);
    while i <= j && d.less(i, a) {
        i += 1;
    }
    while i <= j && !d.less(j, a) {
        j -= 1;
    }
    if i > j {
        d.swap(j, a);
        return (j, true);
    }
    d.swap(i, j);
    i += 1;
    j -= 1;
    loop {
        while i <= j && d.less(i, a) {
            i += 1;
        }
        while i <= j && !d.less(j, a) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
    d.swap(j, a);
    (j, false)
}

fn partition_equal<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<T, F>,
    a: usize,
    b: usize,
    pivot: usize,
) -> usize {
    d.swap(a, pivot);
    let (mut i, mut j) = (a + 1, b - 1);
    loop {
        while i <= j && !d.less(a, i) {
            i += 1;
        }
        while i <= j && d.less(a, j) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
    i
}

fn partial_insertion_sort<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<T, F>,
    a: usize,
    b: usize,
) -> bool {
    const MAX_STEPS: usize = 5;
    const SHORTEST_SHIFTING: usize = 50;
    let mut i = a + 1;
    for _ in 0..MAX_STEPS {
        while i < b && !d.less(i, i - 1) {
            i += 1;
        }
        if i == b {
            return true;
        }
        if b - a < SHORTEST_SHIFTING {
            return false;
        }
        d.swap(i, i - 1);
        // Shift the smaller one to the left (Go stops at index 1 of the whole slice).
        if i - a >= 2 {
            let mut j = i - 1;
            while j >= 1 {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
                j -= 1;
            }
        }
        // Shift the greater one to the right.
        if b - i >= 2 {
            for j in i + 1..b {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
            }
        }
    }
    false
}

fn break_patterns<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, a: usize, b: usize) {
    let length = b - a;
    if length >= 8 {
        let mut random = XorShift(length as u64);
        let modulus = next_power_of_two(length);
        let from = a + (length / 4) * 2 - 1;
        for idx in from..=a + (length / 4) * 2 + 1 {
            let mut other = (random.next() as usize) & (modulus - 1);
            if other >= length {
                other -= length;
            }
            d.swap(idx, a + other);
        }
    }
}

fn choose_pivot<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, a: usize, b: usize) -> (usize, Hint) {
    const SHORTEST_NINTHER: usize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0;
    let mut i = a + l / 4;
    let mut j = a + l / 4 * 2;
    let mut k = a + l / 4 * 3;
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median_adjacent(d, i, &mut swaps);
            j = median_adjacent(d, j, &mut swaps);
            k = median_adjacent(d, k, &mut swaps);
        }
        j = median(d, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, Hint::Increasing),
        MAX_SWAPS => (j, Hint::Decreasing),
        _ => (j, Hint::Unknown),
    }
}

fn order2<T, F: Fn(&T, &T) -> bool>(
    d: &Data<T, F>,
    a: usize,
    b: usize,
    swaps: &mut usize,
) -> (usize, usize) {
    if d.less(b, a) {
        *swaps += 1;
        return (b, a);
    }
    (a, b)
}

fn median<T, F: Fn(&T, &T) -> bool>(
    d: &Data<T, F>,
    a: usize,
    b: usize,
    c: usize,
    swaps: &mut usize,
) -> usize {
    let (a, b) = order2(d, a, b, swaps);
    let (b, c) = order2(d, b, c, swaps);
    let _ = c;
    let (_a, b) = order2(d, a, b, swaps);
    b
}

fn median_adjacent<T, F: Fn(&T, &T) -> bool>(d: &Data<T, F>, a: usize, swaps: &mut usize) -> usize {
    median(d, a - 1, a, a + 1, swaps)
}

fn reverse_range<T, F: Fn(&T, &T) -> bool>(d: &mut Data<T, F>, a: usize, b: usize) {
    let (mut i, mut j) = (a, b - 1);
    while i < j {
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorts `(key, tag)` pairs by key alone and returns the tags in the order Go leaves them.
    fn tags_after_sort(keys: &[u32]) -> Vec<usize> {
        let mut v: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
        sort_slice(&mut v, |a, b| a.0 < b.0);
        v.into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn up_to_twelve_elements_is_insertion_sort_so_ties_keep_their_order() {
        assert_eq!(tags_after_sort(&[2, 1, 2, 1, 0]), vec![4, 1, 3, 0, 2]);
        let twelve = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            tags_after_sort(&twelve),
            vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0]
        );
    }

    /// Traced by hand through Go's pdqsort_func: thirteen elements, the first one greater.
    /// The median of positions 3, 6, 9 is 6 (no swaps: an increasing hint); the partial
    /// insertion sort gives up at once (fewer than 50 elements); partitioning around
    /// element 6 swaps it to the front, every other element is >= it, so the split is at 0
    /// and the remaining twelve go through insertion sort. Element 6 ends up first.
    #[test]
    fn thirteen_elements_move_the_pivot_to_the_front() {
        let keys = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            tags_after_sort(&keys),
            vec![6, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 0]
        );
    }

    /// Traced by hand: strictly decreasing keys with one tie at the end. The median of
    /// 3, 6, 9 takes three swaps (unknown hint) and picks 6; the partition swaps 1<->12,
    /// 2<->11, 3<->10, 4<->9, 5<->8, 6<->7 around it and puts the tied pair in the order
    /// 12, 11, which insertion sort of the left part keeps.
    #[test]
    fn partitioning_reverses_a_tied_pair() {
        let keys = [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1];
        assert_eq!(
            tags_after_sort(&keys),
            vec![12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
        );
    }

    /// Traced by hand (xorshift values computed: 0x68d37469a, 0xa0069a5cb801ce97,
    /// 0x5d27e6e7294488ca, low five bits 26, 23, 10): 27 elements, the first greater. The
    /// first partition splits at 0 (unbalanced), so the rest goes through break_patterns
    /// (swaps 12<->1, 13<->24, 14<->11), then, the element before the range being equal to
    /// the pivot (13), through partition_equal, which swaps 1<->13 and 13<->26.
    #[test]
    fn an_unbalanced_split_breaks_patterns_then_partitions_equal_elements() {
        let mut keys = [0; 27];
        keys[0] = 1;
        assert_eq!(
            tags_after_sort(&keys),
            vec![
                12, 24, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 1, 26, 11, 15, 16, 17, 18, 19, 20, 21, 22,
                23, 13, 25, 0
            ]
        );
    }

    /// Traced by hand: 50 decreasing keys (ties at both ends). Tukey's ninther makes twelve
    /// swaps, a decreasing hint, so the range is reversed and is then sorted: the partial
    /// insertion sort finds nothing to do. Both tied pairs come out reversed.
    #[test]
    fn fifty_decreasing_elements_are_reversed() {
        let mut keys: Vec<u32> = (0..50).map(|i| 49 - i).collect();
        keys[1] = 49;
        keys[49] = 1;
        let want: Vec<usize> = (0..50).rev().collect();
        assert_eq!(tags_after_sort(&keys), want);
    }

    #[test]
    fn any_input_comes_out_sorted_and_whole() {
        let mut r = XorShift(0x9e37_79b9_7f4a_7c15);
        for n in [0, 1, 2, 13, 40, 49, 50, 51, 200, 1000] {
            for spread in [1, 3, 1000] {
                let keys: Vec<u32> = (0..n).map(|_| (r.next() % spread) as u32).collect();
                let tags = tags_after_sort(&keys);
                let mut seen = tags.clone();
                seen.sort();
                assert_eq!(seen, (0..n as usize).collect::<Vec<_>>());
                assert!(tags.windows(2).all(|w| keys[w[0]] <= keys[w[1]]));
            }
        }
        // Already sorted, and sorted in reverse: the patterns pdqsort detects.
        let sorted: Vec<u32> = (0..300).collect();
        assert_eq!(tags_after_sort(&sorted), (0..300).collect::<Vec<_>>());
        let reversed: Vec<u32> = (0..300).rev().collect();
        assert_eq!(
            tags_after_sort(&reversed),
            (0..300).rev().collect::<Vec<_>>()
        );
    }
}
