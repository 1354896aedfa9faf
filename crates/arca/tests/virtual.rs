//! Virtual datasets: elements assembled from sources in this file and
//! others (found as HDF5 finds them), the fill value where none reaches,
//! unlimited mappings that grow with their sources, types converted,
//! mappings checked at creation and by `check`, kept by `repack`.

mod common;

use arca::{
    DatasetOptions, Datatype, Error, File, Region, RegionSelection, Selection, SlabDim,
    StorageLayout, VirtualMapping, UNLIMITED,
};
use proptest::prelude::*;

fn slab(start: u64, stride: u64, count: u64, block: u64) -> SlabDim {
    SlabDim {
        start,
        stride,
        count,
        block,
    }
}

fn hyper(dims: &[u64], d: Vec<SlabDim>) -> Region {
    Region::new_unlimited(dims.to_vec(), RegionSelection::Hyperslab(d)).unwrap()
}

fn all(dims: &[u64]) -> Region {
    Region::new(dims.to_vec(), RegionSelection::All).unwrap()
}

fn map(file: &str, dataset: &str, v: Region, s: Region) -> VirtualMapping {
    VirtualMapping {
        file: file.into(),
        dataset: dataset.into(),
        virtual_region: v,
        source_region: s,
    }
}

/// A file at `path` with a 1-D dataset `data` of `values`.
fn source_file(path: &std::path::Path, values: &[f64]) {
    let f = File::create(path).unwrap();
    f.root()
        .create_dataset(
            "data",
            &DatasetOptions::new(Datatype::float(8), &[values.len() as u64]),
        )
        .unwrap()
        .write_all(values)
        .unwrap();
    f.close().unwrap();
}

#[test]
fn interleaved_sources_in_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..4).map(|k| format!("raw_{k}.arca")).collect();
    for (k, n) in names.iter().enumerate() {
        source_file(&dir.path().join(n), &[k as f64; 5]);
    }
    let vpath = dir.path().join("v.arca");
    {
        let f = File::create(&vpath).unwrap();
        // Row k of every four from file k: relative names for the first
        // two, absolute ones for the rest; one to a file that is not there.
        let mut maps: Vec<VirtualMapping> = names
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let file = if k < 2 {
                    n.clone()
                } else {
                    dir.path().join(n).to_string_lossy().into_owned()
                };
                map(
                    &file,
                    "/data",
                    hyper(&[22], vec![slab(k as u64, 4, 5, 1)]),
                    all(&[5]),
                )
            })
            .collect();
        maps.push(map(
            "missing.arca",
            "/data",
            hyper(&[22], vec![slab(20, 1, 2, 1)]),
            all(&[2]),
        ));
        let o = DatasetOptions::new(Datatype::float(4), &[22])
            .fill_value(&(-5f32).to_ne_bytes())
            .virtual_mappings(&maps);
        let v = f.root().create_dataset("v", &o).unwrap();
        assert!(v.is_virtual().unwrap());
        assert_eq!(v.layout().unwrap(), StorageLayout::Virtual);
        assert_eq!(v.virtual_mappings().unwrap(), maps);
        // Read-only, and not resizable.
        assert!(v.write_all(&[0f32; 22]).is_err());
        assert!(v.resize(&[30]).is_err());
        f.check().unwrap();
        f.close().unwrap();
    }
    let f = File::open(&vpath).unwrap();
    let v = f.root().dataset("v").unwrap();
    let want: Vec<f32> = (0..22)
        .map(|i| if i >= 20 { -5.0 } else { (i % 4) as f32 })
        .collect();
    assert_eq!(v.read_all::<f32>().unwrap(), want);
    // A strided read picks its elements from the right sources.
    let s = Selection::from_ranges(&[(1, 22, 3)]).unwrap();
    let got: Vec<f32> = v.read(&s).unwrap();
    assert_eq!(got, (1..22).step_by(3).map(|i| want[i]).collect::<Vec<_>>());
    drop(v);
    drop(f);
    // The absolute names lead nowhere once the sources move: they are then
    // looked for beside the virtual file, as HDF5 does.
    let moved = dir.path().join("moved");
    std::fs::create_dir(&moved).unwrap();
    for n in names.iter().chain(["v.arca".to_string()].iter()) {
        std::fs::rename(dir.path().join(n), moved.join(n)).unwrap();
    }
    let f = File::open(moved.join("v.arca")).unwrap();
    assert_eq!(
        f.root().dataset("v").unwrap().read_all::<f32>().unwrap(),
        want
    );
    // A source gone reads as the fill value.
    drop(f);
    std::fs::remove_file(moved.join("raw_1.arca")).unwrap();
    let f = File::open(moved.join("v.arca")).unwrap();
    let got = f.root().dataset("v").unwrap().read_all::<f32>().unwrap();
    assert!(got.iter().skip(1).step_by(4).take(5).all(|&x| x == -5.0));
}

#[test]
fn same_file_unlimited_and_nested() {
    let f = File::in_memory().unwrap();
    let root = f.root();
    let src = root
        .create_dataset(
            "src",
            &DatasetOptions::new(Datatype::int(8), &[10, 2])
                .maxshape(&[None, Some(2)])
                .chunks(&[10, 1])
                .fill_value(&(-1i64).to_ne_bytes()),
        )
        .unwrap();
    src.write_all(&(0..20i64).collect::<Vec<_>>()).unwrap();
    // Column 1 of the source, as many rows as it has.
    let m = map(
        ".",
        "/src",
        hyper(&[10, 1], vec![slab(0, 1, UNLIMITED, 1), slab(0, 1, 1, 1)]),
        hyper(&[10, 2], vec![slab(0, 1, UNLIMITED, 1), slab(1, 1, 1, 1)]),
    );
    let o = DatasetOptions::new(Datatype::int(8), &[10, 1])
        .maxshape(&[None, Some(1)])
        .virtual_mappings(&[m]);
    let v = root.create_dataset("v", &o).unwrap();
    let odd: Vec<i64> = (0..10).map(|i| 2 * i + 1).collect();
    assert_eq!(v.read_all::<i64>().unwrap(), odd);
    src.resize(&[15, 2]).unwrap();
    assert_eq!(v.shape().unwrap(), [15, 1]);
    let mut grown = odd.clone();
    grown.extend([-1; 5]);
    assert_eq!(v.read_all::<i64>().unwrap(), grown);
    // A virtual dataset over the virtual one (int8 → float8).
    let n = map(
        ".",
        "/v",
        hyper(&[3], vec![slab(0, 1, 3, 1)]),
        hyper(&[15, 1], vec![slab(2, 4, 3, 1), slab(0, 1, 1, 1)]),
    );
    let w = root
        .create_dataset(
            "w",
            &DatasetOptions::new(Datatype::float(8), &[3]).virtual_mappings(&[n]),
        )
        .unwrap();
    assert_eq!(w.read_all::<f64>().unwrap(), [5.0, 13.0, -1.0]);
    // A virtual dataset that reads itself is a loop, refused.
    let me = map(".", "/me", all(&[2]), all(&[2]));
    let l = root
        .create_dataset(
            "me",
            &DatasetOptions::new(Datatype::int(4), &[2]).virtual_mappings(&[me]),
        )
        .unwrap();
    assert!(matches!(
        l.read_all::<i32>(),
        Err(Error::InvalidArgument(_))
    ));
    f.check().unwrap();
}

#[test]
fn mappings_are_checked_at_creation() {
    let f = File::in_memory().unwrap();
    let bad = [
        // Counts that differ, a virtual side made in another shape, an
        // unlimited count on one side, an empty name.
        map(".", "/s", hyper(&[10], vec![slab(0, 1, 4, 1)]), all(&[5])),
        map(".", "/s", all(&[9]), all(&[9])),
        map(
            ".",
            "/s",
            hyper(&[10], vec![slab(0, 1, UNLIMITED, 1)]),
            all(&[5]),
        ),
        map("", "/s", all(&[10]), all(&[10])),
    ];
    for m in bad {
        let o = DatasetOptions::new(Datatype::int(4), &[10]).virtual_mappings(&[m]);
        assert!(matches!(
            f.root().create_dataset("v", &o),
            Err(Error::InvalidArgument(_))
        ));
    }
    let o = DatasetOptions::new(Datatype::VlenStr, &[10]).virtual_mappings(&[]);
    assert!(f.root().create_dataset("v", &o).is_err());
    let o = DatasetOptions::new(Datatype::int(4), &[10])
        .chunks(&[5])
        .virtual_mappings(&[]);
    assert!(f.root().create_dataset("v", &o).is_err());
    // No mappings: every element the fill value.
    let o = DatasetOptions::new(Datatype::int(4), &[3]).virtual_mappings(&[]);
    let v = f.root().create_dataset("v", &o).unwrap();
    assert_eq!(v.read_all::<i32>().unwrap(), [0, 0, 0]);
    assert!(!f.root().contains("x").unwrap());
    f.check().unwrap();
}

#[test]
fn repack_keeps_mappings_and_check_names_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    {
        let f = File::create(&a).unwrap();
        let root = f.root();
        root.create_dataset("src", &DatasetOptions::new(Datatype::uint(2), &[6]))
            .unwrap()
            .write_all(&[1u16, 2, 3, 4, 5, 6])
            .unwrap();
        let m = map(".", "/src", all(&[3]), hyper(&[6], vec![slab(1, 2, 3, 1)]));
        let o = DatasetOptions::new(Datatype::uint(2), &[3])
            .fill_value(&7u16.to_ne_bytes())
            .virtual_mappings(&[m]);
        root.create_dataset("v", &o).unwrap();
        f.close().unwrap();
    }
    arca::repack(&a, &b, &mut |_, _| {}).unwrap();
    let f = File::open(&b).unwrap();
    let v = f.root().dataset("v").unwrap();
    assert!(v.is_virtual().unwrap());
    assert_eq!(v.read_all::<u16>().unwrap(), [2, 4, 6]);
    assert_eq!(v.fill_value().unwrap(), 7u16.to_ne_bytes());
    f.check().unwrap();
    let map_at = f
        .space_map()
        .unwrap()
        .into_iter()
        .find(|e| e.what == "virtual mappings")
        .unwrap();
    drop(v);
    f.close().unwrap();
    // The source's stride, 2, made 0 behind a valid checksum.
    let mut img = std::fs::read(&b).unwrap();
    let at = map_at.addr as usize;
    let len = u64::from_le_bytes(img[at + 8..at + 16].try_into().unwrap()) as usize;
    let data = &mut img[at + 16..at + 16 + len];
    let pos = data
        .windows(32)
        .position(|w| {
            w == [
                1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                0, 0, 0, 0,
            ]
        })
        .unwrap();
    data[pos + 8] = 0;
    let crc = crc32c::crc32c(&img[at + 8..at + 16 + len]);
    img[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&b, &img).unwrap();
    let f = File::open(&b).unwrap();
    let e = f.check().unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Corrupt {
                what: "virtual mapping",
                ..
            }
        ) && e.to_string().contains("mapping 0"),
        "{e}"
    );
    let v = f.root().dataset("v").unwrap();
    assert!(matches!(v.read_all::<u16>(), Err(Error::Corrupt { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7a5_0001),
        ..ProptestConfig::with_cases(common::scaled(64))
    })]

    /// A virtual dataset over a strided, blocked selection of a 2-D source
    /// reads, for any request, what the source holds there (the box path),
    /// and so does the same mapping given as points (one by one).
    #[test]
    fn any_request_reads_the_sources_elements(
        (start0, stride0, count0, block0) in (0u64..3, 1u64..4, 1u64..4, 1u64..3),
        (start1, stride1, count1) in (0u64..4, 1u64..3, 1u64..5),
        (r0, rs, rc) in (0u64..3, 1u64..3, 1u64..6),
    ) {
        let block0 = block0.min(stride0);
        let src_dims = [start0 + (count0 - 1) * stride0 + block0 + 1, start1 + (count1 - 1) * stride1 + 2];
        let f = File::in_memory().unwrap();
        let n: u64 = src_dims.iter().product();
        let s = f.root().create_dataset("s", &DatasetOptions::new(Datatype::int(4), &src_dims)).unwrap();
        s.write_all(&(0..n as i32).collect::<Vec<_>>()).unwrap();
        let rows = count0 * block0;
        let vdims = [rows + 1, count1];
        let sreg = hyper(&src_dims, vec![slab(start0, stride0, count0, block0), slab(start1, stride1, count1, 1)]);
        let vreg = hyper(&vdims, vec![slab(1, 1, rows, 1), slab(0, 1, count1, 1)]);
        let lin = sreg.linear().unwrap();
        let pts: Vec<Vec<u64>> = lin.iter().map(|&i| vec![i / src_dims[1], i % src_dims[1]]).collect();
        let preg = Region::new(src_dims.to_vec(), RegionSelection::Points(pts)).unwrap();
        for (name, sr) in [("boxes", sreg), ("points", preg)] {
            let o = DatasetOptions::new(Datatype::int(4), &vdims)
                .fill_value(&(-1i32).to_ne_bytes())
                .virtual_mappings(&[map(".", "/s", vreg.clone(), sr)]);
            let v = f.root().create_dataset(name, &o).unwrap();
            let whole = v.read_all::<i32>().unwrap();
            // Row 0 is the fill; the rest the source's selected elements.
            let mut want = vec![-1i32; vdims[1] as usize];
            want.extend(lin.iter().map(|&i| i as i32));
            prop_assert_eq!(&whole, &want);
            let rc0 = rc.min((vdims[0] - r0.min(vdims[0] - 1)).div_ceil(rs));
            let r0 = r0.min(vdims[0] - 1);
            let sel = Selection::from_ranges(&[(r0, r0 + (rc0 - 1) * rs + 1, rs), (0, vdims[1], 1)]).unwrap();
            let got: Vec<i32> = v.read(&sel).unwrap();
            let mut exp = vec![];
            for i in (0..rc0).map(|j| r0 + j * rs) {
                exp.extend_from_slice(&want[(i * vdims[1]) as usize..((i + 1) * vdims[1]) as usize]);
            }
            prop_assert_eq!(got, exp);
        }
    }
}
