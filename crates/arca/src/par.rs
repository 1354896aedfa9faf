//! Work shared between the cores: a map over items, a stream whose results
//! are consumed in order while later ones are still being made, and two
//! jobs side by side. A worker's panic is a bug and carries on in the caller: dropping
//! its result would hand back a hole (a chunk, a checksum list).

/// Map `f` over `items` on all cores; order is kept.
pub(crate) fn par_map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let per = items.len().div_ceil(threads);
    let mut groups: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut it = items.into_iter();
    loop {
        let g: Vec<T> = it.by_ref().take(per).collect();
        if g.is_empty() {
            break;
        }
        groups.push(g);
    }
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| s.spawn(move || g.into_iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            // A worker's panic is a bug; dropping its share of the results
            // would hand back a chunk-sized hole, so it carries on here.
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Run `a` on another thread and `b` on this one; both results.
///
/// Used where a large write or copy on this thread can overlap computing
/// on the other core.
pub(crate) fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    std::thread::scope(|s| {
        let h = s.spawn(a);
        let rb = b();
        let ra = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (ra, rb)
    })
}

/// Run `work` on every job on all cores and hand each result to `sink`
/// on this thread, in the jobs' order, as soon as it and every result
/// before it are made: the sink's work (file writes) overlaps the making
/// of later results. At most `window` results are made ahead of the sink,
/// which bounds the memory held. The first error of `sink` stops the
/// workers and is returned.
pub(crate) fn ordered<J: Sync, R: Send, E>(
    jobs: &[J],
    window: usize,
    work: impl Fn(&J) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{mpsc, Condvar, Mutex};

    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    if threads <= 1 {
        for (i, j) in jobs.iter().enumerate() {
            sink(i, work(j))?;
        }
        return Ok(());
    }
    let window = window.max(threads);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How many results the sink has taken, for workers to wait on.
    let taken = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    let work = &work;
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, taken) = (&next, &stop, &taken);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() {
                    return;
                }
                {
                    let mut t = taken.0.lock().unwrap_or_else(|e| e.into_inner());
                    while i >= *t + window && !stop.load(Ordering::Relaxed) {
                        t = taken.1.wait(t).unwrap_or_else(|e| e.into_inner());
                    }
                }
                if stop.load(Ordering::Relaxed) || tx.send((i, work(&jobs[i]))).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut ready = BTreeMap::new();
        let mut want = 0;
        let r = (|| {
            while want < jobs.len() {
                let Ok((i, r)) = rx.recv() else {
                    // Every worker ended early: one panicked, and the scope
                    // carries the panic on.
                    break;
                };
                ready.insert(i, r);
                while let Some(r) = ready.remove(&want) {
                    sink(want, r)?;
                    want += 1;
                    *taken.0.lock().unwrap_or_else(|e| e.into_inner()) = want;
                    taken.1.notify_all();
                }
            }
            Ok(())
        })();
        if r.is_err() {
            stop.store(true, Ordering::Relaxed);
            taken.1.notify_all();
        }
        drop(rx);
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_order_and_join_returns_both() {
        let v: Vec<u32> = (0..1000).collect();
        assert_eq!(
            par_map(v.clone(), |x| x * 2),
            v.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert_eq!(join(|| 1 + 1, || "b"), (2, "b"));
    }

    #[test]
    fn ordered_keeps_order_bounds_the_window_and_stops_on_error() {
        let jobs: Vec<u32> = (0..500).collect();
        let mut seen = vec![];
        let r: Result<(), ()> = ordered(
            &jobs,
            4,
            |x| x * 3,
            |i, v| {
                seen.push((i, v));
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(
            seen,
            (0..500).map(|i| (i as usize, i * 3)).collect::<Vec<_>>()
        );
        let made = std::sync::atomic::AtomicUsize::new(0);
        let r = ordered(
            &jobs,
            4,
            |x| {
                made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                *x
            },
            |i, _| if i == 10 { Err(i) } else { Ok(()) },
        );
        assert_eq!(r, Err(10));
        // Stopped within the window of the failure, not at the end.
        assert!(made.load(std::sync::atomic::Ordering::Relaxed) < 10 + 4 + 8);
    }

    #[test]
    #[should_panic(expected = "worker")]
    fn a_worker_panic_reaches_the_caller() {
        let _ = join(|| panic!("worker"), || 0);
    }
}
