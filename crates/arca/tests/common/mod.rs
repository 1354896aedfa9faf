//! Helpers shared by the integration tests.
#![allow(dead_code)]

use arca::{File, Object, Selection};

/// Path, element bytes, and (attribute name, value bytes) pairs.
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
            Object::Dataset(d) => {
                let shape = d.shape()?;
                let mut buf = vec![0u8; shape.iter().product::<u64>() as usize * d.dtype()?.size()];
                d.read_raw(&Selection::all(&shape), &mut buf)?;
                (d.attrs(), buf)
            }
        };
        let mut a = vec![];
        for n in attrs.names()? {
            a.push((n.clone(), attrs.get(&n)?.data));
        }
        out.push((p, data, a));
    }
    Ok(Snapshot(out))
}
