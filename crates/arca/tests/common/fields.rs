//! Structure-aware corruption: change the fields of one on-disk structure,
//! make its checksum valid again, and drive the public API over the result.
//!
//! Shared by `tests/corruption_fields.rs` and the fuzz target
//! `fuzz/fuzz_targets/fields_behind_checksums.rs`, so it depends on nothing
//! but `arca` and `crc32c`.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use arca::io::{Driver, MemoryDriver};
use arca::{
    AttrValue, DatasetOptions, Datatype, Extent, File, Filter, Hdf5Filter, Object, ObjectKind,
    Selection, VlenOptions,
};

/// Reads larger than this are skipped: a damaged shape may claim terabytes,
/// and allocating the caller's buffer is the caller's business, not arca's.
pub const READ_LIMIT: usize = 64 << 20;
/// Walks stop after this many objects (a damaged tree may hold garbage links).
const WALK_LIMIT: usize = 5000;
/// The group the r+ session deletes.
pub const DOOMED: &str = "doomed";
/// A dataset with a second name, [`SHARED_ALIAS`], which the r+ session
/// removes: the object must outlive it (a lost link-count entry must not
/// free it).
pub const SHARED: &str = "shared";
pub const SHARED_ALIAS: &str = "shared_alias";
/// A group whose link tree's leaf lies right before the zeros of
/// [`GROW_ZEROS`]; the r+ session adds a member (a size byte widened over
/// the zeros must not write there).
pub const GROW: &str = "grow";
pub const GROW_ZEROS: &str = "grow_zeros";

/// A memory driver whose bytes outlive the file that writes them.
#[derive(Clone, Default)]
pub struct SharedMem(pub Arc<Mutex<Vec<u8>>>);

impl SharedMem {
    pub fn new(bytes: Vec<u8>) -> Self {
        SharedMem(Arc::new(Mutex::new(bytes)))
    }
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    fn with<T>(&self, f: impl FnOnce(&mut MemoryDriver) -> T) -> T {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut d = MemoryDriver::from_bytes(std::mem::take(&mut *g));
        let r = f(&mut d);
        *g = d.bytes().to_vec();
        r
    }
}

impl Driver for SharedMem {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let src = usize::try_from(offset)
            .ok()
            .and_then(|s| Some(s..s.checked_add(buf.len())?))
            .and_then(|r| g.get(r));
        match src {
            Some(s) => {
                buf.copy_from_slice(s);
                Ok(())
            }
            // Same error as MemoryDriver's: reading past the end.
            None => MemoryDriver::new().read_at(offset, buf),
        }
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> arca::Result<()> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let start = usize::try_from(offset).ok();
        let end = start.and_then(|s| s.checked_add(data.len()));
        match (start, end) {
            (Some(s), Some(e)) if e <= g.len() => {
                g[s..e].copy_from_slice(data);
                Ok(())
            }
            _ => {
                drop(g);
                self.with(|d| d.write_at(offset, data))
            }
        }
    }
    fn sync(&mut self) -> arca::Result<()> {
        Ok(())
    }
    fn truncate(&mut self, len: u64) -> arca::Result<()> {
        self.with(|d| d.truncate(len))
    }
    fn len(&self) -> arca::Result<u64> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).len() as u64)
    }
}

fn sel1(rank: usize) -> Selection {
    Selection::new(vec![0; rank], vec![1; rank], vec![1; rank]).expect("one-element selection")
}

/// The file every case starts from: every kind of structure the format has.
/// Built in memory, deterministically (the test checks that two builds agree).
pub fn build() -> Vec<u8> {
    let mem = SharedMem::default();
    let f = File::options()
        .journal(false)
        .open_drivers(Box::new(mem.clone()), None, true, true)
        .unwrap();
    let root = f.root();
    let a = root.attrs();
    a.set("title", &AttrValue::string("fields behind checksums"))
        .unwrap();
    // 800 bytes: stored as an attribute blob.
    let big: Vec<f64> = (0..100).map(|x| x as f64 * 0.5).collect();
    a.set("big", &AttrValue::array(&[100], &big).unwrap())
        .unwrap();
    a.set(
        "names",
        &AttrValue::vlen_strings(&[3], &["alpha", "", "γ"]).unwrap(),
    )
    .unwrap();
    a.set("long_text", &AttrValue::vlen_string(&"xyz".repeat(150)))
        .unwrap();
    a.set(
        "rows",
        &AttrValue::ragged(&[2], &[1i32, 2, 3], &[0, 2, 3]).unwrap(),
    )
    .unwrap();

    // Enough links that the group's B-tree has an internal node.
    let many = root.create_group("many").unwrap();
    for i in 0..300 {
        many.create_group(&format!("member_{i:04}")).unwrap();
    }
    // Every link kind, second names (the link-count tree) and a group
    // that keeps creation order.
    let ordered = root
        .create_group_with("ordered", &arca::GroupOptions::new().track_order(true))
        .unwrap();
    for i in 0..5 {
        ordered.create_group(&format!("o{}", 4 - i)).unwrap();
        // Attributes in creation order too, one large enough for a blob.
        let v = if i == 2 {
            AttrValue::array(&[100], &[i as u64; 100]).unwrap()
        } else {
            AttrValue::scalar(i as u64)
        };
        ordered.attrs().set(&format!("a{}", 4 - i), &v).unwrap();
    }
    ordered.link_soft("soft", "/many/member_0001").unwrap();
    ordered.link_external("ext", "other.arca", "/x").unwrap();
    root.link_hard("many/member_0002", "alias2").unwrap();
    root.link_hard("many/member_0003", "ordered/alias3")
        .unwrap();
    let nested = root.create_group("a/b/c").unwrap();
    nested
        .attrs()
        .set("depth", &AttrValue::scalar(3u32))
        .unwrap();

    let contig = root
        .create_dataset(
            "a/contig",
            &DatasetOptions::new(Datatype::float(8), &[8, 16]),
        )
        .unwrap();
    contig
        .write_all(&(0..128).map(|x| x as f64).collect::<Vec<_>>())
        .unwrap();
    f.flush().unwrap();
    contig.attrs().set("unit", &AttrValue::string("m")).unwrap();
    root.create_dataset(
        "a/unwritten",
        &DatasetOptions::new(Datatype::int(4), &[100]),
    )
    .unwrap();

    // Structured types: their encodings nest, so they get their own header
    // (a chunked table) and attribute.
    let row = Datatype::parse(
        r#"struct(32){"t"@0:>f8,"s"@8:enum(|u1){"A":0,"B":1},"xy"@10:[3]<f2,"z"@16:<c16}"#,
    )
    .unwrap();
    let table = root
        .create_dataset(
            "a/table",
            &DatasetOptions::new(row.clone(), &[12]).chunks(&[5]),
        )
        .unwrap();
    table
        .write_bytes(
            &Selection::all(&[12]),
            &(0..12 * 32).map(|i| (i % 7) as u8 & 1).collect::<Vec<u8>>(),
        )
        .unwrap();
    a.set(
        "row",
        &AttrValue::new(row, &[], (0..32).map(|i| i as u8 & 1).collect()).unwrap(),
    )
    .unwrap();

    let data: Vec<i32> = (0..1024).map(|x| x * 7 - 300).collect();
    for (name, filters) in [
        ("plain", vec![]),
        ("zstd", vec![Filter::Shuffle, Filter::Zstd(3)]),
        ("lz4", vec![Filter::Lz4]),
        ("gzip", vec![Filter::Deflate(6)]),
        (
            "hdf5",
            vec![
                Filter::Hdf5(Hdf5Filter::new(2, true, "shuffle", &[4])),
                Filter::Hdf5(Hdf5Filter::new(32000, true, "lzf", &[4, 261, 1024])),
                Filter::Hdf5(Hdf5Filter::new(3, false, "", &[])),
            ],
        ),
    ] {
        let opts = DatasetOptions::new(Datatype::int(4), &[64, 16])
            .chunks(&[16, 16])
            .maxshape(&[None, Some(16)])
            .filters(&filters);
        let ds = root
            .create_dataset(&format!("chunked/{name}"), &opts)
            .unwrap();
        // Three of four chunks: one stays unallocated.
        ds.write(
            &Selection::from_ranges(&[(0, 48, 1), (0, 16, 1)]).unwrap(),
            &data[..768],
        )
        .unwrap();
        f.flush().unwrap();
    }
    let fill = root
        .create_dataset(
            "chunked/fill",
            &DatasetOptions::new(Datatype::int(2), &[40])
                .chunks(&[8])
                .fill_value(&(-7i16).to_le_bytes()),
        )
        .unwrap();
    fill.write_bytes(
        &Selection::from_ranges(&[(8, 12, 1)]).unwrap(),
        &[1, 0, 2, 0, 3, 0, 4, 0],
    )
    .unwrap();
    f.flush().unwrap();
    let big_fill: Vec<u8> = (0..2000u32).map(|i| (i % 251) as u8).collect();
    let bf = root
        .create_dataset(
            "big_fill",
            &DatasetOptions::new(Datatype::bytes(2000), &[4])
                .chunks(&[2])
                .fill_value(&big_fill),
        )
        .unwrap();
    bf.write_bytes(&sel1(1), &[0x42; 2000]).unwrap();
    f.flush().unwrap();

    let strings: Vec<String> = (0..20)
        .map(|i| format!("s{i}-{}", "ab".repeat(i)))
        .collect();
    let vs = root
        .create_dataset(
            "vlen/str",
            &DatasetOptions::new(Datatype::VlenStr, &[20])
                .vlen(VlenOptions::default().chunk_bytes(256)),
        )
        .unwrap();
    vs.write_strings(&Selection::all(&[20]), &strings).unwrap();
    f.flush().unwrap();
    let vf = root
        .create_dataset(
            "vlen/f32",
            &DatasetOptions::new(Datatype::vlen(Datatype::float(4)).unwrap(), &[4, 3])
                .chunks(&[2, 3])
                .vlen(VlenOptions::default().chunk_bytes(64)),
        )
        .unwrap();
    let vals: Vec<f32> = (0..30).map(|x| x as f32 / 4.0).collect();
    let offs: Vec<u64> = vec![0, 1, 3, 3, 6, 10, 11, 15, 20, 21, 25, 28, 30];
    vf.write_ragged(&Selection::all(&[4, 3]), &vals, &offs)
        .unwrap();
    f.flush().unwrap();
    let vr = root
        .create_dataset(
            "vlen/reuse",
            &DatasetOptions::new(Datatype::VlenStr, &[10])
                .vlen(VlenOptions::default().reuse_space(true).chunk_bytes(128)),
        )
        .unwrap();
    let long: Vec<String> = (0..10).map(|i| format!("{i}:{}", "q".repeat(20))).collect();
    vr.write_strings(&Selection::all(&[10]), &long).unwrap();
    f.flush().unwrap();
    let short = ["s1", "s2", "s3"];
    vr.write_strings(&Selection::from_ranges(&[(2, 5, 1)]).unwrap(), &short)
        .unwrap();
    f.flush().unwrap();
    let vz = root
        .create_dataset(
            "vlen/zstd",
            &DatasetOptions::new(Datatype::vlen(Datatype::int(2)).unwrap(), &[16]).vlen(
                VlenOptions::default()
                    .chunk_bytes(256)
                    .filters(&[Filter::Shuffle, Filter::Zstd(1)]),
            ),
        )
        .unwrap();
    let iv: Vec<i16> = (0..400).map(|x| (x % 37) as i16).collect();
    let ioffs: Vec<u64> = (0..=16).map(|i| i * 25).collect();
    vz.write_ragged(&Selection::all(&[16]), &iv, &ioffs)
        .unwrap();
    f.flush().unwrap();
    let vl = root
        .create_dataset(
            "vlen/lz4",
            &DatasetOptions::new(Datatype::VlenBytes, &[6]).vlen(
                VlenOptions::default()
                    .chunk_bytes(64)
                    .filters(&[Filter::Lz4]),
            ),
        )
        .unwrap();
    let items: Vec<Vec<u8>> = (0..6).map(|i| vec![i as u8; 10 + i * 9]).collect();
    vl.write_vlen_bytes(&Selection::all(&[6]), &items).unwrap();
    f.flush().unwrap();
    // A compound with string and sequence members: records inside
    // elements, pointing into the dataset's vector.
    let row = Datatype::packed(&[
        ("id", Datatype::uint(2)),
        ("name", Datatype::VlenStr),
        ("hits", Datatype::vlen(Datatype::float(4)).unwrap()),
    ])
    .unwrap();
    let vr = root
        .create_dataset(
            "vlen/rows",
            &DatasetOptions::new(row.clone(), &[5])
                .chunks(&[2])
                .vlen(VlenOptions::default().chunk_bytes(48)),
        )
        .unwrap();
    let mut rows = vec![];
    let mut values = vec![];
    for i in 0..5u16 {
        let name = "abcdefgh".repeat(i as usize + 1);
        let hits: Vec<u8> = (0..i).flat_map(|h| (h as f32).to_ne_bytes()).collect();
        rows.extend(i.to_ne_bytes());
        for v in [name.as_bytes(), &hits[..]] {
            rows.extend((values.len() as u64).to_le_bytes());
            rows.extend((v.len() as u64).to_le_bytes());
            values.extend_from_slice(v);
        }
    }
    rows.extend_from_slice(&values);
    vr.write_rows(&Selection::all(&[5]), &rows).unwrap();
    vr.attrs()
        .set("row", &AttrValue::new(row, &[5], rows).unwrap())
        .unwrap();
    f.flush().unwrap();

    // A committed datatype with an attribute, a dataset made with it, and
    // one whose committed type has no name left (only the dataset's use).
    let t = root
        .commit_type(
            "types/pair",
            &Datatype::array(Datatype::int(2), &[2]).unwrap(),
        )
        .unwrap();
    t.attrs().set("about", &AttrValue::string("pairs")).unwrap();
    root.create_dataset(
        "types/pairs",
        &DatasetOptions::new(t.dtype().unwrap(), &[3]).committed(&t),
    )
    .unwrap()
    .write_bytes(&Selection::all(&[3]), &[1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0])
    .unwrap();
    let gone = root.commit_type("types/gone", &Datatype::float(4)).unwrap();
    root.create_dataset(
        "types/orphan",
        &DatasetOptions::new(Datatype::float(4), &[2]).committed(&gone),
    )
    .unwrap();
    root.delete("types/gone").unwrap();
    f.flush().unwrap();
    // Region references of each kind of selection, in a dataset and an
    // attribute.
    let target = root.dataset("a/contig").unwrap();
    let region = |s| {
        Some(arca::RegionRef {
            object: target.id(),
            region: arca::Region::new(vec![8, 16], s).unwrap(),
        })
    };
    let slab = |start, stride, count, block| arca::SlabDim {
        start,
        stride,
        count,
        block,
    };
    let refs = [
        region(arca::RegionSelection::Hyperslab(vec![
            slab(1, 3, 2, 2),
            slab(0, 4, 4, 1),
        ])),
        region(arca::RegionSelection::Points(vec![vec![7, 15], vec![0, 3]])),
        region(arca::RegionSelection::Blocks(vec![(
            vec![2, 2],
            vec![3, 3],
        )])),
        region(arca::RegionSelection::All),
        None,
    ];
    root.create_dataset(
        "regions",
        &DatasetOptions::new(Datatype::RegionRef, &[5])
            .vlen(VlenOptions::default().chunk_bytes(128)),
    )
    .unwrap()
    .write_region_refs(&Selection::all(&[5]), &refs)
    .unwrap();
    a.set("regions", &AttrValue::region_refs(&[5], &refs).unwrap())
        .unwrap();
    f.flush().unwrap();
    // A virtual dataset: every other row of a/contig (in this file), then
    // rows of a file that is not there (the fill value).
    let rows = |start, stride, count| {
        arca::Region::new(
            vec![12, 16],
            arca::RegionSelection::Hyperslab(vec![
                slab(start, stride, count, 1),
                slab(0, 1, 16, 1),
            ]),
        )
        .unwrap()
    };
    let maps = [
        arca::VirtualMapping {
            file: ".".into(),
            dataset: "/a/contig".into(),
            virtual_region: rows(0, 1, 4),
            source_region: arca::Region::new(
                vec![8, 16],
                arca::RegionSelection::Hyperslab(vec![slab(0, 2, 4, 1), slab(0, 1, 16, 1)]),
            )
            .unwrap(),
        },
        arca::VirtualMapping {
            file: "absent.arca".into(),
            dataset: "/x".into(),
            virtual_region: rows(4, 2, 4),
            source_region: arca::Region::new(vec![4, 16], arca::RegionSelection::All).unwrap(),
        },
    ];
    root.create_dataset(
        "virtual/v",
        &DatasetOptions::new(Datatype::float(8), &[12, 16])
            .fill_value(&(-2.5f64).to_le_bytes())
            .virtual_mappings(&maps),
    )
    .unwrap();
    f.flush().unwrap();

    // What the r+ session deletes.
    let doomed = root.create_group(DOOMED).unwrap();
    doomed
        .attrs()
        .set("note", &AttrValue::string("to be deleted"))
        .unwrap();
    doomed
        .create_dataset("d", &DatasetOptions::new(Datatype::uint(1), &[64]))
        .unwrap()
        .write_all(&[9u8; 64])
        .unwrap();
    f.flush().unwrap();
    // Deleted after a commit, so the file ends with free sections.
    for i in 0..3 {
        let t = root
            .create_dataset(
                &format!("tmp{i}"),
                &DatasetOptions::new(Datatype::uint(1), &[3000]),
            )
            .unwrap();
        t.write_all(&vec![i as u8; 3000]).unwrap();
        f.flush().unwrap();
        t.attrs()
            .set("blob", &AttrValue::array(&[64], &[i as f64; 64]).unwrap())
            .unwrap();
    }
    f.flush().unwrap();
    root.delete("tmp0").unwrap();
    root.delete("tmp2").unwrap();
    f.flush().unwrap();

    let contiguous = |t, n| DatasetOptions::new(t, &[n]).layout(arca::StorageLayout::Contiguous);
    root.create_dataset(SHARED, &contiguous(Datatype::int(4), 16))
        .unwrap()
        .write_all(&(0..16).collect::<Vec<i32>>())
        .unwrap();
    root.link_hard(SHARED, SHARED_ALIAS).unwrap();
    // GROW's members and links take the last of the metadata's reserved
    // extent, and GROW_ZEROS's elements come next, at the end of the file:
    // a B-tree page directly followed by zeros (`Fixture::class_cases`
    // finds it, and the test that the fixture still has it).
    let pad = root
        .create_dataset("bulk", &contiguous(Datatype::uint(1), 4096))
        .unwrap();
    let zeros = root
        .create_dataset(GROW_ZEROS, &contiguous(Datatype::uint(1), 16384))
        .unwrap();
    let grow = root.create_group(GROW).unwrap();
    for i in 0..8 {
        grow.create_group(&format!("m{i:02}")).unwrap();
    }
    zeros.write_all(&[0u8; 16384]).unwrap();
    f.flush().unwrap();
    pad.write_all(&[3u8; 4096]).unwrap();
    f.flush().unwrap();
    // Bulk data, so that the file's free space is under an eighth of it:
    // no proof runs for the space alone, and the checks above must hold
    // without one.
    let ballast: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 253) as u8).collect();
    root.create_dataset(
        "ballast",
        &contiguous(Datatype::uint(1), ballast.len() as u64),
    )
    .unwrap()
    .write_all(&ballast)
    .unwrap();
    f.flush().unwrap();
    drop(f);
    mem.bytes()
}

/// How a structure's checksum is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// CRC32C of bytes 12..128 at +8.
    Superblock,
    /// CRC32C of bytes 0..4 and 8..len at +4.
    Page,
    /// CRC32C of bytes 8..16+len at +4.
    Blob,
    /// CRC32C of the whole extent, held in its chunk-index entry.
    Chunk,
}

/// One structure that cases mutate.
#[derive(Clone, Debug)]
pub struct Target {
    pub ext: Extent,
    pub form: Form,
    /// Bytes from the start worth mutating (trailing page padding excluded).
    pub meaningful: u64,
    /// Where the stored checksum lies, relative to the start.
    pub crc_at: Option<u64>,
    /// Values from elsewhere in the map: another structure's address and length.
    pub near: (u64, u64),
    pub far: (u64, u64),
}

/// Where a chunk's checksum is stored: the crc's file offset and its leaf page.
#[derive(Clone, Copy, Debug)]
struct IndexEntry {
    crc_pos: u64,
    leaf: u64,
    leaf_len: u64,
}

/// The intact file, its map, and what cases may mutate.
pub struct Fixture {
    pub image: Vec<u8>,
    pub map: Vec<Extent>,
    pub targets: Vec<Target>,
    entries: HashMap<u64, IndexEntry>,
    /// Every dataset of the intact file, for r+ writes when a damaged file
    /// cannot be walked.
    pub datasets: Vec<String>,
}

fn le(b: &[u8], at: usize, w: usize) -> u64 {
    let mut x = [0u8; 8];
    x[..w].copy_from_slice(&b[at..at + w]);
    u64::from_le_bytes(x)
}

fn put(b: &mut [u8], at: usize, w: usize, v: u64) {
    b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
}

impl Fixture {
    pub fn new(image: Vec<u8>) -> Fixture {
        let f = File::from_bytes(image.clone()).expect("intact file opens");
        f.check().expect("intact file checks");
        let map = f.space_map().expect("intact file maps");
        let mut datasets = vec![];
        f.root()
            .visit(&mut |p, k| {
                if k == ObjectKind::Dataset {
                    datasets.push(format!("/{p}"));
                }
                Ok(())
            })
            .expect("intact file walks");
        drop(f);
        let mut entries = HashMap::new();
        for e in map.iter().filter(|e| e.what == "B-tree page") {
            let (a, l) = (e.addr as usize, e.len as usize);
            let page = &image[a..a + l];
            if &page[..3] != b"ABL" {
                continue;
            }
            let n = le(page, 8, 2) as usize;
            let mut p = 10;
            for _ in 0..n {
                let (kl, vl) = (le(page, p, 2) as usize, le(page, p + 2, 2) as usize);
                let v = p + 4 + kl;
                if vl == 24 {
                    entries.insert(
                        le(page, v, 8),
                        IndexEntry {
                            crc_pos: (a + v + 20) as u64,
                            leaf: e.addr,
                            leaf_len: e.len,
                        },
                    );
                }
                p = v + vl;
            }
        }
        let n = map.len();
        let mut targets = vec![];
        for (i, e) in map.iter().enumerate() {
            let (form, meaningful, crc_at) = match e.what {
                "superblock" => (Form::Superblock, 128, Some(8)),
                "object header" | "B-tree page" => {
                    let page = &image[e.addr as usize..(e.addr + e.len) as usize];
                    let end = page.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                    (Form::Page, end.max(8) as u64, Some(4))
                }
                "attribute blob" | "fill blob" | "free-space record" | "vlen free ranges" => {
                    (Form::Blob, e.len, Some(4))
                }
                "chunk" | "vlen chunk" => {
                    assert!(entries.contains_key(&e.addr), "no index entry for {e:?}");
                    (Form::Chunk, e.len, None)
                }
                _ => continue,
            };
            let next = map[(i + 1) % n];
            let far = map[(i + n / 2) % n];
            targets.push(Target {
                ext: *e,
                form,
                meaningful,
                crc_at,
                near: (next.addr, next.len),
                far: (far.addr, far.len),
            });
        }
        Fixture {
            image,
            map,
            targets,
            entries,
            datasets,
        }
    }

    /// Make the checksum of target `t` match its bytes in `img` again.
    fn fix(&self, img: &mut [u8], t: usize) {
        let t = &self.targets[t];
        let a = t.ext.addr as usize;
        match t.form {
            Form::Superblock => {
                let c = crc32c::crc32c(&img[12..128]);
                put(img, 8, 4, c as u64);
            }
            Form::Page => {
                // A changed size byte is honoured when the file holds that
                // much, as a changed blob length is: the page then claims
                // its neighbours' bytes behind a valid checksum.
                let len = page_len(img[a + 3])
                    .filter(|&l| a + l <= img.len())
                    .unwrap_or(t.ext.len as usize);
                fix_page(img, a, len)
            }
            Form::Blob => {
                // A changed length is honoured when the file holds that much,
                // so decoders see a valid blob of another length.
                let len = le(img, a + 8, 8);
                let fits = len
                    .checked_add(t.ext.addr + 16)
                    .is_some_and(|e| e <= img.len() as u64);
                let len = if fits { len } else { t.ext.len - 16 } as usize;
                let c = crc32c::crc32c(&img[a + 8..a + 16 + len]);
                put(img, a + 4, 4, c as u64);
            }
            Form::Chunk => {
                let e = self.entries[&t.ext.addr];
                let c = crc32c::crc32c(&img[a..a + t.ext.len as usize]);
                put(img, e.crc_pos as usize, 4, c as u64);
                fix_page(img, e.leaf as usize, e.leaf_len as usize);
            }
        }
    }

    /// The intact image with every checksum recomputed.
    pub fn refix(&self) -> Vec<u8> {
        let mut img = self.image.clone();
        for t in 0..self.targets.len() {
            self.fix(&mut img, t);
        }
        img
    }

    /// Every case of target `t`, in a fixed order.
    pub fn cases_of(&self, t: usize) -> Vec<Case> {
        let tg = &self.targets[t];
        let mut out = vec![];
        for off in 0..tg.meaningful {
            if tg.crc_at.is_some_and(|c| off >= c && off < c + 4) {
                continue;
            }
            for width in [1u8, 2, 4, 8] {
                if off + width as u64 > tg.ext.len {
                    continue;
                }
                let mut ops = vec![Op::Zero, Op::Ones, Op::Inc, Op::Dec];
                if width == 8 {
                    ops.extend([
                        Op::Put(tg.near.0, "next addr"),
                        Op::Put(tg.far.0, "far addr"),
                        Op::Put(tg.near.1, "next len"),
                        Op::Put(tg.far.1, "far len"),
                        Op::Put(self.image.len() as u64, "file len"),
                    ]);
                }
                for op in ops {
                    let c = Case {
                        target: t,
                        off,
                        width,
                        op,
                    };
                    if self.value(&self.image, &c) != self.old(&self.image, &c) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    fn old(&self, img: &[u8], c: &Case) -> u64 {
        let a = (self.targets[c.target].ext.addr + c.off) as usize;
        le(img, a, c.width as usize)
    }

    fn value(&self, img: &[u8], c: &Case) -> u64 {
        let mask = if c.width == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * c.width)) - 1
        };
        let old = self.old(img, c);
        match c.op {
            Op::Zero => 0,
            Op::Ones => mask,
            Op::Inc => old.wrapping_add(1) & mask,
            Op::Dec => old.wrapping_sub(1) & mask,
            Op::Put(v, _) => v & mask,
        }
    }

    /// The image with `cases` applied in order, checksums made valid again.
    pub fn apply(&self, cases: &[Case]) -> Vec<u8> {
        let mut img = self.image.clone();
        for c in cases {
            let v = self.value(&img, c);
            let a = (self.targets[c.target].ext.addr + c.off) as usize;
            put(&mut img, a, c.width as usize, v);
        }
        // Chunks first: fixing one rewrites its leaf page.
        let mut touched: Vec<usize> = cases.iter().map(|c| c.target).collect();
        touched.sort_by_key(|&t| (self.targets[t].form != Form::Chunk, t));
        touched.dedup();
        for t in touched {
            self.fix(&mut img, t);
        }
        img
    }

    /// Cases of the classes that write over live data unless the writer
    /// proves what the file says first, whatever a sample draws: the leaf
    /// of [`GROW`] claiming the next 32 bytes (the zeros after it), the
    /// address of [`SHARED`]'s elements moved onto `a/b/c`'s header, and
    /// [`SHARED`]'s link count lost (the tree's root zeroed in the
    /// superblock, or its entry zeroed: an object without a name).
    pub fn class_cases(&self) -> Vec<Case> {
        let f = File::from_bytes(self.image.clone()).expect("intact file opens");
        let id = |p: &str| f.root().object(p).map(|o| o.id()).expect("fixture object");
        let (shared, other) = (id(SHARED), id("a/b/c"));
        let zeros = f
            .root()
            .dataset(GROW_ZEROS)
            .and_then(|d| d.storage_size())
            .expect("fixture dataset");
        drop(f);
        let target = |pred: &dyn Fn(&Target) -> bool| {
            self.targets.iter().position(pred).expect("fixture target")
        };
        let mut out = vec![];
        let data = self
            .map
            .iter()
            .find(|e| e.what == "contiguous data" && e.len == zeros)
            .expect("the zeros");
        let leaf = target(&|t| t.ext.what == "B-tree page" && t.ext.addr + t.ext.len == data.addr);
        out.push(Case {
            target: leaf,
            off: 3,
            width: 1,
            op: Op::Inc,
        });
        let header = target(&|t| t.ext.addr == shared);
        let h = &self.targets[header].ext;
        let page = &self.image[h.addr as usize..(h.addr + h.len) as usize];
        let elements = self
            .map
            .iter()
            .filter(|e| e.what == "contiguous data")
            .find_map(|e| (0..page.len() - 8).find(|&i| le(page, i, 8) == e.addr))
            .expect("the layout's address");
        out.push(Case {
            target: header,
            off: elements as u64,
            width: 8,
            op: Op::Put(other, "another header"),
        });
        let superblock = target(&|t| t.form == Form::Superblock);
        out.push(Case {
            target: superblock,
            off: 80,
            width: 8,
            op: Op::Zero,
        });
        // The count's entry: key (the header's address, big-endian) and
        // value (the count) of 8 bytes each.
        let mut key = vec![8, 0, 8, 0];
        key.extend(shared.to_be_bytes());
        for (t, tg) in self.targets.iter().enumerate() {
            let a = tg.ext.addr as usize;
            let page = &self.image[a..a + tg.ext.len as usize];
            if tg.ext.what != "B-tree page" || &page[..3] != b"ABL" {
                continue;
            }
            if let Some(i) = page.windows(key.len()).position(|w| w == key) {
                out.push(Case {
                    target: t,
                    off: (i + key.len()) as u64,
                    width: 8,
                    op: Op::Zero,
                });
            }
        }
        out
    }

    /// A readable name for a case.
    pub fn describe(&self, c: &Case) -> String {
        let t = &self.targets[c.target];
        let op = match c.op {
            Op::Zero => "zero",
            Op::Ones => "all-ones",
            Op::Inc => "old+1",
            Op::Dec => "old-1",
            Op::Put(_, what) => what,
        };
        format!(
            "{} at {} (len {}), offset {} width {}: {} = {:#x}",
            t.ext.what,
            t.ext.addr,
            t.ext.len,
            c.off,
            c.width,
            op,
            self.value(&self.image, c)
        )
    }

    /// Targets whose bytes repeat an earlier target's (hundreds of empty
    /// groups look alike) are left out of sampled runs.
    pub fn distinct_targets(&self) -> Vec<usize> {
        let mut seen = HashSet::new();
        (0..self.targets.len())
            .filter(|&t| {
                let tg = &self.targets[t];
                let a = tg.ext.addr as usize;
                let mut b = self.image[a..a + tg.meaningful as usize].to_vec();
                if let Some(c) = tg.crc_at {
                    b[c as usize..c as usize + 4].fill(0);
                }
                seen.insert((tg.ext.what, b))
            })
            .collect()
    }
}

/// The page size a page's size byte names (format/page.rs), if any.
fn page_len(code: u8) -> Option<usize> {
    match code {
        b'0'..=b'3' => Some(512 << (code - b'0')),
        c if c > 0x80 => Some((usize::from(c - 0x80) + 1) * 32),
        _ => None,
    }
}

fn fix_page(img: &mut [u8], a: usize, len: usize) {
    let c = crc32c::crc32c_append(crc32c::crc32c(&img[a..a + 4]), &img[a + 8..a + len]);
    put(img, a + 4, 4, c as u64);
}

/// What a case writes over its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Zero,
    Ones,
    Inc,
    Dec,
    Put(u64, &'static str),
}

/// Overwrite `width` bytes at `off` of target `target` (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub target: usize,
    pub off: u64,
    pub width: u8,
    pub op: Op,
}

/// What went wrong in one case.
#[derive(Clone, Debug)]
pub enum Failure {
    /// A call panicked: the step, the message, and where.
    Panic {
        step: String,
        message: String,
        location: String,
    },
    /// An object the session did not touch read back with other bytes.
    Changed { object: String, detail: String },
    /// The file passed `check` and every r+ step succeeded, yet the result
    /// does not open or check.
    CheckAfterSession { error: String },
}

impl Failure {
    /// What identifies the bug rather than the case, for deduplication.
    pub fn signature(&self) -> String {
        match self {
            Failure::Panic {
                location, message, ..
            } => {
                // Numbers in messages vary by case; the location does not.
                let m: String = message
                    .chars()
                    .map(|c| if c.is_ascii_digit() { '#' } else { c })
                    .collect();
                format!("panic at {location}: {m}")
            }
            Failure::Changed { object, .. } => format!("silently changed: {object}"),
            Failure::CheckAfterSession { error } => {
                let what = error.split(':').take(2).collect::<Vec<_>>().join(":");
                let w: String = what.chars().filter(|c| !c.is_ascii_digit()).collect();
                format!("check after session: {w}")
            }
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Panic {
                step,
                message,
                location,
            } => write!(f, "panic in step `{step}` at {location}: {message}"),
            Failure::Changed { object, detail } => {
                write!(
                    f,
                    "{object} read back with other bytes after the r+ session: {detail}"
                )
            }
            Failure::CheckAfterSession { error } => write!(
                f,
                "the damaged file checked and the r+ session succeeded, but the result fails: {error}"
            ),
        }
    }
}

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Record panics quietly, for [`Failure::Panic`] to report where they were.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let p = info.payload();
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string payload)".into());
        let mut loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if !loc.contains("arca/src") {
            // A panic inside std (overflow, slicing): name arca's frame that called it.
            let bt = std::backtrace::Backtrace::force_capture().to_string();
            let mut lines = bt.lines();
            while let Some(l) = lines.next() {
                if l.contains("arca::") {
                    let at = lines.next().unwrap_or_default().trim();
                    if let Some(at) = at.strip_prefix("at ").filter(|a| a.contains("arca/src")) {
                        let at = at.rsplit_once(':').map_or(at, |(a, _)| a);
                        loc = format!("{loc} from {at}");
                        break;
                    }
                }
            }
        }
        LAST_PANIC.with(|l| *l.borrow_mut() = Some((msg, loc)));
    }));
}

/// One data item of the file, read through the public API.
#[derive(Clone, Debug, PartialEq)]
enum Contents {
    Fixed {
        bytes: Vec<u8>,
        elem: usize,
    },
    Vlen {
        values: Vec<u8>,
        offsets: Vec<u64>,
        item: usize,
    },
    /// Elements of a compound with variable-length members: each one's
    /// bytes with its records zeroed, and its members' values.
    Rows(Vec<(Vec<u8>, Vec<Vec<u8>>)>),
    Attr(AttrValue),
}

/// A rows buffer of `n` elements of `dt` as [`Contents::Rows`], or `None`
/// when a record does not lie inside the values (a bug in a read that
/// returned Ok).
fn split_rows(dt: &Datatype, n: usize, rows: &[u8]) -> Option<Contents> {
    let size = dt.size();
    let (fixed, values) = rows.split_at_checked(n.checked_mul(size)?)?;
    let mut out = vec![];
    for e in fixed.chunks_exact(size.max(1)) {
        let mut bytes = e.to_vec();
        let mut vals = vec![];
        for (off, _) in dt.vlen_slots() {
            let o = le(e, off, 8) as usize;
            let l = le(e, off + 8, 8) as usize;
            vals.push(values.get(o..o.checked_add(l)?)?.to_vec());
            bytes[off..off + 16].fill(0);
        }
        out.push((bytes, vals));
    }
    Some(Contents::Rows(out))
}

impl Contents {
    /// Elements (after the first) as byte strings.
    fn elements(&self) -> Vec<&[u8]> {
        match self {
            Contents::Fixed { bytes, elem } => bytes.chunks(*elem.max(&1)).skip(1).collect(),
            Contents::Vlen {
                values,
                offsets,
                item,
            } => offsets
                .windows(2)
                .skip(1)
                .map(|w| &values[w[0] as usize * item..w[1] as usize * item])
                .collect(),
            Contents::Rows(r) => r.iter().skip(1).map(|(b, _)| &b[..]).collect(),
            Contents::Attr(v) => vec![&v.data],
        }
    }

    /// The first difference, for the report.
    fn difference(&self, o: &Contents) -> String {
        let (a, b) = (self.elements(), o.elements());
        let hex = |x: &[u8]| {
            let h: Vec<String> = x.iter().take(12).map(|b| format!("{b:02x}")).collect();
            h.join("")
        };
        match (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
            Some(i) => format!("element {} was {} now {}", i + 1, hex(a[i]), hex(b[i])),
            None => format!("{} elements, now {}", a.len() + 1, b.len() + 1),
        }
    }

    /// Equal apart from element 0, which the r+ session overwrites.
    fn same_but_first(&self, o: &Contents) -> bool {
        match (self, o) {
            (Contents::Fixed { bytes: a, elem }, Contents::Fixed { bytes: b, .. }) => {
                a.len() == b.len() && a.get(*elem..) == b.get(*elem..)
            }
            (
                Contents::Vlen {
                    values: va,
                    offsets: oa,
                    item,
                },
                Contents::Vlen {
                    values: vb,
                    offsets: ob,
                    ..
                },
            ) => {
                let elems = |v: &Vec<u8>, o: &Vec<u64>| -> Vec<Vec<u8>> {
                    o.windows(2)
                        .skip(1)
                        .map(|w| v[w[0] as usize * item..w[1] as usize * item].to_vec())
                        .collect()
                };
                oa.len() == ob.len() && elems(va, oa) == elems(vb, ob)
            }
            (Contents::Rows(a), Contents::Rows(b)) => {
                a.len() == b.len() && a.get(1..) == b.get(1..)
            }
            (a, b) => a == b,
        }
    }
}

fn object(f: &File, path: &str) -> arca::Result<Object> {
    if path == "/" {
        Ok(Object::Group(f.root()))
    } else {
        f.root().object(path)
    }
}

/// Runs the steps of one case, catching panics.
struct Run {
    failures: Vec<Failure>,
}

impl Run {
    fn step<T>(&mut self, step: &str, f: impl FnOnce() -> arca::Result<T>) -> Option<T> {
        self.step_raw(step, f).and_then(|r| r.ok())
    }

    /// `None` after a panic, else the call's result.
    fn step_raw<T>(
        &mut self,
        step: &str,
        f: impl FnOnce() -> arca::Result<T>,
    ) -> Option<arca::Result<T>> {
        LAST_PANIC.with(|l| l.borrow_mut().take());
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => Some(r),
            Err(p) => {
                let (message, location) = LAST_PANIC
                    .with(|l| l.borrow_mut().take())
                    .unwrap_or_else(|| {
                        let m = p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        (m, "(unknown)".into())
                    });
                self.failures.push(Failure::Panic {
                    step: step.to_string(),
                    message,
                    location,
                });
                None
            }
        }
    }

    /// Everything `arca ls`/`dump` would show, and every item's data.
    fn walk(&mut self, f: &File, phase: &str) -> (Vec<String>, BTreeMap<String, Contents>) {
        let mut objs = vec![(String::from("/"), ObjectKind::Group)];
        self.step(&format!("{phase} visit"), || {
            f.root().visit(&mut |p, k| {
                if objs.len() >= WALK_LIMIT {
                    return Err(arca::Error::InvalidArgument("walk limit".into()));
                }
                objs.push((format!("/{p}"), k));
                Ok(())
            })
        });
        let mut datasets = vec![];
        let mut data = BTreeMap::new();
        for (p, _) in &objs {
            let Some(obj) = self.step(&format!("{phase} object"), || object(f, p)) else {
                continue;
            };
            let attrs = match &obj {
                Object::Group(g) => {
                    self.step(&format!("{phase} members"), || g.members());
                    self.step(&format!("{phase} len"), || g.len());
                    g.attrs()
                }
                Object::Dataset(d) => {
                    datasets.push(p.clone());
                    self.dataset_meta(d, phase);
                    if let Some(c) = self.read_dataset(d, phase) {
                        data.insert(p.clone(), c);
                    }
                    d.attrs()
                }
                Object::Datatype(t) => {
                    self.step(&format!("{phase} named dtype"), || t.dtype());
                    t.attrs()
                }
            };
            let names = self
                .step(&format!("{phase} attr names"), || attrs.names())
                .unwrap_or_default();
            self.step(&format!("{phase} attr len"), || attrs.len());
            for n in names.iter().take(WALK_LIMIT) {
                if let Some(v) = self.step(&format!("{phase} attr get"), || attrs.get(n)) {
                    if v.dtype.is_vlen() {
                        self.step(&format!("{phase} attr ragged"), || v.to_ragged_bytes());
                    }
                    data.insert(format!("{p} @{n}"), Contents::Attr(v));
                }
            }
        }
        (datasets, data)
    }

    fn dataset_meta(&mut self, d: &arca::Dataset, phase: &str) {
        self.step(&format!("{phase} shape"), || d.shape());
        self.step(&format!("{phase} maxshape"), || d.maxshape());
        self.step(&format!("{phase} dtype"), || d.dtype());
        self.step(&format!("{phase} chunks"), || d.chunks());
        self.step(&format!("{phase} filters"), || d.filters());
        self.step(&format!("{phase} fill_value"), || d.fill_value());
        self.step(&format!("{phase} storage_size"), || d.storage_size());
        self.step(&format!("{phase} len"), || d.len());
        self.step(&format!("{phase} vlen_info"), || d.vlen_info());
        if let Some(Some(t)) = self.step(&format!("{phase} committed_type"), || d.committed_type())
        {
            self.step(&format!("{phase} committed dtype"), || t.dtype());
        }
    }

    fn read_dataset(&mut self, d: &arca::Dataset, phase: &str) -> Option<Contents> {
        let shape = self.step(&format!("{phase} shape"), || d.shape())?;
        let dtype = self.step(&format!("{phase} dtype"), || d.dtype())?;
        let sel = Selection::all(&shape);
        if dtype.has_vlen() && !dtype.is_vlen() {
            let n = shape
                .iter()
                .try_fold(dtype.size() as u64, |a, &x| a.checked_mul(x));
            if n.is_none_or(|n| n > READ_LIMIT as u64) {
                return None;
            }
            let rows = self.step(&format!("{phase} read_rows"), || d.read_rows(&sel))?;
            let split = split_rows(&dtype, sel.len() as usize, &rows);
            if split.is_none() {
                self.failures.push(Failure::Panic {
                    step: format!("{phase} read_rows"),
                    message: "a record does not index the values returned".into(),
                    location: "(returned Ok)".into(),
                });
            }
            return split;
        }
        if let Some(base) = dtype.base() {
            let n = shape.iter().try_fold(16u64, |a, &x| a.checked_mul(x));
            if n.is_none_or(|n| n > READ_LIMIT as u64) {
                return None;
            }
            let mut skipped = false;
            let (values, offsets) = self.step(&format!("{phase} read_ragged_bytes"), || {
                d.read_ragged_bytes_with(&sel, |n| {
                    if n > READ_LIMIT {
                        skipped = true;
                        vec![]
                    } else {
                        vec![0; n]
                    }
                })
            })?;
            if skipped {
                return None;
            }
            let item = base.size();
            // Offsets must index the values; a read that says otherwise is a bug.
            let fits = offsets.windows(2).all(|w| w[0] <= w[1])
                && offsets
                    .last()
                    .is_some_and(|&l| l.checked_mul(item as u64) == Some(values.len() as u64));
            if !fits {
                self.failures.push(Failure::Panic {
                    step: format!("{phase} read_ragged_bytes"),
                    message: format!(
                        "offsets do not index the {} value bytes returned",
                        values.len()
                    ),
                    location: "(returned Ok)".into(),
                });
                return None;
            }
            Some(Contents::Vlen {
                values,
                offsets,
                item,
            })
        } else {
            let elem = dtype.size();
            let n = shape.iter().try_fold(elem as u64, |a, &x| a.checked_mul(x));
            if n.is_none_or(|n| n > READ_LIMIT as u64) {
                return None;
            }
            let mut bytes = vec![0u8; n? as usize];
            self.step(&format!("{phase} read_bytes"), || {
                d.read_bytes(&sel, &mut bytes)
            })?;
            Some(Contents::Fixed { bytes, elem })
        }
    }

    /// One item by its key: `path` for a dataset's data, `path @name` for an attribute.
    fn read_key(&mut self, f: &File, key: &str) -> Option<Contents> {
        match key.split_once(" @") {
            Some((p, n)) => {
                let v = self.step("after attr get", || object(f, p)?.attrs().get(n))?;
                Some(Contents::Attr(v))
            }
            None => {
                let d = self.step("after object", || f.root().dataset(key))?;
                self.read_dataset(&d, "after")
            }
        }
    }

    /// Writes through an r+ handle; returns whether every step succeeded,
    /// and whether every step up to the commit before the deletes did.
    fn session(&mut self, f: &File, datasets: &[String]) -> (bool, bool) {
        let mut ok = true;
        for p in datasets {
            let r = self.step_raw("r+ write", || {
                let d = f.root().dataset(p)?;
                if d.is_virtual()? {
                    // Read-only: its elements are its sources'.
                    return Ok(());
                }
                let shape = d.shape()?;
                if shape.contains(&0) {
                    return Ok(());
                }
                let sel = sel1(shape.len());
                let dt = d.dtype()?;
                // A write builds a whole chunk in memory. A damaged size up
                // to the format's 2 GiB limit is a legal chunk, and memory
                // for it is the caller's business, as for reads.
                let vector = match dt.has_vlen() {
                    true => d.vlen_info()?.map_or(0, |v| v.chunk_bytes),
                    false => 0,
                };
                let chunk = d.chunks()?.map_or(0, |c| {
                    c.iter().fold(dt.size() as u64, |a, &x| a.saturating_mul(x))
                });
                let chunk = chunk.max(vector);
                if chunk > READ_LIMIT as u64 {
                    return Ok(());
                }
                match dt.base() {
                    // The null reference: the one element any bytes can't fake.
                    Some(_) if dt == Datatype::RegionRef => {
                        d.write_ragged_bytes(&sel, &[], &[0, 0])
                    }
                    Some(b) => {
                        let v = vec![b'z'; b.size() * 3];
                        d.write_ragged_bytes(&sel, &v, &[0, 3])
                    }
                    // One element, its members' values empty.
                    None if dt.has_vlen() => d.write_rows(&sel, &vec![0; dt.size()]),
                    None => d.write_bytes(&sel, &vec![0x5a; dt.size()]),
                }
            });
            ok &= matches!(r, Some(Ok(())));
        }
        let r = self.step_raw("r+ create contiguous", || {
            let d = f
                .root()
                .create_dataset("zz_contig", &DatasetOptions::new(Datatype::float(8), &[32]))?;
            d.write_all(&[2.5f64; 32])
        });
        ok &= matches!(r, Some(Ok(())));
        let r = self.step_raw("r+ create chunked", || {
            let d = f.root().create_dataset(
                "zz_chunked",
                &DatasetOptions::new(Datatype::int(4), &[100])
                    .chunks(&[32])
                    .filters(&[Filter::Shuffle, Filter::Zstd(1)]),
            )?;
            d.write_all(&(0..100).collect::<Vec<i32>>())
        });
        ok &= matches!(r, Some(Ok(())));
        let r = self.step_raw("r+ set attribute", || {
            f.root()
                .attrs()
                .set("zz_attr", &AttrValue::array(&[40], &[7u64; 40])?)
        });
        ok &= matches!(r, Some(Ok(())));
        let r = self.step_raw("r+ add member", || {
            f.root().group(GROW)?.create_group("zz_member").map(|_| ())
        });
        ok &= matches!(r, Some(Ok(())));
        // Committed before the deletes: a commit after a delete proves the
        // space, which would also catch what the steps above got wrong.
        let r = self.step_raw("r+ flush before deletes", || f.flush());
        ok &= matches!(r, Some(Ok(())));
        let early = ok;
        let r = self.step_raw("r+ delete", || f.root().delete(DOOMED));
        ok &= matches!(r, Some(Ok(())));
        let r = self.step_raw("r+ delete second name", || f.root().delete(SHARED_ALIAS));
        ok &= matches!(r, Some(Ok(())));
        let r = self.step_raw("r+ flush", || f.flush());
        ok &= matches!(r, Some(Ok(())));
        (ok, early)
    }
}

/// Run every step on one (damaged) image; the failures found.
pub fn run(img: Vec<u8>, known_datasets: &[String]) -> Vec<Failure> {
    let mut run = Run { failures: vec![] };
    // Read-only: open, check, stat, map, walk, read everything.
    let mut checked = false;
    let mut before = BTreeMap::new();
    let mut datasets = known_datasets.to_vec();
    if let Some(f) = run.step("open", || File::from_bytes(img.clone())) {
        checked = run.step("check", || f.check()).is_some();
        run.step("stat", || f.stat());
        run.step("space_map", || f.space_map());
        let (ds, data) = run.walk(&f, "read");
        if !ds.is_empty() {
            datasets = ds;
        }
        before = data;
        run.step("close", || f.close());
    }

    // r+: write to every dataset, create, set, delete, commit.
    let data = SharedMem::new(img);
    let journal = SharedMem::default();
    let Some(f) = run.step("r+ open", || {
        File::options().open_drivers(
            Box::new(data.clone()),
            Some(Box::new(journal.clone())),
            false,
            true,
        )
    }) else {
        return run.failures;
    };
    let (ok, early) = run.session(&f, &datasets);
    // Dropping may commit; a panic there is a failure like any other.
    run.step("r+ drop", || {
        drop(f);
        Ok(())
    });

    // A failed commit leaves a hot journal: roll it back as the next open would.
    let after = SharedMem::new(data.bytes());
    run.step("recover", || {
        File::options().open_drivers(
            Box::new(after.clone()),
            Some(Box::new(SharedMem::new(journal.bytes()))),
            false,
            true,
        )
    });
    let reopened = run.step_raw("after open", || File::from_bytes(after.bytes()));
    let must_check = checked && ok;
    let f = match reopened {
        Some(Ok(f)) => f,
        Some(Err(e)) => {
            if must_check {
                run.failures.push(Failure::CheckAfterSession {
                    error: e.to_string(),
                });
            }
            return run.failures;
        }
        None => return run.failures,
    };
    if let Some(Err(e)) = run.step_raw("after check", || f.check()) {
        if must_check {
            run.failures.push(Failure::CheckAfterSession {
                error: e.to_string(),
            });
        }
    }
    run.step("after stat", || f.stat());
    let (_, now) = run.walk(&f, "after");
    let doomed = format!("/{DOOMED}");
    for (key, old) in &before {
        let path = key.split(" @").next().unwrap_or_default();
        if path == doomed
            || path.starts_with(&format!("{doomed}/"))
            || path == format!("/{SHARED_ALIAS}")
        {
            continue;
        }
        // Items the walk did not reach are looked up by name.
        let new = match now.get(key) {
            Some(n) => Some(n.clone()),
            None => run.read_key(&f, key),
        };
        match new {
            Some(new) if !old.same_but_first(&new) => run.failures.push(Failure::Changed {
                object: key.clone(),
                detail: old.difference(&new),
            }),
            Some(_) => {}
            // Readable before a session whose steps up to its first commit
            // succeeded (a later failed commit leaves the file there), not
            // after it: the session lost it (freed it, wrote over it).
            None if early => run.failures.push(Failure::Changed {
                object: key.clone(),
                detail: "readable before the session, not after".into(),
            }),
            None => {}
        }
    }
    run.failures
}
