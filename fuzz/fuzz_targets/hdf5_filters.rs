//! Stored chunks of the HDF5 filters arca decodes itself: any bytes, read
//! as a chunk of a pipeline picked by the first byte, must decode or fail
//! with an error, never panic, hang or allocate past the chunk's size; and
//! what the lossless ones encode must decode to the same bytes.
#![no_main]

use arca::{decode_chunk, encode_chunk, Filter, Hdf5Filter};
use libfuzzer_sys::fuzz_target;

/// (id, values, element size, lossless) for each pick.
fn pipeline(pick: u8, len: usize) -> (u16, Vec<u32>, usize, bool) {
    let n = len as u32;
    match pick % 14 {
        0 => (32001, vec![2, 2, 4, n, 5, 1, 0], 4, true),
        1 => (32001, vec![2, 2, 8, n, 5, 2, 1], 8, true),
        2 => (32001, vec![2, 2, 2, n, 9, 1, 3], 2, true),
        3 => (32001, vec![2, 2, 1, n, 4, 0, 4], 1, true),
        4 => (32001, vec![2, 2, 4, n, 3, 2, 5], 4, true),
        5 => (32008, vec![0, 3, 4, 0, 2], 4, true),
        6 => (32008, vec![0, 3, 2, 64, 3, 3], 2, true),
        7 => (32008, vec![0, 3, 8], 8, true),
        8 => (32026, vec![1, 0, 4, n, 5, 1, 0], 4, true),
        9 => (4, vec![128 | 32 | 8, 16, 32, 64], 4, true),
        10 => (4, vec![128 | 16, 8, 16, 100], 2, true),
        11 => (
            6,
            [vec![2, 0, n / 4, 0, 4, 1, 0, 0], vec![0; 12]].concat(),
            4,
            true,
        ),
        12 => (
            6,
            [vec![0, 3, n / 8, 1, 8, 0, 1, 1, 7, 0], vec![0; 10]].concat(),
            8,
            false,
        ),
        _ => (5, vec![8, 0, n / 2, 1, 2, 1, 12, 2], 2, false),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // The chunk size a dataset would give: a whole number of elements.
    let (id, params, elem, lossless) = pipeline(pick, rest.len());
    let f = [Filter::Hdf5(Hdf5Filter::new(id, true, "", &params))];
    let size = rest.len() / elem * elem;
    for expect in [size, size + elem, 4096] {
        if let Ok(v) = decode_chunk(&f, elem, rest, 0, expect) {
            assert_eq!(v.len(), expect);
        }
    }
    let plain = &rest[..size];
    if lossless && !plain.is_empty() {
        if let Ok((enc, mask)) = encode_chunk(&f, elem, plain) {
            let back = decode_chunk(&f, elem, &enc, mask, plain.len()).expect("decodes");
            assert_eq!(back, plain);
        }
    }
});
