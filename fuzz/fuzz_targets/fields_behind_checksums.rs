//! Change fields of the structures of a complete file, make their checksums
//! valid again, and drive the public API over the result: the input chooses
//! up to four (structure, offset, width, value) mutations. Any panic, huge
//! allocation or hang is a finding, as is an r+ session that changes objects
//! it did not write or leaves one unreadable, or leaves a file that no longer
//! checks. The fixture holds the layouts of the classes that write over live
//! data unless the writer proves what the file says (a B-tree leaf before
//! zeros, a second name whose count a mutation can drop, contiguous
//! addresses to move), and the session exercises them (a member added to
//! that leaf's group, a commit before the deletes, one name of two deleted).
#![no_main]

#[path = "../../crates/arca/tests/common/fields.rs"]
#[allow(dead_code)]
mod fields;

use std::sync::OnceLock;

use fields::{Case, Fixture, Op};
use libfuzzer_sys::fuzz_target;

fn fixture() -> &'static Fixture {
    static FX: OnceLock<Fixture> = OnceLock::new();
    FX.get_or_init(|| Fixture::new(fields::build()))
}

/// Read one mutation from 8 bytes of input.
fn case(fx: &Fixture, b: &[u8]) -> Option<Case> {
    let t = u16::from_le_bytes([b[0], b[1]]) as usize % fx.targets.len();
    let tg = &fx.targets[t];
    let width = [1u8, 2, 4, 8][b[2] as usize % 4];
    if tg.ext.len < width as u64 {
        return None;
    }
    let span = tg.meaningful.min(tg.ext.len - width as u64 + 1).max(1);
    let off = u32::from_le_bytes([b[3], b[4], b[5], b[6]]) as u64 % span;
    let op = match b[7] % 9 {
        0 => Op::Zero,
        1 => Op::Ones,
        2 => Op::Inc,
        3 => Op::Dec,
        4 => Op::Put(tg.near.0, "next addr"),
        5 => Op::Put(tg.far.0, "far addr"),
        6 => Op::Put(tg.near.1, "next len"),
        7 => Op::Put(tg.far.1, "far len"),
        _ => Op::Put(fx.image.len() as u64, "file len"),
    };
    Some(Case {
        target: t,
        off,
        width,
        op,
    })
}

fuzz_target!(|data: &[u8]| {
    let fx = fixture();
    let cases: Vec<Case> = data
        .chunks_exact(8)
        .take(4)
        .filter_map(|b| case(fx, b))
        .collect();
    if cases.is_empty() {
        return;
    }
    let failures = fields::run(fx.apply(&cases), &fx.datasets);
    if let Some(f) = failures.first() {
        let what: Vec<String> = cases.iter().map(|c| fx.describe(c)).collect();
        panic!("{f}\n  after: {}", what.join("; "));
    }
});
