//! Every element type: random types (nested compounds with gaps, arrays,
//! enums, opaque bytes, float16, complex numbers, both byte orders) and
//! random values, written to datasets of every layout and to attributes,
//! read back equal before and after reopening, through `repack` and
//! `check`.

use arca::{
    AttrValue, ByteOrder, Charset, DatasetOptions, Datatype, File, Filter, Selection,
    StorageLayout, StrPad,
};
use proptest::prelude::*;

mod common;
use common::Rng;

fn order() -> impl Strategy<Value = ByteOrder> {
    prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)]
}

fn leaf() -> impl Strategy<Value = Datatype> {
    prop_oneof![
        Just(Datatype::Bool),
        (prop::sample::select(vec![1u8, 2, 4, 8]), order())
            .prop_map(|(size, order)| Datatype::Int { size, order }),
        (prop::sample::select(vec![1u8, 2, 4, 8]), order())
            .prop_map(|(size, order)| Datatype::UInt { size, order }),
        (prop::sample::select(vec![2u8, 4, 8]), order())
            .prop_map(|(size, order)| Datatype::Float { size, order }),
        (prop::sample::select(vec![8u8, 16]), order())
            .prop_map(|(size, order)| Datatype::Complex { size, order }),
        (1u32..9, any::<bool>(), 0u8..3).prop_map(|(len, utf8, pad)| Datatype::FixedBytes {
            len,
            cset: if utf8 { Charset::Utf8 } else { Charset::Ascii },
            pad: [StrPad::NullPad, StrPad::NullTerm, StrPad::SpacePad][pad as usize],
        }),
        (1u32..7, "[a-z\"\\\\ é]{0,5}").prop_map(|(len, tag)| Datatype::Opaque { len, tag }),
        (
            prop::sample::select(vec![1u8, 2, 4, 8]),
            any::<bool>(),
            order(),
            prop::collection::btree_set(-100i128..100, 1..5)
        )
            .prop_map(|(size, signed, order, values)| {
                let base = if signed {
                    Datatype::Int { size, order }
                } else {
                    Datatype::UInt { size, order }
                };
                let members: Vec<(String, i128)> = values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (format!("m{i}"), if signed { v } else { v + 100 }))
                    .collect();
                let m: Vec<(&str, i128)> = members.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                Datatype::enumeration(base, &m).unwrap()
            }),
    ]
}

fn dtype() -> impl Strategy<Value = Datatype> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (inner.clone(), prop::collection::vec(1u32..4, 1..3))
                .prop_filter_map("arrays hold non-array items", |(base, dims)| {
                    Datatype::array(base, &dims).ok()
                }),
            prop::collection::vec((inner, 0u32..3), 1..5).prop_map(|members| {
                // Members in order with random gaps, and a random tail.
                let mut at = 0;
                let mut fields = vec![];
                for (i, (t, gap)) in members.into_iter().enumerate() {
                    at += gap;
                    let size = t.size() as u32;
                    fields.push((format!("f{i}"), at, t));
                    at += size;
                }
                let f: Vec<(&str, u32, Datatype)> = fields
                    .iter()
                    .rev()
                    .map(|(n, o, t)| (n.as_str(), *o, t.clone()))
                    .collect();
                Datatype::compound(at + 1, &f).unwrap()
            }),
        ]
    })
}

/// Random element bytes: every bit pattern must come back as written
/// (swapped to the file's order and back).
fn values(dt: &Datatype, n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    (0..n * dt.size()).map(|_| r.next() as u8).collect()
}

#[derive(Debug, Clone)]
struct Case {
    dtype: Datatype,
    n: u64,
    seed: u64,
    layout: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (dtype(), 1u64..40, any::<u64>(), 0usize..4).prop_map(|(dtype, n, seed, layout)| Case {
        dtype,
        n,
        seed,
        layout,
    })
}

fn options(c: &Case) -> DatasetOptions {
    let o = DatasetOptions::new(c.dtype.clone(), &[c.n]);
    match c.layout {
        0 => o.layout(StorageLayout::Compact),
        1 => o.layout(StorageLayout::Contiguous),
        2 => o.chunks(&[7]),
        _ => o
            .chunks(&[5])
            .maxshape(&[None])
            .filters(&[Filter::Shuffle, Filter::Zstd(3)]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_07e5),
        ..ProptestConfig::with_cases(common::scaled(96))
    })]

    #[test]
    fn any_type_round_trips(c in case()) {
        // A compact header holds less than 4 KiB, elements, type and fill
        // value together: asked for more, it refuses with a typed error.
        let mut c = c;
        if c.layout == 0 && (c.n + 1) * c.dtype.size() as u64 + 512 >= 4096 {
            let refused = File::in_memory().unwrap().root().create_dataset("d", &options(&c)
                .fill_value(&values(&c.dtype, 1, 1)));
            if (c.n + 1) * c.dtype.size() as u64 >= 4096 {
                prop_assert!(matches!(refused, Err(arca::Error::InvalidArgument(_))));
            }
            c.layout = 1;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.arca");
        let data = values(&c.dtype, c.n as usize, c.seed);
        let fill = values(&c.dtype, 1, !c.seed);
        let attr = AttrValue::new(c.dtype.clone(), &[c.n], data.clone()).unwrap();
        {
            let f = File::create(&path).unwrap();
            let ds = f.root().create_dataset("d", &options(&c).fill_value(&fill)).unwrap();
            // The first half written, the rest left to the fill value.
            let half = c.n / 2;
            let sel = Selection::from_ranges(&[(0, half.max(1), 1)]).unwrap();
            ds.write_bytes(&sel, &data[..half.max(1) as usize * c.dtype.size()]).unwrap();
            ds.attrs().set("a", &attr).unwrap();
            f.root().attrs().set("s", &AttrValue::new(c.dtype.clone(), &[], fill.clone()).unwrap()).unwrap();
        }
        let check = |f: &File, whole: bool| {
            let ds = f.root().dataset("d").unwrap();
            prop_assert_eq!(ds.dtype().unwrap(), c.dtype.clone());
            let mut out = vec![0u8; data.len()];
            ds.read_bytes(&Selection::all(&[c.n]), &mut out).unwrap();
            let half = c.n / 2;
            let written = half.max(1) as usize * c.dtype.size();
            prop_assert_eq!(&out[..written], &data[..written]);
            if whole {
                prop_assert_eq!(&out, &data);
            } else {
                for e in out[written..].chunks(c.dtype.size()) {
                    prop_assert_eq!(e, &fill[..]);
                }
            }
            prop_assert_eq!(ds.fill_value().unwrap(), fill.clone());
            prop_assert_eq!(ds.attrs().get("a").unwrap(), attr.clone());
            let s = f.root().attrs().get("s").unwrap();
            prop_assert_eq!(s.dtype, c.dtype.clone());
            prop_assert_eq!(s.data, fill.clone());
            Ok(())
        };
        {
            let f = File::open(&path).unwrap();
            check(&f, false)?;
        }
        {
            let f = File::open_rw(&path).unwrap();
            f.root().dataset("d").unwrap().write_bytes(&Selection::all(&[c.n]), &data).unwrap();
        }
        let f = File::open(&path).unwrap();
        check(&f, true)?;
        f.check().unwrap();
        drop(f);
        let packed = dir.path().join("p.arca");
        arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
        let p = File::open(&packed).unwrap();
        check(&p, true)?;
        p.check().unwrap();
    }

    #[test]
    fn type_strings_round_trip(t in dtype()) {
        prop_assert_eq!(Datatype::parse(&t.to_numpy_str()).unwrap(), t.clone());
        prop_assert_eq!(t.native().native(), t.native());
        prop_assert!(!t.native().needs_swap());
    }
}

#[test]
fn big_endian_members_are_stored_swapped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("be.arca");
    let t = Datatype::parse(r#"struct(6){"a"@0:>u4,"b"@4:<u2}"#).unwrap();
    let f = File::create(&path).unwrap();
    let ds = f
        .root()
        .create_dataset(
            "d",
            &DatasetOptions::new(t.clone(), &[1]).layout(StorageLayout::Contiguous),
        )
        .unwrap();
    let mut e = 0x0102_0304u32.to_ne_bytes().to_vec();
    e.extend_from_slice(&0x0506u16.to_ne_bytes());
    ds.write_bytes(&Selection::all(&[1]), &e).unwrap();
    drop(ds);
    drop(f);
    let bytes = std::fs::read(&path).unwrap();
    let stored = [1u8, 2, 3, 4, 6, 5];
    assert!(
        bytes.windows(6).any(|w| w == stored),
        "a big-endian member then a little-endian one"
    );
}

#[test]
fn type_constructors_refuse_bad_types() {
    let f4 = Datatype::float(4);
    assert!(Datatype::compound(4, &[("a", 0, f4.clone()), ("b", 2, Datatype::int(2))]).is_err());
    assert!(Datatype::compound(4, &[("a", 1, f4.clone())]).is_err());
    assert!(Datatype::compound(16, &[("s", 0, Datatype::VlenStr)]).is_ok());
    assert!(Datatype::compound(20, &[("s", 0, Datatype::VlenStr), ("x", 12, f4.clone())]).is_err());
    assert!(Datatype::array(f4.clone(), &[0]).is_err());
    assert!(Datatype::array(Datatype::VlenStr, &[2]).is_err());
    assert!(Datatype::enumeration(f4.clone(), &[("a", 0)]).is_err());
    assert!(Datatype::enumeration(Datatype::uint(1), &[("a", 256)]).is_err());
    assert!(Datatype::enumeration(Datatype::int(1), &[("a", 1), ("b", 1)]).is_err());
    let p = Datatype::packed(&[("x", f4.clone()), ("n", Datatype::int(2))]).unwrap();
    assert_eq!(p.size(), 6);
    assert_eq!(p.to_numpy_str(), r#"struct(6){"x"@0:<f4,"n"@4:<i2}"#);
}

#[test]
fn references_lead_to_objects_and_follow_them_through_repack() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refs.arca");
    let row =
        Datatype::packed(&[("obj", Datatype::Reference), ("dim", Datatype::uint(4))]).unwrap();
    {
        let f = File::create(&path).unwrap();
        let r = f.root();
        // Objects created first move in a repack, so ids change.
        r.create_group("pad/a/b").unwrap();
        let g = r.create_group("grp").unwrap();
        let d = r
            .create_dataset("x", &DatasetOptions::new(Datatype::int(4), &[3]))
            .unwrap();
        r.delete("pad").unwrap();
        let refs = r
            .create_dataset(
                "refs",
                &DatasetOptions::new(Datatype::Reference, &[3]).chunks(&[2]),
            )
            .unwrap();
        let ids: Vec<u64> = vec![g.id(), 0, d.id()];
        refs.write_all(&ids).unwrap();
        let mut rec = d.id().to_ne_bytes().to_vec();
        rec.extend_from_slice(&7u32.to_ne_bytes());
        r.attrs()
            .set("row", &AttrValue::new(row.clone(), &[], rec).unwrap())
            .unwrap();
        // A ragged list of references, as dimension scales keep them.
        let mut payload = vec![];
        for n in [8u64, 16] {
            payload.extend_from_slice(&n.to_le_bytes());
        }
        for id in [g.id(), d.id(), d.id()] {
            payload.extend_from_slice(&id.to_ne_bytes());
        }
        let vref = Datatype::vlen(Datatype::Reference).unwrap();
        assert_eq!(vref.to_numpy_str(), "vlen:ref");
        let lists = AttrValue::new(vref, &[2], payload).unwrap();
        d.attrs().set("lists", &lists).unwrap();
        assert!(r.dereference(0).is_err());
        assert!(matches!(
            r.dereference(12345),
            Err(arca::Error::NotFound(_))
        ));
    }
    let check = |f: &File| {
        let r = f.root();
        let ids: Vec<u64> = r.dataset("refs").unwrap().read_all().unwrap();
        assert_eq!(ids[1], 0);
        assert_eq!(
            r.dereference(ids[0]).unwrap().id(),
            r.group("grp").unwrap().id()
        );
        let x = r.dataset("x").unwrap();
        match r.dereference(ids[2]).unwrap() {
            arca::Object::Dataset(d) => assert_eq!(d.path(), "/x"),
            _ => panic!("a dataset"),
        }
        let rec = r.attrs().get("row").unwrap();
        assert_eq!(
            u64::from_ne_bytes(rec.data[..8].try_into().unwrap()),
            x.id()
        );
        let (vals, offs) = x.attrs().get("lists").unwrap().to_ragged::<u64>().unwrap();
        assert_eq!(offs, [0, 1, 3]);
        assert_eq!(vals, [r.group("grp").unwrap().id(), x.id(), x.id()]);
        f.check().unwrap();
        ids
    };
    let before = check(&File::open(&path).unwrap());
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    let after = check(&File::open(&packed).unwrap());
    assert_ne!(before, after, "the repacked objects have new ids");
}

#[test]
fn null_dataspaces_hold_a_type_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("null.arca");
    let t = Datatype::parse(r#"struct(8){"a"@0:<f4,"b"@4:>i4}"#).unwrap();
    {
        let f = File::create(&path).unwrap();
        let r = f.root();
        let d = r
            .create_dataset("e", &DatasetOptions::empty(t.clone()))
            .unwrap();
        assert!(d.is_null().unwrap());
        assert_eq!((d.len().unwrap(), d.shape().unwrap()), (0, vec![]));
        let mut one = [0u8; 8];
        assert!(d.read_bytes(&Selection::all(&[]), &mut one).is_err());
        assert!(d.write_bytes(&Selection::all(&[]), &one).is_err());
        assert!(d.resize(&[1]).is_err());
        assert!(r
            .create_dataset("bad", &DatasetOptions::empty(Datatype::int(4)).chunks(&[1]))
            .is_err());
        r.attrs()
            .set("none", &AttrValue::empty(Datatype::float(8)))
            .unwrap();
        let mut bad = AttrValue::empty(Datatype::float(8));
        bad.data = vec![0; 8];
        assert!(r.attrs().set("bad", &bad).is_err());
        // A scalar is not a null dataspace.
        let s = r
            .create_dataset("scalar", &DatasetOptions::new(t.clone(), &[]))
            .unwrap();
        assert!(!s.is_null().unwrap());
    }
    let check = |f: &File| {
        let r = f.root();
        let d = r.dataset("e").unwrap();
        assert!(d.is_null().unwrap());
        assert_eq!(d.dtype().unwrap(), t);
        let a = r.attrs().get("none").unwrap();
        assert!(a.null && a.data.is_empty() && a.dtype == Datatype::float(8));
        assert!(!r.attrs().get("none").unwrap().shape.iter().any(|_| true));
        f.check().unwrap();
    };
    check(&File::open(&path).unwrap());
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    check(&File::open(&packed).unwrap());
}

#[test]
fn extended_precision_floats_are_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.arca");
    let t = Datatype::parse("<f16").unwrap();
    let c = Datatype::parse("<c32").unwrap();
    assert_eq!((t.size(), c.size()), (16, 32));
    // 1/3 to x87 precision: bytes an f64 cannot hold.
    let third: [u8; 16] = [
        0xab, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xfd, 0x3f, 0, 0, 0, 0, 0, 0,
    ];
    assert!((arca::extended_to_f64(&third) - 1.0 / 3.0).abs() < 1e-16);
    {
        let f = File::create(&path).unwrap();
        let d = f
            .root()
            .create_dataset("x", &DatasetOptions::new(t.clone(), &[2]).chunks(&[1]))
            .unwrap();
        let mut v = third.to_vec();
        v.extend(arca::f64_to_extended(-2.5));
        d.write_bytes(&Selection::all(&[2]), &v).unwrap();
        let z = f
            .root()
            .create_dataset("z", &DatasetOptions::new(c.clone(), &[1]))
            .unwrap();
        z.write_bytes(&Selection::all(&[1]), &v).unwrap();
        let be = Datatype::parse(">f16").unwrap();
        let b = f
            .root()
            .create_dataset("be", &DatasetOptions::new(be, &[1]))
            .unwrap();
        b.write_bytes(&Selection::all(&[1]), &third).unwrap();
        f.close().unwrap();
    }
    let f = File::open(&path).unwrap();
    f.check().unwrap();
    let d = f.root().dataset("x").unwrap();
    assert_eq!(d.dtype().unwrap(), t);
    let mut out = vec![0u8; 32];
    d.read_bytes(&Selection::all(&[2]), &mut out).unwrap();
    assert_eq!(out[..16], third);
    assert_eq!(arca::extended_to_f64(&out[16..]), -2.5);
    let z = f.root().dataset("z").unwrap();
    let mut zo = vec![0u8; 32];
    z.read_bytes(&Selection::all(&[1]), &mut zo).unwrap();
    assert_eq!(zo, out);
    let b = f.root().dataset("be").unwrap();
    let mut bo = vec![0u8; 16];
    b.read_bytes(&Selection::all(&[1]), &mut bo).unwrap();
    assert_eq!(bo, third);
    // Sequences of them are sequences of any other base.
    assert!(Datatype::vlen(t).unwrap().base().is_some());
}
