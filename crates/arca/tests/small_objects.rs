//! Small objects: pages sized to what they hold, compact datasets, space
//! reused within a transaction, and files of format version 1.

use arca::{
    AttrValue, ByteOrder, DatasetOptions, Datatype, Error, File, Mode, Selection, StorageLayout,
    COMPACT_AUTO_BYTES,
};

fn extents(f: &File, what: &str) -> Vec<(u64, u64)> {
    f.space_map()
        .unwrap()
        .iter()
        .filter(|e| e.what == what)
        .map(|e| (e.addr, e.len))
        .collect()
}

#[test]
fn layout_is_chosen_by_size_and_can_be_asked_for() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    let make = |name: &str, o: &DatasetOptions| r.create_dataset(name, o).unwrap().layout();
    let f8 = Datatype::float(8);
    let at_limit = COMPACT_AUTO_BYTES / 8;
    assert_eq!(
        make("s", &DatasetOptions::new(f8.clone(), &[])).unwrap(),
        StorageLayout::Compact
    );
    assert_eq!(
        make("a", &DatasetOptions::new(f8.clone(), &[at_limit])).unwrap(),
        StorageLayout::Compact
    );
    assert_eq!(
        make("b", &DatasetOptions::new(f8.clone(), &[at_limit + 1])).unwrap(),
        StorageLayout::Contiguous
    );
    let forced = DatasetOptions::new(f8.clone(), &[400]).layout(StorageLayout::Compact);
    assert_eq!(make("c", &forced).unwrap(), StorageLayout::Compact);
    let plain = DatasetOptions::new(f8.clone(), &[4]).layout(StorageLayout::Contiguous);
    assert_eq!(make("d", &plain).unwrap(), StorageLayout::Contiguous);
    let chunked = DatasetOptions::new(f8.clone(), &[40]).layout(StorageLayout::Chunked);
    assert_eq!(make("e", &chunked).unwrap(), StorageLayout::Chunked);
    assert_eq!(r.dataset("e").unwrap().chunks().unwrap(), Some(vec![40]));
    // Variable-length data has a byte vector, never compact storage.
    let v = r
        .create_dataset("v", &DatasetOptions::new(Datatype::VlenStr, &[2]))
        .unwrap();
    assert_ne!(v.layout().unwrap(), StorageLayout::Compact);

    let refused = |o: DatasetOptions| match r.create_dataset("x", &o) {
        Err(Error::InvalidArgument(_)) => {}
        other => panic!("expected InvalidArgument, got {:?}", other.map(|_| ())),
    };
    refused(DatasetOptions::new(f8.clone(), &[600]).layout(StorageLayout::Compact));
    refused(
        DatasetOptions::new(f8.clone(), &[4])
            .chunks(&[2])
            .layout(StorageLayout::Compact),
    );
    refused(
        DatasetOptions::new(f8.clone(), &[4])
            .maxshape(&[None])
            .layout(StorageLayout::Contiguous),
    );
    refused(DatasetOptions::new(Datatype::VlenStr, &[2]).layout(StorageLayout::Compact));
    assert!(!r.contains("x").unwrap());
    f.check().unwrap();
}

#[test]
fn compact_datasets_read_write_and_reopen_like_any_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.arca");
    let f = File::create(&path).unwrap();
    let be = Datatype::Int {
        size: 4,
        order: ByteOrder::Big,
    };
    let o = DatasetOptions::new(be, &[6, 5]).fill_value(&(-1i32).to_ne_bytes());
    let d = f.root().create_dataset("m", &o).unwrap();
    assert_eq!(d.layout().unwrap(), StorageLayout::Compact);
    assert_eq!(d.read_all::<i32>().unwrap(), vec![-1; 30]);
    let block = Selection::from_ranges(&[(1, 5, 2), (0, 5, 3)]).unwrap();
    d.write(&block, &[1, 2, 3, 4]).unwrap();
    let s = f.check().unwrap();
    assert_eq!(s.compact_bytes, 120);
    assert_eq!(s.data_bytes, 0);
    assert_eq!(d.storage_size().unwrap(), 120);
    assert!(extents(&f, "contiguous data").is_empty());
    f.close().unwrap();

    let f = File::open_rw(&path).unwrap();
    let d = f.root().dataset("m").unwrap();
    let mut want = vec![-1i32; 30];
    want[5] = 1;
    want[8] = 2;
    want[15] = 3;
    want[18] = 4;
    assert_eq!(d.read_all::<i32>().unwrap(), want);
    let col: Vec<i32> = d
        .read(&Selection::from_ranges(&[(0, 6, 1), (3, 4, 1)]).unwrap())
        .unwrap();
    assert_eq!(col, vec![-1, 2, -1, 4, -1, -1]);
    assert!(d.resize(&[7, 5]).is_err());
    f.close().unwrap();
    // The values are big-endian in the file: 0x00000002 at element 8.
    let bytes = std::fs::read(&path).unwrap();
    let pat: Vec<u8> = [1i32, -1, -1, 2]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    assert!(bytes.windows(16).any(|w| w == pat));
}

#[test]
fn headers_take_the_space_they_need() {
    let f = File::in_memory().unwrap();
    let r = f.root();
    r.create_group("g").unwrap();
    r.create_dataset("s", &DatasetOptions::new(Datatype::float(8), &[]))
        .unwrap();
    let d = r
        .create_dataset("d", &DatasetOptions::new(Datatype::float(8), &[4]))
        .unwrap();
    d.attrs().set("event", &AttrValue::scalar(7i64)).unwrap();
    let headers = extents(&f, "object header");
    assert_eq!(headers.len(), 4);
    for (_, len) in &headers {
        assert!(*len <= 128, "a small object's header took {len} bytes");
        assert_eq!(len % 32, 0);
    }
    // One attribute: a B-tree leaf of 64 bytes, not a 512-byte page.
    let pages = extents(&f, "B-tree page");
    assert!(pages.iter().any(|&(_, len)| len == 64), "{pages:?}");
    let s = f.check().unwrap();
    assert!(
        s.metadata_bytes < 1024,
        "four small objects hold {} bytes of metadata",
        s.metadata_bytes
    );
}

/// Pages a transaction allocated and then freed (a B-tree leaf that grew
/// into a larger page) are reused within the same transaction, so a file
/// written in one session has no holes.
#[test]
fn growing_attribute_trees_leave_no_holes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.arca");
    let f = File::create(&path).unwrap();
    for i in 0..200 {
        let d = f
            .root()
            .create_dataset(
                &format!("d{i:03}"),
                &DatasetOptions::new(Datatype::float(8), &[4]),
            )
            .unwrap();
        for k in 0..10 {
            d.attrs()
                .set(&format!("attr{k}"), &AttrValue::scalar(k as i64 + i))
                .unwrap();
        }
    }
    let s = f.check().unwrap();
    let free = f.space_info().unwrap().free_bytes;
    assert!(
        free < s.file_bytes / 50,
        "{free} of {} bytes free after one session",
        s.file_bytes
    );
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    let a = f.root().dataset("d199").unwrap().attrs();
    assert_eq!(a.get("attr9").unwrap().to_vec::<i64>().unwrap(), vec![208]);
    f.check().unwrap();
}

#[test]
fn deleting_small_objects_gives_their_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.arca");
    let f = File::create(&path).unwrap();
    f.close().unwrap();
    let empty = std::fs::metadata(&path).unwrap().len();
    let f = File::open_rw(&path).unwrap();
    for i in 0..500 {
        let g = f.root().create_group(&format!("g{i}")).unwrap();
        let d = g
            .create_dataset("x", &DatasetOptions::new(Datatype::uint(2), &[i % 300]))
            .unwrap();
        d.write_all(&vec![i as u16; (i % 300) as usize]).unwrap();
        d.attrs().set("i", &AttrValue::scalar(i)).unwrap();
    }
    f.close().unwrap();
    let full = std::fs::metadata(&path).unwrap().len();
    let f = File::open_rw(&path).unwrap();
    for i in 0..500 {
        f.root().delete(&format!("g{i}")).unwrap();
    }
    f.check().unwrap();
    f.close().unwrap();
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(full > empty + 100_000);
    assert!(
        after <= empty + 4096,
        "{after} bytes left of {full} (empty: {empty})"
    );
}

#[test]
fn repack_keeps_each_layout() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    let f = File::create(&a).unwrap();
    let r = f.root();
    let f8 = Datatype::float(8);
    for (name, o) in [
        ("compact", DatasetOptions::new(f8.clone(), &[10])),
        (
            "contiguous",
            DatasetOptions::new(f8.clone(), &[10]).layout(StorageLayout::Contiguous),
        ),
        (
            "chunked",
            DatasetOptions::new(f8.clone(), &[10]).chunks(&[4]),
        ),
    ] {
        r.create_dataset(name, &o)
            .unwrap()
            .write_all(&[1.5f64; 10])
            .unwrap();
    }
    f.close().unwrap();
    arca::repack(&a, &b, &mut |_, _| {}).unwrap();
    let f = File::open(&b).unwrap();
    for (name, l) in [
        ("compact", StorageLayout::Compact),
        ("contiguous", StorageLayout::Contiguous),
        ("chunked", StorageLayout::Chunked),
    ] {
        let d = f.root().dataset(name).unwrap();
        assert_eq!(d.layout().unwrap(), l);
        assert_eq!(d.read_all::<f64>().unwrap(), vec![1.5; 10]);
    }
    f.check().unwrap();
}

/// Byte 12 of the superblock: the format version.
fn version(path: &std::path::Path) -> u32 {
    let b = std::fs::read(path).unwrap();
    u32::from_le_bytes(b[12..16].try_into().unwrap())
}

/// A file written by format version 1 (512-byte pages and up, no compact
/// layout) opens, reads, checks and takes writes; writing upgrades it.
#[test]
fn format_version_1_files_still_open() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format-v1.arca");
    assert_eq!(version(&fixture), 1);
    let check_contents = |f: &File| {
        let r = f.root();
        assert_eq!(
            r.attrs().get("title").unwrap().as_string().unwrap(),
            "written by format version 1"
        );
        let small = r.dataset("run/small").unwrap();
        assert_eq!(small.layout().unwrap(), StorageLayout::Contiguous);
        assert_eq!(small.read_all::<f64>().unwrap(), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            r.dataset("run/scalar").unwrap().read_all::<i32>().unwrap(),
            vec![7]
        );
        let big: Vec<i32> = r.dataset("run/big").unwrap().read_all().unwrap();
        assert_eq!(big, (0..3000).collect::<Vec<i32>>());
        let c: Vec<u16> = r.dataset("run/chunked").unwrap().read_all().unwrap();
        assert_eq!(&c[..160], &(0..160).collect::<Vec<u16>>()[..]);
        assert!(c[160..].iter().all(|&v| v == 9));
        let names = r.dataset("run/names").unwrap();
        assert_eq!(
            names.read_strings(&Selection::all(&[3])).unwrap(),
            vec!["alpha", "beta", "γ"]
        );
        assert_eq!(r.group("many").unwrap().len().unwrap(), 30);
        assert!(!r.contains("doomed").unwrap());
    };
    let f = File::open(&fixture).unwrap();
    check_contents(&f);
    f.check().unwrap();
    drop(f);
    assert_eq!(version(&fixture), 1, "a read-only open changes nothing");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.arca");
    std::fs::copy(&fixture, &path).unwrap();
    let f = File::options().mode(Mode::ReadWrite).open(&path).unwrap();
    let r = f.root();
    r.create_dataset("new/small", &DatasetOptions::new(Datatype::float(8), &[3]))
        .unwrap()
        .write_all(&[4.0f64, 5.0, 6.0])
        .unwrap();
    r.group("many/g03")
        .unwrap()
        .attrs()
        .set("k", &AttrValue::scalar(1u8))
        .unwrap();
    r.dataset("run/chunked").unwrap().resize(&[48, 8]).unwrap();
    r.delete("many/g10").unwrap();
    f.check().unwrap();
    f.close().unwrap();
    assert_eq!(version(&path), arca::FORMAT_VERSION);
    let f = File::open(&path).unwrap();
    let d = f.root().dataset("new/small").unwrap();
    assert_eq!(d.layout().unwrap(), StorageLayout::Compact);
    assert_eq!(d.read_all::<f64>().unwrap(), vec![4.0, 5.0, 6.0]);
    assert_eq!(f.root().group("many").unwrap().len().unwrap(), 29);
    f.check().unwrap();
}

/// Write `n` small datasets (4 floats, one attribute, 100 to a group) in
/// one transaction, looking at the page cache after each: the most pages
/// and dirty bytes it held, and how often pages were written back before
/// the commit.
fn write_in_one_transaction(f: &File, n: usize) -> (arca::CacheStats, usize) {
    let mut most = arca::CacheStats::default();
    let mut write_backs = 0;
    f.transaction(|f| {
        let mut last_dirty = 0;
        for i in 0..n {
            let d = f.root().create_dataset(
                &format!("g{:03}/d{:02}", i / 100, i % 100),
                &DatasetOptions::new(Datatype::float(8), &[4]),
            )?;
            d.write_all(&[i as f64; 4])?;
            d.attrs().set("event", &AttrValue::scalar(i as i64))?;
            let s = f.cache_stats();
            most.pages = most.pages.max(s.pages);
            most.dirty_pages = most.dirty_pages.max(s.dirty_pages);
            most.dirty_bytes = most.dirty_bytes.max(s.dirty_bytes);
            most.bytes = most.bytes.max(s.bytes);
            most.capacity = s.capacity;
            write_backs += (s.dirty_pages < last_dirty) as usize;
            last_dirty = s.dirty_pages;
        }
        Ok(())
    })
    .unwrap();
    (most, write_backs)
}

#[test]
fn a_long_transaction_holds_no_more_pages_than_the_cache_allows() {
    let dir = tempfile::tempdir().unwrap();
    let pages = 64;
    let mut seen = vec![];
    for n in [400, 4000] {
        let path = dir.path().join(format!("{n}.arca"));
        let f = File::options()
            .mode(Mode::Create)
            .page_cache_pages(pages)
            .open(&path)
            .unwrap();
        let (most, write_backs) = write_in_one_transaction(&f, n);
        assert_eq!(most.capacity, pages);
        assert!(most.pages <= pages, "{n} objects: {most:?}");
        assert!(most.dirty_bytes <= (pages * arca::PAGE_SIZE) as u64);
        // The cache filled with dirty pages and wrote them back inside
        // the transaction: the bound was met, not merely never reached.
        assert!(most.dirty_pages > pages / 2, "{n} objects: {most:?}");
        assert!(write_backs > 0, "{n} objects: no early write-back");
        seen.push((n, most));
        f.close().unwrap();
        let f = File::open(&path).unwrap();
        f.check().unwrap();
        let mut objects = 0;
        f.root()
            .visit(&mut |_, _| {
                objects += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(objects, n + n.div_ceil(100));
        let last = f
            .root()
            .dataset(&format!("g{:03}/d{:02}", (n - 1) / 100, (n - 1) % 100));
        assert_eq!(
            last.unwrap().read_all::<f64>().unwrap(),
            vec![(n - 1) as f64; 4]
        );
    }
    // Ten times the objects, the same bound.
    assert!(seen[1].1.pages <= seen[0].1.capacity);
}

#[test]
fn pages_written_back_early_roll_back_with_their_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.arca");
    let f = File::options()
        .mode(Mode::Create)
        .page_cache_pages(32)
        .open(&path)
        .unwrap();
    f.root().create_group("kept").unwrap();
    f.flush().unwrap();
    let before = f.stat().unwrap();
    let undone: arca::Result<()> = f.transaction(|f| {
        for i in 0..1500 {
            f.root()
                .create_group(&format!("g{:02}/h{:02}", i / 100, i % 100))?;
        }
        // Early write-backs happened: the cache never held them all.
        assert!(f.cache_stats().pages <= 32);
        Err(Error::InvalidArgument("undo".into()))
    });
    assert!(undone.is_err());
    assert_eq!(f.root().member_names().unwrap(), ["kept"]);
    assert_eq!(f.stat().unwrap().groups, before.groups);
    f.check().unwrap();
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    assert_eq!(f.root().member_names().unwrap(), ["kept"]);
    f.check().unwrap();
}
