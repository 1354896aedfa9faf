//! Region references: a dataset and a selection of it, stored in datasets
//! and attributes, checked on write and by `check`, pointed at the copies
//! by `repack`; their decoder takes any bytes without panicking.

mod common;

use arca::{
    AttrValue, DatasetOptions, Datatype, Error, File, Region, RegionRef, RegionSelection,
    Selection, SlabDim,
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

#[test]
fn stored_read_checked_and_repacked() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    let sel = |s| Region::new(vec![6, 10], s).unwrap();
    let regions = [
        sel(RegionSelection::Hyperslab(vec![
            slab(1, 3, 2, 2),
            slab(0, 2, 5, 1),
        ])),
        sel(RegionSelection::Points(vec![vec![5, 9], vec![0, 0]])),
        sel(RegionSelection::Blocks(vec![
            (vec![0, 0], vec![2, 2]),
            (vec![4, 4], vec![1, 3]),
        ])),
        sel(RegionSelection::All),
        sel(RegionSelection::None),
    ];
    {
        let f = File::create(&a).unwrap();
        let root = f.root();
        // Space before the data, freed, so that repack moves it.
        root.create_dataset("pad", &DatasetOptions::new(Datatype::uint(1), &[5000]))
            .unwrap()
            .write_all(&[1u8; 5000])
            .unwrap();
        let d = root
            .create_dataset("d", &DatasetOptions::new(Datatype::int(4), &[6, 10]))
            .unwrap();
        root.delete("pad").unwrap();
        let refs: Vec<Option<RegionRef>> = regions
            .iter()
            .map(|r| {
                Some(RegionRef {
                    object: d.id(),
                    region: r.clone(),
                })
            })
            .chain([None])
            .collect();
        let n = refs.len() as u64;
        let ds = root
            .create_dataset("refs", &DatasetOptions::new(Datatype::RegionRef, &[n]))
            .unwrap();
        ds.write_region_refs(&Selection::all(&[n]), &refs).unwrap();
        root.attrs()
            .set("refs", &AttrValue::region_refs(&[n], &refs).unwrap())
            .unwrap();
        // Bytes that are no region reference are refused, the file unchanged.
        let e = ds
            .write_vlen_bytes(&Selection::all(&[1]), &[vec![1u8, 2, 3]])
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        let bad = AttrValue::vlen_bytes(&[1], &[vec![9u8; 12]]).unwrap();
        let bad = AttrValue {
            dtype: Datatype::RegionRef,
            ..bad
        };
        assert!(matches!(
            root.attrs().set("bad", &bad),
            Err(Error::InvalidArgument(_))
        ));
        // Region references stand alone: not inside compounds.
        assert!(Datatype::parse(r#"struct(16){"r"@0:vlen:region}"#).is_err());
        f.check().unwrap();
        f.close().unwrap();
    }
    arca::repack(&a, &b, &mut |_, _| {}).unwrap();
    for path in [&a, &b] {
        let f = File::open(path).unwrap();
        let root = f.root();
        let d = root.dataset("d").unwrap();
        let ds = root.dataset("refs").unwrap();
        let n = ds.shape().unwrap()[0];
        let got = ds.read_region_refs(&Selection::all(&[n])).unwrap();
        let attr = root.attrs().get("refs").unwrap().to_region_refs().unwrap();
        assert_eq!(got, attr);
        assert_eq!(got.last(), Some(&None));
        for (r, want) in got.iter().zip(&regions) {
            let r = r.as_ref().unwrap();
            assert_eq!((r.object, &r.region), (d.id(), want));
        }
        f.check().unwrap();
    }
    assert_ne!(
        File::open(&a).unwrap().root().dataset("d").unwrap().id(),
        File::open(&b).unwrap().root().dataset("d").unwrap().id()
    );
}

fn selection() -> impl Strategy<Value = Region> {
    let dims = prop::collection::vec(1u64..6, 1..4);
    dims.prop_flat_map(|dims| {
        let rank = dims.len();
        let d2 = dims.clone();
        let point = dims
            .iter()
            .map(|&n| 0..n)
            .collect::<Vec<_>>()
            .prop_map(|c| c);
        let points = prop::collection::vec(point, 0..5).prop_map(RegionSelection::Points);
        let slabs = dims
            .iter()
            .map(|&n| {
                (0..n, 1u64..3, 0u64..3, 1u64..3).prop_filter_map("fits", move |(a, s, c, b)| {
                    let b = b.min(s);
                    let fits = c == 0 || a + (c - 1) * s + b <= n;
                    fits.then_some(slab(a, s, c, b))
                })
            })
            .collect::<Vec<_>>()
            .prop_map(RegionSelection::Hyperslab);
        let boxes = prop::collection::vec(
            dims.iter()
                .map(|&n| (0..n).prop_flat_map(move |a| (Just(a), 1..=n - a)))
                .collect::<Vec<_>>(),
            0..4,
        )
        .prop_map(|bs| {
            RegionSelection::Blocks(
                bs.into_iter()
                    .map(|b| b.into_iter().unzip::<u64, u64, Vec<_>, Vec<_>>())
                    .collect(),
            )
        });
        let _ = rank;
        prop_oneof![
            Just(RegionSelection::All),
            Just(RegionSelection::None),
            points,
            slabs,
            boxes,
        ]
        .prop_map(move |s| Region::new(d2.clone(), s).unwrap())
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5e1_ec75),
        ..ProptestConfig::with_cases(common::scaled(256))
    })]

    /// Every selection round-trips, and its elements lie inside its dims,
    /// in row-major order for all but points, each once.
    #[test]
    fn selections_round_trip(r in selection(), object in 4096u64..1 << 40) {
        let rr = RegionRef { object, region: r.clone() };
        prop_assert_eq!(RegionRef::from_bytes(&rr.to_bytes()).unwrap(), rr);
        let total: u64 = r.dims.iter().product();
        let lin = r.linear().unwrap();
        prop_assert_eq!(lin.len() as u64, r.len().unwrap());
        prop_assert!(lin.iter().all(|&i| i < total));
        if !matches!(r.selection, RegionSelection::Points(_)) {
            prop_assert!(lin.windows(2).all(|w| w[0] < w[1]));
        }
    }

    /// Any bytes, and any change to a valid encoding, decode or fail with
    /// `Corrupt`; never a panic.
    #[test]
    fn damaged_bytes_never_panic(
        r in selection(),
        at in 0usize..512,
        v in any::<u8>(),
        junk in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut b = RegionRef { object: 8192, region: r }.to_bytes();
        if !b.is_empty() {
            let i = at % b.len();
            b[i] = v;
        }
        for bytes in [&b[..], &junk[..], &b[..b.len() / 2]] {
            match RegionRef::from_bytes(bytes) {
                Ok(r) => {
                    // What decodes is whole: its elements can be listed.
                    let _ = r.region.linear();
                }
                Err(e) => prop_assert!(matches!(e, Error::Corrupt { .. }), "{}", e),
            }
        }
    }
}
