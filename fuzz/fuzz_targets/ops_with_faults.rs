//! Random operation sequences on a simulated disk that crashes after a
//! countdown; after the crash the file must reopen, pass `check`, and hold
//! the state of the last commit before the crash (or the one in progress).
//! Operations include variable-length ones: string datasets, ragged rows in
//! a space-reusing vector, repacks.
#![no_main]

use arca::io::{FaultDisk, MemoryDriver};
use arca::{AttrValue, DatasetOptions, Datatype, File, Object, Selection, VlenOptions};
use libfuzzer_sys::fuzz_target;

/// Small vector chunks, so that a few bytes span several.
fn small() -> VlenOptions {
    VlenOptions::default().chunk_bytes(64)
}

/// Write strings to every element of `name`, if it holds strings.
fn write_strings(f: &File, name: &str, i: usize, op: u8) -> arca::Result<()> {
    let d = f.root().dataset(name)?;
    let shape = d.shape()?;
    let n = shape.iter().product::<u64>() as usize;
    let s: Vec<String> = (0..n)
        .map(|k| "s".repeat((k * 7 + i + usize::from(op)) % 90))
        .collect();
    d.write_strings(&Selection::all(&shape), &s)
}

/// Write ragged f32 rows to the first elements of `name`, creating it as
/// a space-reusing vector if it does not exist.
fn write_ragged(f: &File, name: &str, i: usize, op: u8) -> arca::Result<()> {
    let r = f.root();
    let d = if r.contains(name)? {
        r.dataset(name)?
    } else {
        let t = Datatype::vlen(Datatype::float(4))?;
        let o = DatasetOptions::new(t, &[16]).vlen(small().reuse_space(true));
        r.create_dataset(name, &o)?
    };
    let rows = u64::from(op % 16) + 1;
    let mut values = vec![];
    let mut offsets = vec![0u64];
    for k in 0..rows as usize {
        values.extend((0..(k + i) % 23).map(|x| x as f32));
        offsets.push(values.len() as u64);
    }
    let sel = Selection::from_ranges(&[(0, rows.min(d.shape()?[0]), 1)])?;
    offsets.truncate(sel.len() as usize + 1);
    let used = *offsets.last().unwrap_or(&0) as usize;
    d.write_ragged(&sel, &values[..used], &offsets)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let crash_at = u64::from(data[0]) * 4 + 1;
    let disk = FaultDisk::new(Some(crash_at), u64::from(data[1]));
    let Ok(f) = File::options().open_drivers(
        Box::new(disk.driver()),
        Some(Box::new(disk.driver())),
        true,
        true,
    ) else {
        return;
    };
    for (i, op) in data[2..].iter().enumerate() {
        let r = f.root();
        let name = format!("o{}", op % 16);
        let _ = match op % 9 {
            0 => r.create_group(&name).map(|_| ()),
            1 => r.delete(&name),
            2 => r.attrs().set(&name, &AttrValue::scalar(i as u64)),
            3 => r
                .create_dataset(
                    &name,
                    &DatasetOptions::new(Datatype::uint(1), &[u64::from(*op) * 64 + 1])
                        .allocate_early(true),
                )
                .map(|_| ()),
            4 => f.flush(),
            5 => r
                .create_dataset(
                    &name,
                    &DatasetOptions::new(Datatype::VlenStr, &[u64::from(op % 7) + 1]).vlen(small()),
                )
                .map(|_| ()),
            6 => write_strings(&f, &name, i, *op),
            7 => write_ragged(&f, &name, i, *op),
            _ => r.dataset(&name).and_then(|d| d.vlen_repack()),
        };
        if disk.crashed() {
            break;
        }
    }
    drop(f);
    let imgs = disk.durable_images();
    let f = File::options().open_drivers(
        Box::new(MemoryDriver::from_bytes(imgs[0].clone())),
        Some(Box::new(MemoryDriver::from_bytes(imgs[1].clone()))),
        false,
        true,
    );
    // The file was committed once (creation succeeded), so it must reopen.
    let f = f.expect("a file committed before the crash must reopen");
    f.check()
        .expect("a crashed file must pass check after recovery");
    // Every variable-length element must read back whole.
    let mut names = vec![];
    f.root()
        .visit(&mut |p, _| {
            names.push(format!("/{p}"));
            Ok(())
        })
        .expect("the recovered file's objects must list");
    for p in names {
        if let Ok(Object::Dataset(d)) = f.root().object(&p) {
            if d.dtype().is_ok_and(|t| t.is_vlen()) {
                let shape = d.shape().expect("shape");
                d.read_ragged_bytes(&Selection::all(&shape))
                    .expect("a recovered variable-length dataset must read");
            }
        }
    }
});
