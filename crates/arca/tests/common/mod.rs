//! Helpers shared by the integration tests.
#![allow(dead_code)]

use arca::{Dataset, File, Object, Selection};

/// A deterministic generator (splitmix64): every random choice in the
/// tests is seeded, so a failure reproduces.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// `n` bytes no codec can shrink.
    pub fn noise(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 32) as u8).collect()
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

/// Path, element bytes, and (attribute name, value bytes) pairs. A
/// variable-length dataset's bytes are its values, then its offsets, its
/// vector length and its free bytes (little-endian u64s).
pub type Entry = (String, Vec<u8>, Vec<(String, Vec<u8>)>);

/// Everything a file holds, read through the public API.
#[derive(Debug, PartialEq, Clone)]
pub struct Snapshot(pub Vec<Entry>);

pub fn snapshot(f: &File) -> arca::Result<Snapshot> {
    let mut paths = vec![String::from("/")];
    f.root().visit(&mut |p, _| {
        paths.push(format!("/{p}"));
        Ok(())
    })?;
    let mut out = vec![];
    for p in paths {
        let obj = if p == "/" {
            Object::Group(f.root())
        } else {
            f.root().object(&p)?
        };
        let (attrs, data) = match obj {
            Object::Group(g) => (g.attrs(), vec![]),
            Object::Datatype(t) => (t.attrs(), t.dtype()?.to_string().into_bytes()),
            Object::Dataset(d) if d.dtype()?.is_vlen() => (d.attrs(), vlen_contents(&d)?),
            Object::Dataset(d) if d.dtype()?.has_vlen() => {
                let mut rows = d.read_rows(&Selection::all(&d.shape()?))?;
                let info = d
                    .vlen_info()?
                    .ok_or_else(|| arca::Error::InvalidArgument("no vector".into()))?;
                rows.extend_from_slice(&info.vector_bytes.to_le_bytes());
                (d.attrs(), rows)
            }
            Object::Dataset(d) => {
                let shape = d.shape()?;
                let mut buf = vec![0u8; shape.iter().product::<u64>() as usize * d.dtype()?.size()];
                d.read_bytes(&Selection::all(&shape), &mut buf)?;
                (d.attrs(), buf)
            }
        };
        let mut a = vec![];
        for n in attrs.names()? {
            a.push((n.clone(), attrs.get(&n)?.data));
        }
        out.push((p, data, a));
    }
    // Every link, soft and external ones and second names included.
    let mut links = String::new();
    f.root().visit_links(&mut |p, l| {
        links.push_str(&format!("{p} {l:?}\n"));
        Ok(())
    })?;
    out.push(("#links".into(), links.into_bytes(), vec![]));
    Ok(Snapshot(out))
}

/// A variable-length dataset's elements and the vector figures a rollback
/// must restore with them (length, free ranges of a reusing vector).
fn vlen_contents(d: &Dataset) -> arca::Result<Vec<u8>> {
    let (mut out, offsets) = d.read_ragged_bytes(&Selection::all(&d.shape()?))?;
    let info = d
        .vlen_info()?
        .ok_or_else(|| arca::Error::InvalidArgument("no vector".into()))?;
    for x in offsets
        .into_iter()
        .chain([info.vector_bytes, info.free_bytes])
    {
        out.extend_from_slice(&x.to_le_bytes());
    }
    Ok(out)
}

/// Flat row-major indices selected by `sel` in an array of `dims`.
pub fn indices(dims: &[u64], sel: &Selection) -> Vec<usize> {
    let rank = dims.len();
    let mut out = vec![];
    if sel.is_empty() {
        return out;
    }
    let mut idx = vec![0u64; rank];
    loop {
        let mut flat = 0u64;
        for d in 0..rank {
            flat = flat * dims[d] + sel.start()[d] + idx[d] * sel.step()[d];
        }
        out.push(flat as usize);
        let mut k = rank;
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < sel.shape()[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

pub mod fields;

/// `n` times `ARCA_TEST_SCALE` (a positive number, 1 when unset), at least 1:
/// the one knob every heavy test's count follows (`make check` runs 0.1,
/// a long soak 10).
///
/// # Panics
/// When `ARCA_TEST_SCALE` is set but is not a positive number.
pub fn scaled(n: u32) -> u32 {
    let scale = match std::env::var("ARCA_TEST_SCALE") {
        Err(_) => 1.0,
        Ok(s) => match s.parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => x,
            _ => panic!("ARCA_TEST_SCALE={s:?}: need a positive number"),
        },
    };
    ((f64::from(n) * scale).round() as u32).max(1)
}
