//! In-memory files: plain and compressed (pages in a compll arena).

mod common;

use arca::io::{CompressedMemoryDriver, Driver};
use arca::{DatasetOptions, Datatype, File, Filter, Selection};
use proptest::prelude::*;

#[test]
fn compressed_memory_file_holds_a_fraction_of_its_size() {
    let f = File::in_memory_compressed().unwrap();
    let n = 1 << 20;
    let data: Vec<f64> = (0..n).map(|i| (i / 64) as f64).collect();
    let ds = f
        .root()
        .create_dataset("x", &DatasetOptions::new(Datatype::float(8), &[n as u64]))
        .unwrap();
    ds.write_all(&data).unwrap();
    let c = f
        .root()
        .create_dataset(
            "c",
            &DatasetOptions::new(Datatype::int(4), &[1000, 100])
                .chunks(&[100, 100])
                .filters(&[Filter::Lz4]),
        )
        .unwrap();
    c.write_all(&(0..100_000).collect::<Vec<i32>>()).unwrap();
    f.flush().unwrap();
    let size = f.stat().unwrap().file_bytes;
    let held = f.memory_bytes().unwrap();
    assert!(size > 8 << 20);
    assert!(held * 4 < size, "holds {held} bytes for a {size}-byte file");
    assert_eq!(ds.read_all::<f64>().unwrap(), data);
    let part: Vec<i32> = c
        .read(&Selection::from_ranges(&[(10, 12, 1), (0, 100, 1)]).unwrap())
        .unwrap();
    assert_eq!(part, (1000..1200).collect::<Vec<i32>>());
    f.check().unwrap();
}

#[test]
fn plain_memory_file_reports_its_bytes() {
    let f = File::in_memory().unwrap();
    f.root().create_group("g").unwrap();
    f.flush().unwrap();
    assert!(f.memory_bytes().unwrap() >= f.stat().unwrap().file_bytes);
}

proptest! {
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0064),
        ..ProptestConfig::with_cases(common::scaled(64))
    })]
    /// The compressed driver behaves exactly like a byte vector.
    #[test]
    fn compressed_driver_matches_a_vector(ops in prop::collection::vec((0u64..200_000, prop::collection::vec(any::<u8>(), 0..40_000), any::<bool>()), 1..30)) {
        let mut d = CompressedMemoryDriver::new().unwrap();
        let mut model: Vec<u8> = vec![];
        for (off, data, truncate) in ops {
            if truncate {
                d.truncate(off).unwrap();
                model.resize(off as usize, 0);
            } else {
                d.write_at(off, &data).unwrap();
                let end = off as usize + data.len();
                if model.len() < end { model.resize(end, 0); }
                model[off as usize..end].copy_from_slice(&data);
            }
            prop_assert_eq!(d.len().unwrap(), model.len() as u64);
        }
        let mut all = vec![0u8; model.len()];
        d.read_at(0, &mut all).unwrap();
        prop_assert!(all == model);
        prop_assert!(d.read_at(model.len() as u64, &mut [0u8; 1]).is_err());
    }
}
