//! Each compression library is in the program once. c-blosc2 (HDF5's
//! blosc2 filter) is built against the zstd and lz4 arca's own codecs use
//! and answers its zlib calls with flate2, so a Blosc2 frame of every codec
//! reads and writes beside arca's zstd, lz4 and deflate, and the linked
//! program holds one definition of each library's entry points and no C
//! zlib at all (`crates/arca-blosc2/tests/linked_once.rs` checks that the
//! c-blosc2 library itself defines none of them).

use arca::{DatasetOptions, Datatype, File, Filter, Hdf5Filter};

/// The blosc2 filter's client data: filter version, block size (0: the
/// library's choice), type size, chunk bytes, level, shuffle, codec.
fn blosc2(codec: u32) -> Filter {
    Filter::Hdf5(Hdf5Filter::new(
        32026,
        true,
        "blosc2",
        &[2, 0, 4, 4096, 5, 1, codec],
    ))
}

#[test]
fn blosc2_frames_of_every_codec_beside_arcas_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.arca");
    let data: Vec<i32> = (0..20_000).map(|i| (i / 64) ^ (i % 3)).collect();
    let pipelines: Vec<(String, Vec<Filter>)> = vec![
        ("blosclz".into(), vec![blosc2(0)]),
        ("lz4".into(), vec![blosc2(1)]),
        ("lz4hc".into(), vec![blosc2(2)]),
        ("zlib".into(), vec![blosc2(4)]),
        ("zstd".into(), vec![blosc2(5)]),
        ("arca_zstd".into(), vec![Filter::Shuffle, Filter::Zstd(3)]),
        ("arca_lz4".into(), vec![Filter::Lz4]),
        ("arca_deflate".into(), vec![Filter::Deflate(6)]),
    ];
    let f = File::create(&path).unwrap();
    for (name, filters) in &pipelines {
        let o = DatasetOptions::new(Datatype::int(4), &[20_000])
            .chunks(&[1024])
            .filters(filters);
        let ds = f.root().create_dataset(name, &o).unwrap();
        ds.write_all(&data).unwrap();
        let stored: u64 = ds.stored_chunks().unwrap().iter().map(|c| c.size).sum();
        assert!(stored < 80_000 / 3, "{name}: {stored} bytes stored");
    }
    f.close().unwrap();
    let f = File::open(&path).unwrap();
    for (name, _) in &pipelines {
        assert_eq!(
            f.root().dataset(name).unwrap().read_all::<i32>().unwrap(),
            data,
            "{name}"
        );
    }

    // The linked test program itself: every definition, local ones too.
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("nm")
        .arg(&exe)
        .output()
        .expect("nm (binutils) lists the program's symbols");
    assert!(out.status.success());
    let listing = String::from_utf8_lossy(&out.stdout);
    let defined = |sym: &str| {
        listing
            .lines()
            .filter(|l| {
                let mut w = l.split_whitespace().rev();
                w.next() == Some(sym) && w.next().is_some_and(|t| "TtWw".contains(t))
            })
            .count()
    };
    for sym in [
        "ZSTD_decompressDCtx",
        "ZSTD_compressCCtx",
        "LZ4_decompress_safe",
        "LZ4_compress_HC",
        "blosc2_schunk_decompress_chunk",
    ] {
        assert_eq!(defined(sym), 1, "{sym} defined once");
    }
    for sym in [
        "inflate",
        "deflate",
        "uncompress",
        "compress2",
        "zlibVersion",
    ] {
        assert_eq!(defined(sym), 0, "no C zlib: {sym}");
    }
}
