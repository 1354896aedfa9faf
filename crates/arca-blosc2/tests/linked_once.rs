//! The c-blosc2 library this crate builds defines no zstd, lz4 or zlib
//! symbol of its own: it only refers to them, and zstd-sys, lz4-sys and
//! this crate's flate2 answers define them, once each in the program.

use std::process::Command;

/// `nm` of `path`: (type letter, symbol) for every line that has both.
fn symbols(path: &std::path::Path) -> Vec<(char, String)> {
    let out = Command::new("nm")
        .arg(path)
        .output()
        .expect("nm (binutils) lists symbols");
    assert!(out.status.success(), "nm {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().rev();
            let name = w.next()?;
            let kind = w.next()?.chars().next()?;
            Some((kind, name.to_string()))
        })
        .collect()
}

#[test]
fn c_blosc2_refers_to_the_shared_codec_libraries_and_defines_none() {
    let lib = std::path::Path::new(env!("OUT_DIR")).join("libarca_blosc2.a");
    let syms = symbols(&lib);
    let foreign = |s: &str| {
        [
            "ZSTD_", "ZDICT_", "ZSTDv0", "HUF_", "FSE_", "LZ4_", "XXH", "inflate", "deflate",
        ]
        .iter()
        .any(|p| s.starts_with(p))
            || ["compress2", "uncompress", "zlibVersion"].contains(&s)
    };
    let defined: Vec<&String> = syms
        .iter()
        .filter(|(k, s)| *k != 'U' && foreign(s))
        .map(|(_, s)| s)
        .collect();
    assert!(defined.is_empty(), "c-blosc2 defines {defined:?}");
    for needed in [
        "ZSTD_compressCCtx",
        "ZSTD_decompressDCtx",
        "LZ4_decompress_safe",
        "LZ4_compress_HC",
        "arca_blosc2_zlib_uncompress",
    ] {
        assert!(
            syms.iter().any(|(k, s)| *k == 'U' && s == needed),
            "c-blosc2 calls {needed}"
        );
    }

    // And in a program using every codec, each is defined once.
    let plain: Vec<u8> = (0..30_000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
    for codec in [0, 1, 2, 4, 5] {
        let f = arca_blosc2::encode_frame(&plain, 4, 5, 1, codec, 0).unwrap();
        assert_eq!(arca_blosc2::decode_frame(&f, plain.len()).unwrap(), plain);
    }
    let exe = symbols(&std::env::current_exe().unwrap());
    for sym in [
        "ZSTD_compressCCtx",
        "ZSTD_decompressDCtx",
        "LZ4_decompress_safe",
        "LZ4_compress_HC",
        "blosc2_schunk_decompress_chunk",
    ] {
        let n = exe.iter().filter(|(k, s)| *k != 'U' && s == sym).count();
        assert_eq!(n, 1, "{sym} defined {n} times");
    }
}
