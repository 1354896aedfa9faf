//! The free lists: sizes and contents of reused objects, limits, the
//! pooling switch, and that lists never mix their objects.

use std::sync::Mutex;

use arca::pool::{ArrayList, BlockList, ObjectList, Recycle};
use arca::{DatasetOptions, Datatype, File, Filter, PoolLimits, Selection};

/// Tests that change process-wide settings (limits, the switch) run one at a time.
static SETTINGS: Mutex<()> = Mutex::new(());

fn settings() -> std::sync::MutexGuard<'static, ()> {
    SETTINGS.lock().unwrap_or_else(|e| e.into_inner())
}

fn stats(name: &str) -> arca::PoolStats {
    arca::pool_stats()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no list {name}"))
}

#[test]
fn reused_blocks_have_the_requested_size_and_are_cleared() {
    let _g = settings();
    static L: BlockList = BlockList::new("test sizes");
    for len in [1usize, 100, 512, 1000, 4096, 5000, 70_000] {
        let mut b = L.take_zeroed(len);
        b.fill(0xAB);
        b.extend_from_slice(&[1, 2, 3]);
        drop(b);
        let again = L.take_zeroed(len);
        assert_eq!(again.len(), len);
        assert!(again.iter().all(|&x| x == 0), "len {len}");
        drop(again);
        let empty = L.take_empty(len);
        assert!(empty.is_empty());
        assert!(empty.capacity() >= len);
        let copy = L.take_copy(&vec![7u8; len]);
        assert_eq!(copy.len(), len);
        assert!(copy.iter().all(|&x| x == 7));
    }
    let s = stats("test sizes");
    assert!(s.hits > 0, "{s:?}");
    assert_eq!(s.in_use, 0);
}

#[test]
fn reused_arrays_and_objects_come_back_empty() {
    let _g = settings();
    static A: ArrayList<u64> = ArrayList::new("test arrays");
    let mut v = A.take(10);
    v.extend(0..10);
    drop(v);
    let v = A.take(10);
    assert!(v.is_empty() && v.capacity() >= 10);
    assert_eq!(&A.take_filled(3, 9)[..], &[9, 9, 9]);

    #[derive(Default)]
    struct Scratch {
        items: Vec<u32>,
        label: String,
    }
    impl Recycle for Scratch {
        fn recycle(&mut self) {
            self.items.clear();
            self.label.clear();
        }
        fn heap_bytes(&self) -> usize {
            self.items.capacity() * 4 + self.label.capacity()
        }
    }
    static O: ObjectList<Scratch> = ObjectList::new("test objects");
    let mut s = O.take();
    s.items.extend([1, 2, 3]);
    s.label.push_str("dirty");
    drop(s);
    let s = O.take();
    assert!(s.items.is_empty() && s.label.is_empty());
    assert!(s.items.capacity() >= 3, "capacity is kept for reuse");
    assert_eq!(stats("test objects").hits, 1);
}

#[test]
fn lists_never_serve_each_others_objects() {
    let _g = settings();
    static A: BlockList = BlockList::new("test owner a");
    static B: BlockList = BlockList::new("test owner b");
    static U32S: ArrayList<u32> = ArrayList::new("test u32 arrays");
    static U64S: ArrayList<u64> = ArrayList::new("test u64 arrays");
    let a = A.take_zeroed(2048);
    assert_eq!(a.list_name(), Some("test owner a"));
    drop(a);
    drop(U32S.take(64));
    let held_b = stats_or_default("test owner b").held;
    // B has never been given anything: a request misses even though A
    // holds a block of the same class.
    let b = B.take_zeroed(2048);
    assert_eq!(b.list_name(), Some("test owner b"));
    assert_eq!(stats("test owner b").hits, 0);
    assert_eq!(stats("test owner b").held, held_b);
    assert_eq!(stats("test owner a").held, 1);
    drop(b);
    // Returning to B leaves A untouched.
    assert_eq!(stats("test owner a").held, 1);
    assert_eq!(stats("test owner b").held, 1);
    // Element types are separate lists too.
    drop(U64S.take(64));
    assert_eq!(stats("test u64 arrays").hits, 0);
    assert_eq!(stats("test u32 arrays").held, 1);
}

#[test]
fn limits_hold_per_list_and_in_total() {
    let _g = settings();
    static L: BlockList = BlockList::new("test limits");
    static M: BlockList = BlockList::new("test limits other");
    let old = arca::pool_limits();
    arca::set_pool_limits(PoolLimits {
        per_list: 64 << 10,
        total: old.total,
    });
    let blocks: Vec<_> = (0..40).map(|_| L.take_zeroed(8192)).collect();
    drop(blocks);
    let s = stats("test limits");
    assert!(s.held_bytes <= 64 << 10, "{s:?}");
    assert!(s.held >= 1);
    assert!(s.released >= 30, "{s:?}");

    // The total: everything the lists hold, together.
    arca::gc();
    arca::set_pool_limits(PoolLimits {
        per_list: 1 << 20,
        total: 96 << 10,
    });
    let a: Vec<_> = (0..10).map(|_| L.take_zeroed(8192)).collect();
    let b: Vec<_> = (0..10).map(|_| M.take_zeroed(8192)).collect();
    drop(a);
    drop(b);
    let held: usize = arca::pool_stats().iter().map(|s| s.held_bytes).sum();
    assert!(held <= 96 << 10, "{held}");

    // Lowering a limit trims at once.
    arca::set_pool_limits(PoolLimits {
        per_list: 8192,
        total: old.total,
    });
    assert!(arca::pool_stats().iter().all(|s| s.held_bytes <= 8192));
    arca::set_pool_limits(old);
}

#[test]
fn gc_empties_every_list_and_objects_in_use_still_return() {
    let _g = settings();
    static L: BlockList = BlockList::new("test gc");
    let kept = L.take_zeroed(4096);
    drop(L.take_zeroed(4096));
    drop(L.take_zeroed(100_000));
    assert!(stats("test gc").held_bytes >= 4096);
    let released = arca::gc();
    assert!(released >= 4096 + 100_000, "{released}");
    assert!(arca::pool_stats()
        .iter()
        .all(|s| s.held == 0 && s.held_bytes == 0));
    drop(kept);
    let s = stats("test gc");
    assert_eq!((s.held, s.in_use), (1, 0));
}

#[test]
fn pooling_off_keeps_nothing() {
    let _g = settings();
    static L: BlockList = BlockList::new("test switch");
    arca::set_pooling(false);
    let before = stats_or_default("test switch");
    for _ in 0..5 {
        drop(L.take_zeroed(1000));
    }
    let s = stats("test switch");
    assert_eq!(s.held, 0);
    assert_eq!(s.hits, before.hits);
    assert!(s.released >= before.released + 5);
    arca::set_pooling(true);
    drop(L.take_zeroed(1000));
    assert_eq!(stats("test switch").held, 1);
}

fn stats_or_default(name: &str) -> arca::PoolStats {
    arca::pool_stats()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or(arca::PoolStats {
            name: "",
            kind: arca::PoolKind::Block,
            held: 0,
            held_bytes: 0,
            in_use: 0,
            hits: 0,
            misses: 0,
            released: 0,
        })
}

#[test]
fn lists_are_shared_safely_between_threads() {
    static L: BlockList = BlockList::new("test threads");
    static A: ArrayList<u64> = ArrayList::new("test thread arrays");
    std::thread::scope(|s| {
        for t in 0..4u8 {
            s.spawn(move || {
                for i in 0..500usize {
                    let mut b = L.take_zeroed(64 + (i % 7) * 300);
                    assert!(b.iter().all(|&x| x == 0));
                    b.fill(t + 1);
                    let mut v = A.take(i % 33);
                    assert!(v.is_empty());
                    v.push(i as u64);
                }
            });
        }
    });
    assert_eq!(stats("test threads").in_use, 0);
    assert_eq!(stats("test thread arrays").in_use, 0);
}

/// Data written and read back is the same whether pooling is on or off,
/// and the library's own lists are used by chunked I/O.
#[test]
fn chunked_io_is_the_same_with_pools_on_and_off() {
    let _g = settings();
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![];
    for (k, on) in [true, false, true].into_iter().enumerate() {
        arca::set_pooling(on);
        let path = dir.path().join(format!("p{k}.arca"));
        let f = File::create(&path).unwrap();
        for (i, filters) in [
            vec![Filter::Shuffle, Filter::Zstd(1)],
            vec![Filter::Deflate(4)],
            vec![Filter::Shuffle, Filter::Lz4],
            vec![],
        ]
        .iter()
        .enumerate()
        {
            let opts = DatasetOptions::new(Datatype::parse("<f8").unwrap(), &[40, 30])
                .chunks(&[16, 8])
                .filters(filters);
            let ds = f.root().create_dataset(&format!("d{i}"), &opts).unwrap();
            for round in 0..3u32 {
                let data: Vec<f64> = (0..1200).map(|j| (j % 97 + round) as f64).collect();
                ds.write_all(&data).unwrap();
                let part = Selection::from_ranges(&[(3, 37, 5), (1, 29, 3)]).unwrap();
                let vals: Vec<f64> = (0..part.len()).map(|j| j as f64 * -1.5).collect();
                ds.write(&part, &vals).unwrap();
                assert_eq!(ds.read::<f64>(&part).unwrap(), vals);
            }
        }
        f.close().unwrap();
        files.push(path);
    }
    arca::set_pooling(true);
    let read_all = |p: &std::path::Path| -> Vec<Vec<f64>> {
        let f = File::open(p).unwrap();
        (0..4)
            .map(|i| {
                f.root()
                    .dataset(&format!("d{i}"))
                    .unwrap()
                    .read_all()
                    .unwrap()
            })
            .collect()
    };
    let first = read_all(&files[0]);
    for p in &files[1..] {
        assert_eq!(read_all(p), first);
    }
    let used: Vec<_> = arca::pool_stats()
        .into_iter()
        .filter(|s| s.hits > 0)
        .map(|s| s.name)
        .collect();
    for name in ["pages", "chunk buffers", "filter buffers", "B-tree nodes"] {
        assert!(used.contains(&name), "{name} unused: {used:?}");
    }
}
