//! Ordered parallel map on scoped threads, one worker per core: the loaders, the cache digest
//! and the server's index build all fan work out over files or bundles this way and need the
//! results back in input order (output must not depend on scheduling).

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on all cores; results in the order of `items`.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_in_order(items, None, f)
}

/// [`map`], handing the items out heaviest first (by `weight`, ties in input order) so that a
/// big item met last does not leave the other cores idle while one works through it; the
/// results are still in the order of `items`.
pub fn map_heaviest_first<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> u64,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let order = heaviest_first(items.iter().map(weight));
    map_in_order(items, Some(&order), f)
}

/// The indices of `weights`, heaviest first, ties in input order.
fn heaviest_first(weights: impl Iterator<Item = u64>) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = weights.zip(0..).collect();
    order.sort_unstable_by_key(|&(w, i)| (std::cmp::Reverse(w), i));
    order.into_iter().map(|(_, i)| i).collect()
}

/// [`map`] with the items handed out in `order` (a permutation of their indices; `None`: in
/// input order).
fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    order: Option<&[usize]>,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
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
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= items.len() {
                            break;
                        }
                        let i = order.map_or(k, |o| o[k]);
                        out.push((i, f(&items[i])));
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
    let done = try_for_each_ordered(items, window, f, |r| {
        consume(r);
        Ok::<(), std::convert::Infallible>(())
    });
    match done {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// [`for_each_ordered`] where `consume` may fail: its first error stops the work (items not
/// yet started are not computed) and is returned.
pub fn try_for_each_ordered<T: Sync, R: Send, E>(
    items: &[T],
    window: usize,
    f: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    use std::collections::BTreeMap;
    use std::sync::{Condvar, Mutex};
    type Outcome<R> = std::thread::Result<R>;
    struct State<R> {
        next: usize,
        consumed: usize,
        done: BTreeMap<usize, Outcome<R>>,
    }
    // No more workers than results may be ahead: the window bounds memory.
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len())
        .min(window);
    if workers <= 1 {
        return items.iter().map(f).try_for_each(consume);
    }
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
            let stop = || {
                lock().next = items.len();
                changed.notify_all();
            };
            match outcome {
                Ok(Ok(())) => {}
                // `consume` failed: stop the workers (they finish the items they hold).
                Ok(Err(e)) => {
                    stop();
                    return Err(e);
                }
                // A worker or `consume` panicked: stop the workers and re-raise it here.
                Err(panic) => {
                    stop();
                    std::panic::resume_unwind(panic)
                }
            }
        }
        Ok(())
    })
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
    fn heaviest_items_are_handed_out_first() {
        assert_eq!(
            super::heaviest_first([3, 9, 1, 9, 0].into_iter()),
            [1, 3, 0, 2, 4]
        );
        assert!(super::heaviest_first(std::iter::empty()).is_empty());
    }

    #[test]
    fn heaviest_first_keeps_input_order_and_runs_each_item_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // (index, weight): weights out of input order, with ties.
        let items: Vec<(usize, u64)> = (0..300).map(|i| (i, (i as u64 * 7919) % 101)).collect();
        let runs: Vec<AtomicUsize> = items.iter().map(|_| AtomicUsize::new(0)).collect();
        let out = super::map_heaviest_first(
            &items,
            |&(_, w)| w,
            |&(i, w)| {
                runs[i].fetch_add(1, Ordering::Relaxed);
                (i, w * 3)
            },
        );
        let expected: Vec<_> = items.iter().map(|&(i, w)| (i, w * 3)).collect();
        assert_eq!(out, expected);
        assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
        assert!(super::map_heaviest_first(&[] as &[u8], |_| 0, |b| *b).is_empty());
        assert_eq!(super::map_heaviest_first(&[5u8], |_| 0, |b| *b), vec![5]);
    }

    #[test]
    #[should_panic(expected = "item 3")]
    fn heaviest_first_passes_a_panic_on() {
        let items: Vec<u64> = (0..20).collect();
        super::map_heaviest_first(
            &items,
            |n| *n,
            |n| {
                assert_ne!(*n, 3, "item 3");
                *n
            },
        );
    }

    #[test]
    fn the_first_consume_error_stops_the_work() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<u64> = (0..1000).collect();
        let computed = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let r = super::try_for_each_ordered(
            &items,
            4,
            |n| {
                computed.fetch_add(1, Ordering::Relaxed);
                *n
            },
            |n| {
                if n == 10 {
                    return Err(format!("stop at {n}"));
                }
                seen.push(n);
                Ok(())
            },
        );
        assert_eq!(r, Err("stop at 10".to_string()));
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        // Nothing beyond the window (and what the workers held) was computed.
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(computed.load(Ordering::Relaxed) <= 11 + 4.max(workers) + workers);
        let mut all = Vec::new();
        let ok = super::try_for_each_ordered(
            &items,
            2,
            |n| n + 1,
            |n| {
                all.push(n);
                Ok::<(), ()>(())
            },
        );
        assert_eq!(ok, Ok(()));
        assert_eq!(all, items.iter().map(|n| n + 1).collect::<Vec<_>>());
    }

    #[test]
    fn streams_in_input_order_within_the_window() {
        let items: Vec<u64> = (0..500).collect();
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Results computed and not yet consumed: the one being consumed and at most the window
        // ahead of it.
        let (ahead, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut seen = Vec::new();
        super::for_each_ordered(
            &items,
            3,
            |n| {
                let now = ahead.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                n * 2
            },
            |r| {
                ahead.fetch_sub(1, Ordering::SeqCst);
                seen.push(r);
            },
        );
        assert_eq!(seen, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= 3 + 1, "{most:?}");
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
