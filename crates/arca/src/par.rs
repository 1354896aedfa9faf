//! Work shared between the cores: a map over items, and two jobs side by
//! side. A worker's panic is a bug and carries on in the caller: dropping
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
    #[should_panic(expected = "worker")]
    fn a_worker_panic_reaches_the_caller() {
        let _ = join(|| panic!("worker"), || 0);
    }
}
