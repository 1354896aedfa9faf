//! Compounds with variable-length members (strings, byte strings, ragged
//! sequences, nested): random types and values written to datasets of
//! every layout and vector option and to attributes, overwritten, read
//! back equal before and after reopening, through `repack` and `check`.

use arca::{AttrValue, ByteOrder, DatasetOptions, Datatype, File, Filter, Selection, VlenOptions};
use proptest::prelude::*;

mod common;
use common::Rng;

fn member() -> impl Strategy<Value = Datatype> {
    let order = prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)];
    prop_oneof![
        Just(Datatype::VlenStr),
        Just(Datatype::VlenBytes),
        (prop::sample::select(vec![1u8, 2, 4, 8]), order.clone())
            .prop_map(|(size, order)| Datatype::vlen(Datatype::Int { size, order }).unwrap()),
        (prop::sample::select(vec![4u8, 8]), order.clone())
            .prop_map(|(size, order)| Datatype::vlen(Datatype::Float { size, order }).unwrap()),
        (prop::sample::select(vec![1u8, 2, 4, 8]), order.clone())
            .prop_map(|(size, order)| Datatype::UInt { size, order }),
        (1u32..6).prop_map(Datatype::bytes),
        Just(Datatype::Bool),
    ]
}

/// A compound of random members with random gaps, at least one of them
/// variable-length, possibly inside a nested compound.
fn row_type() -> impl Strategy<Value = Datatype> {
    let flat = || prop::collection::vec((member(), 0u32..3), 1..5);
    (flat(), flat(), any::<bool>()).prop_map(|(a, b, nest)| {
        let build = |ms: Vec<(Datatype, u32)>, force: bool| {
            let mut at = 0;
            let mut fields = vec![];
            for (i, (t, gap)) in ms.into_iter().enumerate() {
                at += gap;
                let size = t.size() as u32;
                fields.push((format!("m{i}"), at, t));
                at += size;
            }
            if force {
                fields.push(("s".into(), at, Datatype::VlenStr));
                at += 16;
            }
            let f: Vec<(&str, u32, Datatype)> = fields
                .iter()
                .map(|(n, o, t)| (n.as_str(), *o, t.clone()))
                .collect();
            Datatype::compound(at, &f).unwrap()
        };
        let inner = build(b, true);
        if nest {
            let outer = build(a, false);
            Datatype::packed(&[("outer", outer), ("inner", inner)]).unwrap()
        } else {
            inner
        }
    })
}

/// One element in comparable form: its bytes with the records zeroed, and
/// each slot's value.
type Elem = (Vec<u8>, Vec<Vec<u8>>);

fn split(dt: &Datatype, n: usize, rows: &[u8]) -> Vec<Elem> {
    let size = dt.size();
    let (fixed, values) = rows.split_at(n * size);
    fixed
        .chunks_exact(size)
        .map(|e| {
            let mut bytes = e.to_vec();
            let mut vals = vec![];
            for (off, _) in dt.vlen_slots() {
                let o = u64::from_le_bytes(e[off..off + 8].try_into().unwrap()) as usize;
                let l = u64::from_le_bytes(e[off + 8..off + 16].try_into().unwrap()) as usize;
                vals.push(values[o..o + l].to_vec());
                bytes[off..off + 16].fill(0);
            }
            (bytes, vals)
        })
        .collect()
}

/// Random elements as a rows buffer; values placed in reverse element
/// order, so the buffer is not laid out as the library lays it out.
fn rows(dt: &Datatype, n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let size = dt.size();
    let mut fixed: Vec<u8> = (0..n * size).map(|_| r.next() as u8).collect();
    // Bools must be 0 or 1 to compare equal after a swap-free round trip;
    // any byte is kept as it is, so random bytes are fine.
    let mut values = vec![];
    for e in (0..n).rev() {
        for (off, t) in dt.vlen_slots() {
            let item = t.base().map_or(1, |b| b.size());
            let k = (r.next() % 5) as usize;
            let v: Vec<u8> = if t == Datatype::VlenStr {
                (0..k)
                    .map(|_| ["a", "é", "z", "€"][(r.next() % 4) as usize])
                    .collect::<String>()
                    .into_bytes()
            } else {
                (0..k * item).map(|_| r.next() as u8).collect()
            };
            let at = e * size + off;
            fixed[at..at + 8].copy_from_slice(&(values.len() as u64).to_le_bytes());
            fixed[at + 8..at + 16].copy_from_slice(&(v.len() as u64).to_le_bytes());
            values.extend_from_slice(&v);
        }
    }
    fixed.extend_from_slice(&values);
    fixed
}

#[derive(Debug, Clone)]
struct Case {
    dtype: Datatype,
    n: u64,
    seed: u64,
    layout: usize,
}

fn options(c: &Case) -> DatasetOptions {
    let o = DatasetOptions::new(c.dtype.clone(), &[c.n]);
    match c.layout {
        0 => o,
        1 => o.chunks(&[3]).maxshape(&[None]),
        2 => o
            .chunks(&[4])
            .filters(&[Filter::Shuffle, Filter::Zstd(1)])
            .vlen(
                VlenOptions::default()
                    .chunk_bytes(64)
                    .filters(&[Filter::Lz4]),
            ),
        _ => o.vlen(VlenOptions::default().reuse_space(true).chunk_bytes(100)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x00a1_10e5),
        ..ProptestConfig::with_cases(common::scaled(64))
    })]

    #[test]
    fn compounds_with_vlen_members_round_trip(
        dtype in row_type(), n in 1u64..30, seed in any::<u64>(), layout in 0usize..4,
    ) {
        let c = Case { dtype, n, seed, layout };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.arca");
        let first = rows(&c.dtype, c.n as usize, c.seed);
        let all = Selection::all(&[c.n]);
        let attr = AttrValue::new(c.dtype.clone(), &[c.n], first.clone()).unwrap();
        {
            let f = File::create(&path).unwrap();
            let ds = f.root().create_dataset("d", &options(&c)).unwrap();
            ds.write_rows(&all, &first).unwrap();
            ds.attrs().set("a", &attr).unwrap();
            prop_assert_eq!(
                split(&c.dtype, c.n as usize, &ds.read_rows(&all).unwrap()),
                split(&c.dtype, c.n as usize, &first)
            );
        }
        // Overwrite the second half (a reusing vector takes freed ranges).
        let half = c.n / 2;
        let tail = Selection::from_ranges(&[(half, c.n, 1)]).unwrap();
        let second = rows(&c.dtype, (c.n - half) as usize, !c.seed);
        let mut expect = split(&c.dtype, c.n as usize, &first);
        expect[half as usize..].clone_from_slice(&split(&c.dtype, (c.n - half) as usize, &second));
        {
            let f = File::open_rw(&path).unwrap();
            let ds = f.root().dataset("d").unwrap();
            ds.write_rows(&tail, &second).unwrap();
        }
        let check = |f: &File| {
            let ds = f.root().dataset("d").unwrap();
            prop_assert_eq!(ds.dtype().unwrap(), c.dtype.clone());
            let got = split(&c.dtype, c.n as usize, &ds.read_rows(&all).unwrap());
            prop_assert_eq!(&got, &expect);
            let got = split(&c.dtype, (c.n - half) as usize, &ds.read_rows(&tail).unwrap());
            prop_assert_eq!(&got[..], &expect[half as usize..]);
            let a = ds.attrs().get("a").unwrap();
            prop_assert_eq!(
                split(&c.dtype, c.n as usize, &a.data),
                split(&c.dtype, c.n as usize, &first)
            );
            Ok(())
        };
        let f = File::open(&path).unwrap();
        check(&f)?;
        f.check().unwrap();
        drop(f);
        let packed = dir.path().join("p.arca");
        arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
        let p = File::open(&packed).unwrap();
        check(&p)?;
        p.check().unwrap();
        let info = p.root().dataset("d").unwrap().vlen_info().unwrap().unwrap();
        prop_assert_eq!(info.vector_bytes, info.live_bytes);
    }
}

fn person() -> Datatype {
    Datatype::packed(&[
        (
            "id",
            Datatype::Int {
                size: 4,
                order: ByteOrder::Big,
            },
        ),
        ("name", Datatype::VlenStr),
        (
            "hits",
            Datatype::vlen(Datatype::Float {
                size: 8,
                order: ByteOrder::Big,
            })
            .unwrap(),
        ),
    ])
    .unwrap()
}

fn person_row(id: i32, name: &str, hits: &[f64]) -> Vec<u8> {
    let mut r = id.to_ne_bytes().to_vec();
    r.extend(0u64.to_le_bytes());
    r.extend((name.len() as u64).to_le_bytes());
    r.extend((name.len() as u64).to_le_bytes());
    r.extend((hits.len() as u64 * 8).to_le_bytes());
    r.extend(name.as_bytes());
    for h in hits {
        r.extend(h.to_ne_bytes());
    }
    r
}

#[test]
fn fixed_io_and_bad_rows_are_refused_with_typed_errors() {
    let f = File::in_memory().unwrap();
    let ds = f
        .root()
        .create_dataset("p", &DatasetOptions::new(person(), &[2]))
        .unwrap();
    let all = Selection::all(&[2]);
    let mut buf = vec![0u8; 2 * person().size()];
    assert!(matches!(
        ds.read_bytes(&all, &mut buf),
        Err(arca::Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ds.write_bytes(&all, &buf),
        Err(arca::Error::InvalidArgument(_))
    ));
    // One element's rows for two elements; a record past the values;
    // invalid UTF-8; two records over the same bytes.
    let one = person_row(1, "ab", &[1.0]);
    assert!(ds.write_rows(&all, &one).is_err());
    let sel = Selection::all(&[1]);
    let mut bad = one.clone();
    bad[4 + 8..4 + 16].copy_from_slice(&100u64.to_le_bytes());
    assert!(matches!(
        ds.write_rows(&sel, &bad),
        Err(arca::Error::InvalidArgument(_))
    ));
    let mut bad = one.clone();
    let at = person().size();
    bad[at] = 0xff;
    assert!(ds.write_rows(&sel, &bad).is_err());
    let mut bad = person_row(1, "abcdefgh", &[1.0]);
    bad[20..28].copy_from_slice(&0u64.to_le_bytes());
    assert!(ds.write_rows(&sel, &bad).is_err());
    // Nothing was written by the failed calls.
    let back = ds.read_rows(&all).unwrap();
    assert!(back.iter().all(|&b| b == 0));
    assert!(f
        .root()
        .create_dataset(
            "q",
            &DatasetOptions::new(person(), &[2]).fill_value(&[0; 36])
        )
        .is_err());
    assert!(f
        .root()
        .create_dataset(
            "c",
            &DatasetOptions::new(person(), &[2]).layout(arca::StorageLayout::Compact)
        )
        .is_err());
}

#[test]
fn big_endian_members_and_items_are_stored_swapped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("be.arca");
    {
        let f = File::create(&path).unwrap();
        let ds = f
            .root()
            .create_dataset("p", &DatasetOptions::new(person(), &[1]))
            .unwrap();
        ds.write_rows(
            &Selection::all(&[1]),
            &person_row(0x0102_0304, "Ada", &[2.0]),
        )
        .unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.windows(4).any(|w| w == [1, 2, 3, 4]));
    assert!(bytes.windows(8).any(|w| w == 2.0f64.to_be_bytes()));
    let f = File::open(&path).unwrap();
    let back = f
        .root()
        .dataset("p")
        .unwrap()
        .read_rows(&Selection::all(&[1]))
        .unwrap();
    assert_eq!(back, person_row(0x0102_0304, "Ada", &[2.0]));
}

#[test]
fn references_in_sequence_members_follow_objects_through_repack() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refs.arca");
    let t = Datatype::packed(&[
        ("n", Datatype::uint(1)),
        ("targets", Datatype::vlen(Datatype::Reference).unwrap()),
    ])
    .unwrap();
    {
        let f = File::create(&path).unwrap();
        let r = f.root();
        r.create_group("pad/a/b").unwrap();
        let g = r.create_group("g").unwrap();
        let d = r
            .create_dataset("x", &DatasetOptions::new(Datatype::int(4), &[3]))
            .unwrap();
        r.delete("pad").unwrap();
        let mut row = vec![2u8];
        row.extend(0u64.to_le_bytes());
        row.extend(16u64.to_le_bytes());
        row.extend(g.id().to_ne_bytes());
        row.extend(d.id().to_ne_bytes());
        let ds = r
            .create_dataset("r", &DatasetOptions::new(t.clone(), &[1]))
            .unwrap();
        ds.write_rows(&Selection::all(&[1]), &row).unwrap();
        r.attrs()
            .set("r", &AttrValue::new(t.clone(), &[1], row).unwrap())
            .unwrap();
    }
    let packed = dir.path().join("p.arca");
    arca::repack(&path, &packed, &mut |_, _| {}).unwrap();
    let f = File::open(&packed).unwrap();
    let r = f.root();
    let ids = |rows: &[u8]| -> Vec<u64> {
        rows[17..]
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    };
    let want = vec![r.group("g").unwrap().id(), r.dataset("x").unwrap().id()];
    assert_eq!(
        ids(&r
            .dataset("r")
            .unwrap()
            .read_rows(&Selection::all(&[1]))
            .unwrap()),
        want
    );
    assert_eq!(ids(&r.attrs().get("r").unwrap().data), want);
    for id in want {
        assert!(r.dereference(id).is_ok());
    }
}
