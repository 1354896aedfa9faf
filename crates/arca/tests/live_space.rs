//! No write lands on live bytes, whatever the file says: files crafted with
//! every checksum valid name live structures as free (the free-space and
//! held-space records), give a page a size that takes in its neighbour (a
//! version-4 header and B-tree page, a version-1 header), or lose a link
//! count. An r+ session over each gets a typed `Corrupt` or goes on
//! elsewhere in the file; the live structures' bytes never change, and
//! `OpenOptions::prove_space` refuses the file at open, naming both
//! structures.

use std::path::Path;

use arca::{AttrValue, DatasetOptions, Datatype, Error, File, Mode, StorageLayout};

fn le(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Make the superblock's checksum valid again.
fn fix_superblock(img: &mut [u8]) {
    let c = crc32c::crc32c(&img[12..128]);
    img[8..12].copy_from_slice(&c.to_le_bytes());
}

/// Make the checksum of the page at `a` valid over `len` bytes.
fn fix_page(img: &mut [u8], a: usize, len: usize) {
    let c = crc32c::crc32c_append(crc32c::crc32c(&img[a..a + 4]), &img[a + 8..a + len]);
    img[a + 4..a + 8].copy_from_slice(&c.to_le_bytes());
}

/// Append a free-space record (`slot` 0, tag "AFSR") or held-space record
/// (`slot` 2, "AHSR") naming `sections` (kind, addr, size) and point the
/// superblock at it; the old record is left behind unreferenced.
fn set_record(img: &mut Vec<u8>, slot: usize, sections: &[(u8, u64, u64)]) {
    let mut data = if slot == 0 {
        b"AFSR".to_vec()
    } else {
        b"AHSR".to_vec()
    };
    data.extend((sections.len() as u32).to_le_bytes());
    for &(k, a, n) in sections {
        data.push(k);
        data.extend(a.to_le_bytes());
        data.extend(n.to_le_bytes());
    }
    let mut body = (data.len() as u64).to_le_bytes().to_vec();
    body.extend(&data);
    let at = img.len() as u64;
    img.extend(b"ABLB");
    img.extend(crc32c::crc32c(&body).to_le_bytes());
    img.extend(&body);
    put(img, 40 + 8 * slot, at);
    put(img, 48 + 8 * slot, data.len() as u64);
    let end = img.len() as u64;
    put(img, 32, end);
    fix_superblock(img);
}

/// Groups `g0`..`g9`, each with an attribute and a subgroup, and a
/// contiguous dataset `d`.
fn build(path: &Path) -> Vec<u8> {
    let f = File::create(path).unwrap();
    let r = f.root();
    for i in 0..10 {
        let g = r.create_group(&format!("g{i}/sub")).unwrap();
        g.attrs().set("i", &AttrValue::scalar(i as i64)).unwrap();
        r.group(&format!("g{i}"))
            .unwrap()
            .attrs()
            .set("name", &AttrValue::string(&format!("group {i}")))
            .unwrap();
    }
    let d = r
        .create_dataset("d", &DatasetOptions::new(Datatype::int(4), &[1000]))
        .unwrap();
    d.write_all(&(0..1000).collect::<Vec<i32>>()).unwrap();
    f.close().unwrap();
    std::fs::read(path).unwrap()
}

/// The extent (addr, len) the space map gives the structure at `addr`.
fn extent(img: &[u8], addr: u64) -> (u64, u64) {
    let f = File::from_bytes(img.to_vec()).unwrap();
    let map = f.space_map().unwrap();
    let e = map.iter().find(|e| e.addr == addr).unwrap();
    (e.addr, e.len)
}

fn bytes(img: &[u8], (a, n): (u64, u64)) -> Vec<u8> {
    img[a as usize..(a + n) as usize].to_vec()
}

/// An r+ session that frees space and asks for plenty: deletes, new groups
/// and attributes, a new dataset. Returns the first error.
fn busy_session(path: &Path, keep: &[&str]) -> arca::Result<()> {
    let f = File::open_rw(path)?;
    let r = f.root();
    let mut first = None;
    let mut note = |x: arca::Result<()>| {
        if let Err(e) = x {
            first.get_or_insert(e);
        }
    };
    for i in 0..10 {
        let name = format!("g{i}");
        if !keep.contains(&name.as_str()) && i % 3 == 0 {
            note(r.delete(&name));
        }
    }
    for i in 0..60 {
        note(r.create_group(&format!("new{i}")).and_then(|g| {
            g.attrs()
                .set("v", &AttrValue::array(&[40], &[i as u64; 40])?)
        }));
    }
    note(
        r.create_dataset("e", &DatasetOptions::new(Datatype::int(8), &[3000]))
            .and_then(|d| d.write_all(&vec![7i64; 3000])),
    );
    note(f.close());
    first.map_or(Ok(()), Err)
}

fn is_corrupt(e: &Error) -> bool {
    matches!(e, Error::Corrupt { .. })
}

/// Write `img` to `path`; proving the space at open must refuse it with a
/// `Corrupt` whose message names `what`.
fn refused_when_proven(path: &Path, img: &[u8], what: &str) {
    std::fs::write(path, img).unwrap();
    let e = File::options()
        .mode(Mode::ReadWrite)
        .prove_space(true)
        .open(path)
        .unwrap_err();
    assert!(is_corrupt(&e) && e.to_string().contains(what), "{e}");
}

/// Every named extent of the file at `path` still holds its bytes in
/// `intact`.
fn assert_kept(path: &Path, intact: &[u8], extents: &[(&str, (u64, u64))]) {
    let after = std::fs::read(path).unwrap();
    for &(name, e) in extents {
        assert_eq!(bytes(&after, e), bytes(intact, e), "{name} overwritten");
    }
}

#[test]
fn free_sections_over_live_structures_are_never_handed_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.arca");
    let intact = build(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let header = extent(&intact, f.root().group("g4").unwrap().id());
    let data = f
        .space_map()
        .unwrap()
        .into_iter()
        .find(|e| e.what == "contiguous data")
        .map(|e| (e.addr, e.len))
        .unwrap();
    drop(f);
    let mut live = [(0u8, header.0, header.1), (1, data.0, data.1)];
    live.sort_by_key(|s| s.1);
    let mut img = intact.clone();
    set_record(&mut img, 0, &live);
    // Proving the space at open refuses the file, naming both structures.
    refused_when_proven(&path, &img, "free");

    // A session that deletes objects proves the space at its commit: the
    // proof meets the lying record and the commit is refused, nothing
    // written.
    let e = busy_session(&path, &["g4"]).unwrap_err();
    assert!(is_corrupt(&e), "{e}");
    assert_kept(&path, &intact, &[("header", header), ("data", data)]);
    let f = File::open(&path).unwrap();
    assert!(f.root().contains("g0").unwrap() && !f.root().contains("new0").unwrap());
    drop(f);
    // One that only allocates goes on at the end of the file: the header
    // and the data the record calls free keep their bytes.
    let all: Vec<String> = (0..10).map(|i| format!("g{i}")).collect();
    busy_session(&path, &all.iter().map(|s| s.as_str()).collect::<Vec<_>>()).unwrap();
    assert_kept(&path, &intact, &[("header", header), ("data", data)]);
    let f = File::open(&path).unwrap();
    assert!(f.root().contains("new59").unwrap());
}

#[test]
fn held_sections_over_live_structures_are_never_handed_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.arca");
    let intact = build(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let header = extent(&intact, f.root().group("g5").unwrap().id());
    drop(f);
    let mut img = intact.clone();
    set_record(&mut img, 2, &[(0, header.0, header.1)]);
    refused_when_proven(&path, &img, "held");
    // The writer lets the held space go at its commits (no snapshot
    // reader holds it); it must not reuse it. Reaching g5 is refused
    // (its header lies in space the file calls held, then free).
    for _ in 0..2 {
        if let Err(e) = busy_session(&path, &["g5"]) {
            assert!(is_corrupt(&e), "{e}");
        }
    }
    assert_kept(&path, &intact, &[("header", header)]);
    let f = File::open(&path).unwrap();
    let name = f
        .root()
        .group("g5")
        .and_then(|g| g.attrs().get("name"))
        .and_then(|v| v.as_string());
    match name {
        Ok(n) => assert_eq!(n, "group 5"),
        Err(e) => assert!(is_corrupt(&e), "{e}"),
    }
}

/// Claim the next 32-byte step for the page at `a` (a version-4 size byte)
/// and make its checksum valid over the larger page.
fn widen_page(img: &mut [u8], a: usize, len: usize) -> usize {
    img[a + 3] += 1;
    fix_page(img, a, len + 32);
    len + 32
}

#[test]
fn a_header_whose_size_takes_in_its_neighbour_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.arca");
    let intact = build(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let map = f.space_map().unwrap();
    // A group's header followed at once by another live page.
    let (victim, next) = (0..10)
        .filter_map(|i| {
            let g = f.root().group(&format!("g{i}")).ok()?;
            let (a, n) = extent(&intact, g.id());
            let next = map.iter().find(|e| e.addr == a + n)?;
            matches!(next.what, "object header" | "B-tree page")
                .then_some((format!("g{i}"), (next.addr, next.len)))
        })
        .next()
        .expect("a header with a live neighbour");
    let (a, n) = extent(&intact, f.root().group(&victim).unwrap().id());
    drop(f);
    let mut img = intact.clone();
    widen_page(&mut img, a as usize, n as usize);
    std::fs::write(&path, &img).unwrap();

    let f = File::open_rw(&path).unwrap();
    let e = f
        .root()
        .group(&victim)
        .and_then(|g| g.attrs().set("more", &AttrValue::scalar(1i64)))
        .unwrap_err();
    assert!(
        is_corrupt(&e) && e.to_string().contains("object header"),
        "{e}"
    );
    f.close().unwrap();
    assert_kept(&path, &intact, &[("neighbour", next)]);
}

#[test]
fn a_btree_page_whose_size_takes_in_its_neighbour_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.arca");
    let intact = build(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let map = f.space_map().unwrap();
    // Headers by address, to leave the neighbour's object alone.
    let mut owner = std::collections::HashMap::new();
    f.root()
        .visit(&mut |p, k| {
            if k == arca::ObjectKind::Group {
                owner.insert(f.root().object(p)?.id(), p.to_string());
            }
            Ok(())
        })
        .unwrap();
    let mut tried = 0;
    for w in map.windows(2) {
        let (page, next) = (w[0], w[1]);
        if page.what != "B-tree page"
            || next.what != "object header"
            || page.addr + page.len != next.addr
        {
            continue;
        }
        let Some(spare) = owner.get(&next.addr) else {
            continue;
        };
        tried += 1;
        let mut img = intact.clone();
        widen_page(&mut img, page.addr as usize, page.len as usize);
        std::fs::write(&path, &img).unwrap();
        // Touch every tree but the neighbour's own object: whichever holds
        // the widened page is rewritten, and must refuse.
        let f = File::open_rw(&path).unwrap();
        let mut refused = 0;
        for p in owner.values().filter(|p| *p != spare) {
            let r = f.root().group(p).and_then(|g| {
                g.attrs().set("more", &AttrValue::scalar(1i64))?;
                g.create_group("x").map(|_| ())
            });
            if let Err(e) = r {
                assert!(is_corrupt(&e), "{p}: {e}");
                refused += 1;
            }
        }
        let _ = f.close();
        assert!(
            refused > 0,
            "no tree refused the widened page at {}",
            page.addr
        );
        assert_kept(&path, &intact, &[(spare, (next.addr, next.len))]);
    }
    assert!(tried > 0, "no B-tree page lies before a header");
}

#[test]
fn a_version_1_header_whose_class_takes_in_its_neighbour_is_refused() {
    let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format-v1.arca");
    let intact = std::fs::read(v1).unwrap();
    // The root header is the first page, a 512-byte class-'0' page; the
    // page after it is live.
    assert_eq!(&intact[4096..4100], b"AOH0");
    assert_eq!(&intact[4608..4611], b"ABL");
    let mut img = intact.clone();
    img[4096 + 3] = b'1';
    fix_page(&mut img, 4096, 1024);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.arca");
    std::fs::write(&path, &img).unwrap();
    let e = match File::open_rw(&path) {
        Ok(f) => {
            let e = f.root().create_group("new").unwrap_err();
            drop(f);
            e
        }
        Err(e) => e,
    };
    assert!(
        is_corrupt(&e) && e.to_string().contains("object header"),
        "{e}"
    );
    assert_kept(&path, &intact, &[("neighbour", (4608, 512))]);

    // The same header as a writer before this check rewrote it: a new size
    // byte naming its 512 bytes. That is its own size, and it reads.
    let mut img = intact.clone();
    img[4096 + 3] = 0x80 + (512 / 32 - 1) as u8;
    fix_page(&mut img, 4096, 512);
    std::fs::write(&path, &img).unwrap();
    let f = File::open_rw(&path).unwrap();
    f.root().create_group("new").unwrap();
    f.close().unwrap();
    File::open(&path).unwrap().check().unwrap();
}

#[test]
fn a_second_name_without_its_link_count_keeps_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.arca");
    {
        let f = File::create(&path).unwrap();
        let r = f.root();
        r.create_group("small").unwrap();
        let d = r
            .create_dataset("x", &DatasetOptions::new(Datatype::int(8), &[20_000]))
            .unwrap();
        d.write_all(&(0..20_000).collect::<Vec<i64>>()).unwrap();
        r.link_hard("x", "y").unwrap();
        f.close().unwrap();
    }
    let intact = std::fs::read(&path).unwrap();
    assert_ne!(le(&intact, 80), 0, "the file has a link-count tree");
    // Drop the link-count tree: x's object seems to have one name.
    let mut img = intact.clone();
    put(&mut img, 80, 0);
    fix_superblock(&mut img);
    refused_when_proven(&path, &img, "");

    // Removing one name frees the object the other still names; reusing
    // its space is refused, and nothing of it is lost.
    let f = File::open_rw(&path).unwrap();
    let r = f.root();
    let outcome = r.delete("x").and_then(|_| {
        let d = r.create_dataset("z", &DatasetOptions::new(Datatype::int(8), &[20_000]))?;
        d.write_all(&vec![-1i64; 20_000])?;
        f.close()
    });
    let e = outcome.unwrap_err();
    assert!(is_corrupt(&e), "{e}");
    drop(r);
    let f = File::open(&path).unwrap();
    let y: Vec<i64> = f.root().dataset("y").unwrap().read_all().unwrap();
    assert_eq!(y, (0..20_000).collect::<Vec<i64>>());
}

#[test]
fn a_contiguous_extent_over_another_header_is_refused_when_proven() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.arca");
    let intact = build(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let d = f.root().dataset("d").unwrap().id() as usize;
    let target = f.root().group("g2").unwrap().id();
    drop(f);
    // The layout message holds class 0, the address, the size: find the
    // data's address in the dataset's header and point it at g2's header.
    let data = File::from_bytes(intact.clone())
        .unwrap()
        .space_map()
        .unwrap()
        .into_iter()
        .find(|e| e.what == "contiguous data")
        .unwrap();
    let (_, n) = extent(&intact, d as u64);
    let mut img = intact.clone();
    let at = (d..d + n as usize - 8)
        .find(|&i| le(&img, i) == data.addr)
        .expect("the layout's address");
    put(&mut img, at, target);
    fix_page(&mut img, d, n as usize);
    refused_when_proven(&path, &img, "contiguous data");
}

#[test]
fn proven_space_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.arca");
    build(&path);
    {
        let f = File::open_rw(&path).unwrap();
        for i in 0..10 {
            f.root().delete(&format!("g{i}")).unwrap();
        }
        f.close().unwrap();
    }
    let len = std::fs::metadata(&path).unwrap().len();
    // A proof at open: the space the deletes freed is handed out again.
    let f = File::options()
        .mode(Mode::ReadWrite)
        .prove_space(true)
        .open(&path)
        .unwrap();
    for i in 0..10 {
        f.root().create_group(&format!("h{i}")).unwrap();
    }
    f.close().unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() <= len);
    File::open(&path).unwrap().check().unwrap();
}

/// A space-reusing string dataset `s` of 41 elements, all but the last
/// written 16 bytes each, then element 0 rewritten longer: the vector's
/// free list names its old 16 bytes. Returns the file's bytes.
fn build_vector(path: &Path) -> Vec<u8> {
    let f = File::create(path).unwrap();
    let o = DatasetOptions::new(Datatype::VlenStr, &[41])
        .vlen(arca::VlenOptions::default().reuse_space(true));
    let d = f.root().create_dataset("s", &o).unwrap();
    let values: Vec<String> = (0..40).map(|i| format!("value number {i:03}")).collect();
    assert!(values.iter().all(|v| v.len() == 16));
    d.write_strings(
        &arca::Selection::from_ranges(&[(0, 40, 1)]).unwrap(),
        &values,
    )
    .unwrap();
    d.write_strings(
        &arca::Selection::from_ranges(&[(0, 1, 1)]).unwrap(),
        &["a longer first value"],
    )
    .unwrap();
    f.close().unwrap();
    std::fs::read(path).unwrap()
}

/// Make the vector's free list name `ranges` (as many as it named before)
/// with a valid checksum.
fn set_free_ranges(img: &mut [u8], ranges: &[(u64, u64)]) {
    let f = File::from_bytes(img.to_vec()).unwrap();
    let blob = f
        .space_map()
        .unwrap()
        .into_iter()
        .find(|e| e.what == "vlen free ranges")
        .expect("the vector's free list");
    let a = blob.addr as usize;
    assert_eq!(&img[a..a + 4], b"ABLB");
    assert_eq!(le(img, a + 8), 16 * ranges.len() as u64, "same length");
    for (k, &(o, l)) in ranges.iter().enumerate() {
        put(img, a + 16 + 16 * k, o);
        put(img, a + 24 + 16 * k, l);
    }
    let c = crc32c::crc32c(&img[a + 8..a + 16 + 16 * ranges.len()]);
    img[a + 4..a + 8].copy_from_slice(&c.to_le_bytes());
}

fn strings(path: &Path) -> Vec<String> {
    let f = File::open(path).unwrap();
    let d = f.root().dataset("s").unwrap();
    d.read_strings(&arca::Selection::from_ranges(&[(0, 40, 1)]).unwrap())
        .unwrap()
}

#[test]
fn a_free_range_over_a_live_element_is_never_handed_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.arca");
    let mut img = build_vector(&path);
    let before = strings(&path);
    // The free range moved onto element 1's 16 bytes (the vector holds
    // element 0's first value, then element 1's).
    set_free_ranges(&mut img, &[(16, 16)]);
    std::fs::write(&path, &img).unwrap();
    let e = File::open(&path).unwrap().check().unwrap_err();
    assert!(
        is_corrupt(&e) && e.to_string().contains("covers the element"),
        "{e}"
    );

    // A 16-byte value for the unwritten element fits that range exactly;
    // the range is a small part of the vector, so it is held unproven and
    // the value goes to the end instead.
    {
        let f = File::open_rw(&path).unwrap();
        let d = f.root().dataset("s").unwrap();
        d.write_strings(
            &arca::Selection::from_ranges(&[(40, 41, 1)]).unwrap(),
            &["sixteen bytes!!!"],
        )
        .unwrap();
        f.close().unwrap();
    }
    assert_eq!(strings(&path), before, "a live element was overwritten");
    let f = File::open(&path).unwrap();
    let last = f
        .root()
        .dataset("s")
        .unwrap()
        .read_strings(&arca::Selection::from_ranges(&[(40, 41, 1)]).unwrap())
        .unwrap();
    assert_eq!(last, ["sixteen bytes!!!"]);
}

#[test]
fn a_large_free_range_over_live_elements_is_refused_by_its_proof() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.arca");
    let mut img = build_vector(&path);
    let before = strings(&path);
    // Elements 1 to 10: more than an eighth of the vector, worth a proof.
    set_free_ranges(&mut img, &[(16, 160)]);
    std::fs::write(&path, &img).unwrap();
    let f = File::open_rw(&path).unwrap();
    let d = f.root().dataset("s").unwrap();
    let e = d
        .write_strings(
            &arca::Selection::from_ranges(&[(40, 41, 1)]).unwrap(),
            &["sixteen bytes!!!"],
        )
        .unwrap_err();
    assert!(
        is_corrupt(&e) && e.to_string().contains("covers the element"),
        "{e}"
    );
    drop(d);
    let _ = f.close();
    assert_eq!(strings(&path), before, "a live element was overwritten");
}

#[test]
fn free_ranges_of_an_intact_vector_are_reused_after_their_proof() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.arca");
    build_vector(&path);
    // Free a tenth of the vector and more in one session...
    {
        let f = File::open_rw(&path).unwrap();
        let d = f.root().dataset("s").unwrap();
        let sel = arca::Selection::from_ranges(&[(1, 11, 1)]).unwrap();
        d.write_strings(&sel, &[""; 10]).unwrap();
        f.close().unwrap();
    }
    let vector = |p: &Path| {
        let f = File::open(p).unwrap();
        let d = f.root().dataset("s").unwrap();
        d.vlen_info().unwrap().unwrap().vector_bytes
    };
    let was = vector(&path);
    // ...the next session proves the ranges and fills them: the vector
    // does not grow.
    {
        let f = File::open_rw(&path).unwrap();
        let d = f.root().dataset("s").unwrap();
        let sel = arca::Selection::from_ranges(&[(1, 11, 1)]).unwrap();
        let v: Vec<String> = (0..10).map(|i| format!("again number {i:03}")).collect();
        d.write_strings(&sel, &v).unwrap();
        f.close().unwrap();
    }
    assert_eq!(vector(&path), was);
    File::open(&path).unwrap().check().unwrap();
}

/// [`build`], then a session that adds a 16-byte contiguous dataset `s`
/// and a chunked dataset `c` (ten chunks of 400 bytes).
fn build_with_chunks(path: &Path) -> Vec<u8> {
    build(path);
    let f = File::open_rw(path).unwrap();
    let r = f.root();
    r.create_dataset(
        "s",
        &DatasetOptions::new(Datatype::int(4), &[4]).layout(StorageLayout::Contiguous),
    )
    .unwrap()
    .write_all(&[1i32, 2, 3, 4])
    .unwrap();
    r.create_dataset(
        "c",
        &DatasetOptions::new(Datatype::int(4), &[1000]).chunks(&[100]),
    )
    .unwrap()
    .write_all(&(0..1000).collect::<Vec<i32>>())
    .unwrap();
    f.close().unwrap();
    std::fs::read(path).unwrap()
}

/// Point the contiguous dataset `name`'s layout at `to`, its header's
/// checksum valid again.
fn move_contiguous(img: &[u8], name: &str, to: u64) -> Vec<u8> {
    let f = File::from_bytes(img.to_vec()).unwrap();
    let d = f.root().dataset(name).unwrap();
    let (h, n) = extent(img, d.id());
    let len = d.storage_size().unwrap();
    let data = f
        .space_map()
        .unwrap()
        .into_iter()
        .find(|e| {
            e.what == "contiguous data" && e.len == len && {
                // The dataset's own extent: its address is in its header.
                (h..h + n - 8).any(|i| le(img, i as usize) == e.addr)
            }
        })
        .unwrap();
    drop(f);
    let mut out = img.to_vec();
    let at = (h as usize..(h + n) as usize - 8)
        .find(|&i| le(&out, i) == data.addr)
        .expect("the layout's address");
    put(&mut out, at, to);
    fix_page(&mut out, h as usize, n as usize);
    out
}

#[test]
fn a_contiguous_extent_over_live_structures_is_proven_before_its_first_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.arca");
    let intact = build_with_chunks(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let map = f.space_map().unwrap();
    let header = f.root().group("g2").unwrap().id();
    drop(f);
    // Another object's header, a chunk, a B-tree page: each at least as
    // long as the 16 bytes `s` writes, inside the file and clear of free
    // space, so only a check against the live structures can refuse it.
    let mut targets = vec![("object header", header)];
    for what in ["chunk", "B-tree page"] {
        let e = map.iter().find(|e| e.what == what && e.len >= 16).unwrap();
        targets.push((what, e.addr));
    }
    for (what, at) in targets {
        let img = move_contiguous(&intact, "s", at);
        std::fs::write(&path, &img).unwrap();
        let f = File::open_rw(&path).unwrap();
        let e = f
            .root()
            .dataset("s")
            .and_then(|d| d.write_all(&[-1i32; 4]))
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            is_corrupt(&e) && msg.contains("contiguous data") && msg.contains(what),
            "{what}: {e}"
        );
        let _ = f.close();
        let after = std::fs::read(&path).unwrap();
        assert_eq!(
            bytes(&after, (at, 16)),
            bytes(&img, (at, 16)),
            "the {what} was written over"
        );
    }
    // An intact file's first write goes through after the proof, and the
    // session's later writes need none.
    std::fs::write(&path, &intact).unwrap();
    let f = File::open_rw(&path).unwrap();
    let s = f.root().dataset("s").unwrap();
    s.write_all(&[5i32, 6, 7, 8]).unwrap();
    s.write_all(&[9i32, 10, 11, 12]).unwrap();
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    assert_eq!(
        f.root().dataset("s").unwrap().read_all::<i32>().unwrap(),
        [9, 10, 11, 12]
    );
    f.check().unwrap();
}

#[test]
fn a_small_contiguous_extent_over_live_structures_moves_before_its_first_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.arca");
    build_with_chunks(&path);
    // 128 KiB more data: the file's named free space is then well under
    // an eighth of it, so `s` moves instead of being proven.
    {
        let f = File::open_rw(&path).unwrap();
        f.root()
            .create_dataset(
                "pad",
                &DatasetOptions::new(Datatype::int(4), &[32768]).layout(StorageLayout::Contiguous),
            )
            .unwrap()
            .write_all(&vec![7i32; 32768])
            .unwrap();
        f.close().unwrap();
    }
    let intact = std::fs::read(&path).unwrap();
    let f = File::from_bytes(intact.clone()).unwrap();
    let map = f.space_map().unwrap();
    let header = f.root().group("g2").unwrap().id();
    drop(f);
    let mut targets = vec![("object header", header)];
    for what in ["chunk", "B-tree page"] {
        let e = map.iter().find(|e| e.what == what && e.len >= 16).unwrap();
        targets.push((what, e.addr));
    }
    for (what, at) in targets {
        let img = move_contiguous(&intact, "s", at);
        std::fs::write(&path, &img).unwrap();
        let f = File::open_rw(&path).unwrap();
        let s = f.root().dataset("s").unwrap();
        // The first write copies what the layout names (the other
        // structure's bytes, as a read gives them) to new space first.
        let seen: Vec<i32> = s.read_all().unwrap();
        s.write(
            &arca::Selection::from_ranges(&[(0, 2, 1)]).unwrap(),
            &[-1i32, -2],
        )
        .unwrap();
        f.close().unwrap();
        let after = std::fs::read(&path).unwrap();
        assert_eq!(
            bytes(&after, (at, 16)),
            bytes(&img, (at, 16)),
            "the {what} was written over"
        );
        let f = File::open(&path).unwrap();
        let s: Vec<i32> = f.root().dataset("s").unwrap().read_all().unwrap();
        assert_eq!(s, [-1, -2, seen[2], seen[3]], "{what}");
        let c: Vec<i32> = f.root().dataset("c").unwrap().read_all().unwrap();
        assert_eq!(c, (0..1000).collect::<Vec<i32>>(), "{what}");
        assert!(f.root().group("g2/sub").is_ok(), "{what}");
        // The old extent was left, not freed: no record names the live
        // structure's bytes free.
        assert!(
            f.space_map()
                .unwrap()
                .iter()
                .all(|e| e.what != "free section" || e.addr + e.len <= at || e.addr >= at + 16),
            "{what}"
        );
    }
    // An intact file: the data moves, the old extent is left unused, and a
    // proof later hands it out again.
    std::fs::write(&path, &intact).unwrap();
    let f = File::open_rw(&path).unwrap();
    let s = f.root().dataset("s").unwrap();
    s.write(
        &arca::Selection::from_ranges(&[(1, 2, 1)]).unwrap(),
        &[20i32],
    )
    .unwrap();
    s.write(
        &arca::Selection::from_ranges(&[(2, 3, 1)]).unwrap(),
        &[30i32],
    )
    .unwrap();
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    assert_eq!(
        f.root().dataset("s").unwrap().read_all::<i32>().unwrap(),
        [1, 20, 30, 4]
    );
    f.check().unwrap();
    let left = |f: &File| -> Vec<(u64, u64)> {
        f.space_map()
            .unwrap()
            .iter()
            .filter(|e| e.what == "left unused")
            .map(|e| (e.addr, e.len))
            .collect()
    };
    let old_s = map
        .iter()
        .find(|e| e.what == "contiguous data" && e.len == 16)
        .unwrap();
    assert_eq!(left(&f), [(old_s.addr, 16)]);
    drop(f);
    let f = File::options()
        .mode(Mode::ReadWrite)
        .prove_space(true)
        .open(&path)
        .unwrap();
    f.root()
        .dataset("s")
        .unwrap()
        .write_all(&[0i32; 4])
        .unwrap();
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    f.check().unwrap();
    assert!(left(&f).is_empty(), "the proof took the 16 bytes back");
}

/// Free sections of the file's free-space record as `set_record` takes
/// them, with `(addr, len)` taken out of them and `add` put in, merged
/// where they touch.
fn free_sections_with(img: &[u8], take: (u64, u64), add: (u64, u64)) -> Vec<(u8, u64, u64)> {
    let f = File::from_bytes(img.to_vec()).unwrap();
    let mut out: Vec<(u64, u64)> = vec![add];
    for e in f.space_map().unwrap() {
        if e.what != "free section" {
            continue;
        }
        let (a, end) = (e.addr, e.addr + e.len);
        let (ta, tend) = (take.0, take.0 + take.1);
        if tend <= a || ta >= end {
            out.push((a, e.len));
            continue;
        }
        if a < ta {
            out.push((a, ta - a));
        }
        if tend < end {
            out.push((tend, end - tend));
        }
    }
    out.sort_unstable();
    let mut merged: Vec<(u64, u64)> = vec![];
    for (a, n) in out {
        match merged.last_mut() {
            Some(p) if p.0 + p.1 == a => p.1 += n,
            _ => merged.push((a, n)),
        }
    }
    merged.into_iter().map(|(a, n)| (0, a, n)).collect()
}

/// [`build`], then a session that makes a contiguous dataset `zeros` of
/// 32 zero bytes, a group `t` of eight members whose link tree's leaf is
/// the last page the session allocates, and then 16 KiB of data at the
/// end of the file: the leaf is followed by free space (the rest of the
/// metadata's reserved extent). Bulk data before keeps the file's free
/// space under an eighth of it, so no proof runs for the space alone.
fn build_leaf_before_free(path: &Path) -> Vec<u8> {
    build(path);
    let f = File::open_rw(path).unwrap();
    f.root()
        .create_dataset("bulk", &DatasetOptions::new(Datatype::int(4), &[100_000]))
        .unwrap()
        .write_all(&vec![7i32; 100_000])
        .unwrap();
    f.close().unwrap();
    let f = File::open_rw(path).unwrap();
    let r = f.root();
    let contiguous = |t, n| DatasetOptions::new(t, &[n]).layout(StorageLayout::Contiguous);
    let zeros = r
        .create_dataset("zeros", &contiguous(Datatype::int(4), 8))
        .unwrap();
    zeros.write_all(&[0i32; 8]).unwrap();
    let big = r
        .create_dataset("big", &contiguous(Datatype::uint(1), 16384))
        .unwrap();
    let t = r.create_group("t").unwrap();
    for i in 0..8 {
        t.create_group(&format!("m{i:02}")).unwrap();
    }
    big.write_all(&[1u8; 16384]).unwrap();
    f.close().unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn a_btree_page_widened_over_zeros_never_writes_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.arca");
    let intact = build_leaf_before_free(&path);
    let f = File::from_bytes(intact.clone()).unwrap();
    let map = f.space_map().unwrap();
    let n = f.root().dataset("zeros").unwrap().storage_size().unwrap();
    let old = map
        .iter()
        .find(|e| e.what == "contiguous data" && e.len == n)
        .map(|e| (e.addr, e.len))
        .unwrap();
    drop(f);
    // `t`'s leaf, followed by free space: the zeros move to the start of
    // that space and the leaf's size byte claims them.
    let (page, len, zeros) = map
        .windows(2)
        .find(|w| {
            let p = &intact[w[0].addr as usize..(w[0].addr + w[0].len) as usize];
            w[0].what == "B-tree page"
                && w[1].what == "free section"
                && w[0].addr + w[0].len == w[1].addr
                && w[1].len >= 32
                && p.windows(3).any(|k| k == b"m00")
        })
        .map(|w| (w[0].addr, w[0].len, w[1].addr))
        .expect("t's leaf before free space");
    let mut img = move_contiguous(&intact, "zeros", zeros);
    img[zeros as usize..zeros as usize + 32].fill(0);
    let sections = free_sections_with(&intact, (zeros, 32), old);
    set_record(&mut img, 0, &sections);
    widen_page(&mut img, page as usize, len as usize);
    refused_when_proven(&path, &img, "B-tree");
    std::fs::write(&path, &img).unwrap();
    // Sessions that each add a member and an attribute to `t`: its leaf
    // grows an entry per commit, into the room its size byte claims.
    for k in 0..16 {
        let f = File::open_rw(&path).unwrap();
        let r = f.root().group("t").and_then(|t| {
            t.create_group(&format!("k{k:02}"))?;
            t.attrs()
                .set(&format!("a{k:02}"), &AttrValue::scalar(k as i64))
        });
        if let Err(e) = r.and(f.close()) {
            assert!(is_corrupt(&e), "{e}");
        }
        let after = std::fs::read(&path).unwrap();
        assert!(
            after[zeros as usize..zeros as usize + 32]
                .iter()
                .all(|&b| b == 0),
            "session {k}: the leaf at {page} wrote over the zeros after it"
        );
    }
    // The zeros read as zeros, or are refused; never as the leaf's bytes.
    let f = File::open(&path).unwrap();
    match f.root().dataset("zeros").and_then(|d| d.read_all::<i32>()) {
        Ok(v) => assert_eq!(v, [0; 8]),
        Err(e) => assert!(is_corrupt(&e), "{e}"),
    }
    let t = f.root().group("t").unwrap();
    for i in 0..8 {
        assert!(t.contains(&format!("m{i:02}")).unwrap(), "t lost m{i:02}");
    }
}

#[test]
fn deleting_one_of_two_names_whose_count_is_missing_keeps_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.arca");
    build(&path);
    {
        let f = File::open_rw(&path).unwrap();
        // Bulk data: the file's free space is far below an eighth of it.
        f.root()
            .create_dataset("bulk", &DatasetOptions::new(Datatype::int(4), &[100_000]))
            .unwrap()
            .write_all(&vec![7i32; 100_000])
            .unwrap();
        let x = f.root().create_group("x").unwrap();
        x.attrs()
            .set("v", &AttrValue::array(&[10], &[3u64; 10]).unwrap())
            .unwrap();
        f.root()
            .create_dataset("x/d", &DatasetOptions::new(Datatype::int(2), &[6]))
            .unwrap()
            .write_all(&[1i16, 2, 3, 4, 5, 6])
            .unwrap();
        f.root().link_hard("x", "y").unwrap();
        f.close().unwrap();
    }
    let intact = std::fs::read(&path).unwrap();
    assert_ne!(le(&intact, 80), 0, "the file has a link-count tree");
    let f = File::from_bytes(intact.clone()).unwrap();
    let header = extent(&intact, f.root().group("x").unwrap().id());
    drop(f);
    // The object is small: what its death frees is far from an eighth of
    // the file, so no proof would run for the space alone.
    assert!(header.1 * 8 * 4 < intact.len() as u64);
    let mut img = intact.clone();
    put(&mut img, 80, 0);
    fix_superblock(&mut img);
    std::fs::write(&path, &img).unwrap();

    // Deleting one name: the commit proves the space the object's death
    // frees, finds the other name, and fails; the file stays as it was.
    {
        let f = File::open_rw(&path).unwrap();
        let outcome = f.root().delete("x").and_then(|_| f.close());
        let e = outcome.unwrap_err();
        assert!(is_corrupt(&e), "{e}");
    }
    // A busy session after it (deletes, new groups, attributes, data).
    if let Err(e) = busy_session(&path, &[]) {
        assert!(is_corrupt(&e), "{e}");
    }
    let f = File::open(&path).unwrap();
    for name in ["x", "y"] {
        let g = f.root().group(name).unwrap();
        assert_eq!(
            g.attrs().get("v").unwrap(),
            AttrValue::array(&[10], &[3u64; 10]).unwrap(),
            "{name}"
        );
        let d: Vec<i16> = g.dataset("d").unwrap().read_all().unwrap();
        assert_eq!(d, [1, 2, 3, 4, 5, 6], "{name}");
    }
    assert_kept(&path, &intact, &[("header", header)]);
}

#[test]
fn deleting_objects_of_an_intact_file_proves_and_reuses_their_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.arca");
    build(&path);
    // The commit after the delete proves the freed space: what the
    // session writes after it goes there, and the file does not grow.
    let f = File::open_rw(&path).unwrap();
    f.root().delete("g1").unwrap();
    f.flush().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let free = f.space_info().unwrap().free_bytes;
    f.root().create_group("h1/sub").unwrap();
    f.root()
        .group("h1")
        .unwrap()
        .attrs()
        .set("name", &AttrValue::string("group 1"))
        .unwrap();
    f.close().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    let f = File::open(&path).unwrap();
    assert!(f.space_info().unwrap().free_bytes < free);
    f.check().unwrap();
}
