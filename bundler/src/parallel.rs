//! Ordered parallel map on scoped threads, one worker per core: the loaders, the cache digest
//! and the server's index build all fan work out over files or bundles this way and need the
//! results back in input order (output must not depend on scheduling).

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on all cores; results in the order of `items`.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        out.push((i, f(item)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(out) => out,
                // A worker panicked: re-raise it here rather than return a short result.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// `f` applied to every item on all cores, each result handed to `consume` on this thread in
/// the order of `items` as soon as it and every result before it are done. At most `window`
/// results are computed ahead of the one `consume` waits for, so memory stays bounded however
/// many items there are (the server's cache build streams a catalog's files through this).
pub fn for_each_ordered<T: Sync, R: Send>(
    items: &[T],
    window: usize,
    f: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(R),
) {
    use std::collections::BTreeMap;
    use std::sync::{Condvar, Mutex};
    type Outcome<R> = std::thread::Result<R>;
    struct State<R> {
        next: usize,
        consumed: usize,
        done: BTreeMap<usize, Outcome<R>>,
    }
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len());
    if workers <= 1 {
        items.iter().map(f).for_each(consume);
        return;
    }
    let window = window.max(workers);
    let state = Mutex::new(State {
        next: 0,
        consumed: 0,
        done: BTreeMap::new(),
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut st = lock();
                        while st.next < items.len() && st.next >= st.consumed + window {
                            st = changed.wait(st).unwrap_or_else(|p| p.into_inner());
                        }
                        if st.next >= items.len() {
                            return;
                        }
                        st.next += 1;
                        st.next - 1
                    };
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&items[i])));
                    lock().done.insert(i, r);
                    changed.notify_all();
                }
            });
        }
        for i in 0..items.len() {
            let r = {
                let mut st = lock();
                loop {
                    if let Some(r) = st.done.remove(&i) {
                        st.consumed = i + 1;
                        break r;
                    }
                    st = changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            };
            changed.notify_all();
            let outcome = r.and_then(|r| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| consume(r)))
            });
            // A worker or `consume` panicked: stop the workers and re-raise it here.
            if let Err(panic) = outcome {
                lock().next = items.len();
                changed.notify_all();
                std::panic::resume_unwind(panic)
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_input_order() {
        let items: Vec<u64> = (0..1000).collect();
        let out = super::map(&items, |n| n * 2);
        assert_eq!(out, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        assert!(super::map(&[] as &[u8], |b| *b).is_empty());
    }

    #[test]
    fn streams_in_input_order_within_the_window() {
        let items: Vec<u64> = (0..500).collect();
        let mut seen = Vec::new();
        super::for_each_ordered(&items, 3, |n| n * 2, |r| seen.push(r));
        assert_eq!(seen, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        let mut none = 0;
        super::for_each_ordered(&[] as &[u8], 3, |b| *b, |_| none += 1);
        assert_eq!(none, 0);
    }

    #[test]
    #[should_panic(expected = "item 7")]
    fn a_worker_panic_reaches_the_caller() {
        let items: Vec<u64> = (0..50).collect();
        super::for_each_ordered(
            &items,
            4,
            |n| {
                assert_ne!(*n, 7, "item 7");
                *n
            },
            |_| {},
        );
    }
}
