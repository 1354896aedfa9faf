//! Open arbitrary bytes as an arca file and walk everything in it: any
//! input must give an error or data, never a panic, hang or huge allocation.
#![no_main]

use arca::{File, Object, Selection};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = File::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = f.check();
    let _ = f.stat();
    let mut paths = vec![];
    let _ = f.root().visit(&mut |p, _| {
        paths.push(p.to_string());
        Ok(())
    });
    for p in paths.iter().take(1000) {
        match f.root().object(p) {
            Ok(Object::Dataset(d)) => {
                let (Ok(shape), Ok(t)) = (d.shape(), d.dtype()) else {
                    continue;
                };
                let n = shape
                    .iter()
                    .try_fold(t.size() as u64, |a, &x| a.checked_mul(x));
                if n.is_some_and(|n| n <= 1 << 24) {
                    let mut buf = vec![0u8; n.unwrap_or(0) as usize];
                    let _ = d.read_bytes(&Selection::all(&shape), &mut buf);
                }
                for a in d.attrs().names().unwrap_or_default() {
                    let _ = d.attrs().get(&a);
                }
            }
            Ok(Object::Group(g)) => {
                for a in g.attrs().names().unwrap_or_default() {
                    let _ = g.attrs().get(&a);
                }
            }
            Ok(Object::Datatype(t)) => {
                let _ = t.dtype();
                for a in t.attrs().names().unwrap_or_default() {
                    let _ = t.attrs().get(&a);
                }
            }
            Err(_) => {}
        }
    }
});
