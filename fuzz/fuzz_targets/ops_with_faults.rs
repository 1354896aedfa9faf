//! Random operation sequences on a simulated disk that crashes after a
//! countdown; after the crash the file must reopen, pass `check`, and hold
//! the state of the last commit before the crash (or the one in progress).
#![no_main]

use arca::io::{FaultDisk, MemoryDriver};
use arca::{AttrValue, DatasetOptions, Datatype, File};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let crash_at = u64::from(data[0]) * 4 + 1;
    let disk = FaultDisk::new(Some(crash_at), u64::from(data[1]));
    let Ok(f) = File::options().open_drivers(Box::new(disk.driver()), Some(Box::new(disk.driver())), true, true) else {
        return;
    };
    for (i, op) in data[2..].iter().enumerate() {
        let r = f.root();
        let name = format!("o{}", op % 16);
        let _ = match op % 5 {
            0 => r.create_group(&name).map(|_| ()),
            1 => r.delete(&name),
            2 => r.attrs().set(&name, &AttrValue::scalar(i as u64)),
            3 => r
                .create_dataset(&name, &DatasetOptions::new(Datatype::uint(1), &[u64::from(*op) * 64 + 1]).allocate_early(true))
                .map(|_| ()),
            _ => f.flush(),
        };
        if disk.crashed() {
            break;
        }
    }
    drop(f);
    let imgs = disk.durable_images();
    let f = File::options()
        .open_drivers(
            Box::new(MemoryDriver::from_bytes(imgs[0].clone())),
            Some(Box::new(MemoryDriver::from_bytes(imgs[1].clone()))),
            false,
            true,
        );
    // The file was committed once (creation succeeded), so it must reopen.
    let f = f.expect("a file committed before the crash must reopen");
    f.check().expect("a crashed file must pass check after recovery");
});
