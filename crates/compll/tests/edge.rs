//! Edge cases: full blocks, the largest node, every alignment, eviction
//! while blocks are pinned, guards outliving changes, codec failures.
//! Invariant names (C1–C7, H1–H13) refer to the `heap` module docs.

use std::sync::Arc;

use compll::{Arena, BlockCodec, Codec, Config, Error, Handle, SharedArena};

fn arena(bs: usize, align: usize, unc: usize) -> Arena {
    Arena::new(
        Config::default()
            .block_size(bs)
            .alignment(align)
            .uncompressed_blocks(unc)
            .codec(Codec::Lz4),
    )
    .unwrap()
}

fn block_of(h: compll::Handle) -> u64 {
    h.to_raw() >> 24
}

#[test]
fn full_block_spills_into_a_new_one() {
    let a = arena(1024, 8, 2);
    let first = a.alloc(40).unwrap();
    let mut n = 1;
    loop {
        let h = a.alloc(40).unwrap();
        if block_of(h) != block_of(first) {
            break;
        }
        n += 1;
    }
    assert!(n > 10, "only {n} nodes fit in a 1 KiB block");
    a.check_invariants().unwrap(); // C1, C6, H5
    assert_eq!(a.stats().blocks, 2);
}

#[test]
fn largest_block_node_and_one_more_byte() {
    for bs in [1024, 4096, 32 * 1024, 1 << 20] {
        let a = arena(bs, 8, 2);
        let max = a.max_block_node();
        let h = a.alloc(max).unwrap();
        assert_ne!(
            h.to_raw() & 0xff_ffff,
            0,
            "largest node lives in a normal block"
        );
        assert_eq!(a.len(h).unwrap(), max);
        let big = a.alloc(max + 1).unwrap();
        assert_eq!(
            big.to_raw() & 0xff_ffff,
            0,
            "larger node gets its own block"
        );
        assert_eq!(a.len(big).unwrap(), max + 1);
        let pattern: Vec<u8> = (0..max + 1).map(|i| (i * 7) as u8).collect();
        a.write_at(big, 0, &pattern).unwrap();
        a.write_at(h, 0, &pattern[..max]).unwrap();
        a.flush().unwrap();
        assert_eq!(&a.read(big).unwrap()[..], &pattern[..]);
        assert_eq!(&a.read(h).unwrap()[..], &pattern[..max]);
        a.check_invariants().unwrap(); // C1 with a single chunk, H1 after flush
        a.free(big).unwrap();
        a.free(h).unwrap();
        a.check_invariants().unwrap();
    }
}

#[test]
fn every_alignment_is_honoured() {
    for bs in [1024usize, 3000, 65_536, 1 << 20, 16 << 20] {
        for align in [1usize, 2, 4, 8, 16] {
            let a = arena(bs, align, 2);
            let eff = a.alignment();
            assert!(eff >= align && eff.is_multiple_of(align));
            let mut hs = Vec::new();
            for size in [0usize, 1, 3, 7, 13, 100, 250] {
                let h = a.alloc(size).unwrap();
                assert_eq!(
                    (h.to_raw() & 0xff_ffff) as usize % eff,
                    0,
                    "bs {bs} align {align}"
                );
                hs.push(h);
            }
            for h in hs.iter().step_by(2) {
                a.free(*h).unwrap();
            }
            a.check_invariants().unwrap(); // C3: frees merged
        }
    }
}

#[test]
fn large_blocks_raise_alignment() {
    // Up to 16-byte units the tags stay two bytes wide; beyond that they
    // widen to four bytes and the requested alignment is kept.
    let a = Arena::new(Config::default().block_size(1 << 20).alignment(1)).unwrap();
    assert_eq!(a.alignment(), 1);
    let a = Arena::new(Config::default().block_size(512 * 1024).alignment(1)).unwrap();
    assert_eq!(a.alignment(), 16);
    let a = Arena::new(Config::default().block_size(64 * 1024).alignment(1)).unwrap();
    assert_eq!(a.alignment(), 2);
}

#[test]
fn block_evicted_while_another_is_pinned() {
    let a = arena(1024, 8, 1);
    let pinned = a.alloc(900).unwrap();
    a.write_at(pinned, 0, &[0xAB; 900]).unwrap();
    let guard = a.read(pinned).unwrap();
    // Each of these lands in a new block; with room for one uncompressed
    // block the cache must grow past its limit instead of dropping the
    // pinned one (H4), and everything else gets evicted and compressed.
    let others: Vec<_> = (0..5)
        .map(|i| {
            let h = a.alloc(900).unwrap();
            a.write_at(h, 0, &[i as u8; 900]).unwrap();
            h
        })
        .collect();
    for (i, h) in others.iter().enumerate() {
        assert!(a.read(*h).unwrap().iter().take(900).all(|&b| b == i as u8));
    }
    assert!(guard[..900].iter().all(|&b| b == 0xAB));
    a.check_invariants().unwrap(); // H3, H4
    drop(guard);
    // Unpinning shrinks the cache back to one block.
    let s = a.stats();
    assert!(s.uncompressed_bytes <= 2 * 1024, "{s:?}");
    a.check_invariants().unwrap();
    assert!(a.read(pinned).unwrap()[..900].iter().all(|&b| b == 0xAB));
}

#[test]
fn read_guard_keeps_its_snapshot() {
    let a = arena(4096, 8, 2);
    let h = a.alloc(16).unwrap();
    a.write_at(h, 0, b"0123456789abcdef").unwrap();
    let g = a.read(h).unwrap();
    a.write_at(h, 0, b"XXXX").unwrap();
    assert_eq!(&g[..4], b"0123");
    a.free(h).unwrap();
    assert_eq!(
        &g[..4],
        b"0123",
        "freeing does not pull bytes from under a guard"
    );
    drop(g);
    assert!(a.read(h).is_err());
    a.check_invariants().unwrap();
}

#[test]
fn write_guard_conflicts_are_errors() {
    let a = arena(4096, 8, 2);
    let h = a.alloc(8).unwrap();
    let other = a.alloc(8).unwrap();
    let mut w = a.write(h).unwrap();
    w[0] = 42;
    assert!(matches!(a.write(h), Err(Error::Busy(_))));
    assert!(matches!(a.free(h), Err(Error::Busy(_))));
    assert!(matches!(a.write_at(h, 0, &[1]), Err(Error::Busy(_))));
    let mut b = [0u8; 1];
    assert!(matches!(a.read_and_free(h, 0, &mut b), Err(Error::Busy(_))));
    // Other nodes in the same block stay usable.
    a.write_at(other, 0, &[7]).unwrap();
    assert_eq!(a.read(other).unwrap()[0], 7);
    drop(w);
    assert_eq!(a.read(h).unwrap()[0], 42);
    a.read_and_free(h, 0, &mut b).unwrap();
    assert_eq!(b, [42]);
    assert!(matches!(
        a.read_and_free(h, 0, &mut b),
        Err(Error::InvalidHandle(_))
    ));
    a.check_invariants().unwrap();
}

#[test]
fn emptied_blocks_are_released() {
    let a = arena(1024, 8, 1);
    let hs: Vec<_> = (0..200).map(|_| a.alloc(50).unwrap()).collect();
    let highest = hs.iter().map(|h| block_of(*h)).max().unwrap();
    assert!(a.stats().blocks > 5);
    for h in hs {
        a.free(h).unwrap();
    }
    a.flush().unwrap();
    let s = a.stats();
    assert_eq!(s.blocks, 0, "{s:?}");
    assert_eq!(s.compressed_bytes, 0);
    a.check_invariants().unwrap(); // H8
                                   // Vacant block indices are reused.
    let h = a.alloc(10).unwrap();
    assert!(block_of(h) <= highest);
}

#[test]
fn compressed_copy_is_kept_until_written() {
    // Without the node cache every read of an uncached block decompresses.
    let a = Arena::new(
        Config::default()
            .block_size(4096)
            .uncompressed_blocks(1)
            .node_cache(0),
    )
    .unwrap();
    let x = a.alloc(100).unwrap();
    let y = a.alloc(3000).unwrap(); // second block? no: same block
    let z = a.alloc(3000).unwrap(); // forces a second block
    assert_ne!(block_of(x), block_of(z));
    let c0 = a.stats().compressions;
    // Reading blocks back and forth decompresses but never recompresses
    // clean blocks.
    for _ in 0..10 {
        a.read(x).unwrap();
        a.read(z).unwrap();
    }
    let s = a.stats();
    assert!(s.compressions <= c0 + 2, "{s:?}");
    assert!(s.decompressions >= 10);
    assert!(s.hit_rate() < 1.0);
    let _ = y;
    a.check_invariants().unwrap(); // H2
}

struct Failing {
    fail_compress: bool,
}

impl BlockCodec for Failing {
    fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), String> {
        if self.fail_compress {
            return Err("no".into());
        }
        // Half the input: "shrinks", so the block is stored encoded.
        dst.extend_from_slice(&src[..src.len() / 2]);
        Ok(())
    }
    fn decompress(&self, _src: &[u8], _dst: &mut [u8]) -> Result<(), String> {
        Err("broken".into())
    }
}

#[test]
fn codec_failures_are_errors_not_panics() {
    // Compression failing: blocks are stored raw and stay readable.
    let a = Arena::new(
        Config::default()
            .block_size(1024)
            .uncompressed_blocks(1)
            .codec(Codec::Custom(Arc::new(Failing {
                fail_compress: true,
            }))),
    )
    .unwrap();
    let h1 = a.alloc(900).unwrap();
    a.write_at(h1, 0, &[5; 900]).unwrap();
    let h2 = a.alloc(900).unwrap();
    assert_eq!(a.read(h1).unwrap()[..900], [5; 900]);
    let _ = h2;
    a.check_invariants().unwrap();

    // Decompression failing: the access reports a codec error.
    let a = Arena::new(
        Config::default()
            .block_size(1024)
            .uncompressed_blocks(1)
            .codec(Codec::Custom(Arc::new(Failing {
                fail_compress: false,
            }))),
    )
    .unwrap();
    let h1 = a.alloc(900).unwrap();
    let _h2 = a.alloc(900).unwrap(); // evicts h1's block
    assert!(matches!(a.read(h1), Err(Error::Codec(_))));
    assert!(matches!(a.free(h1), Err(Error::Codec(_))));
}

#[test]
fn dictionary_is_trained_and_used() {
    let a = Arena::new(
        Config::default()
            .block_size(4096)
            .uncompressed_blocks(2)
            .codec(Codec::ZstdDict {
                level: 3,
                train_blocks: 8,
                dict_size: 2048,
            }),
    )
    .unwrap();
    let mut hs = Vec::new();
    for i in 0..2000u32 {
        let h = a.alloc(60).unwrap();
        let text = format!("file-{i:06}.txt size {} owner user{}", i * 37, i % 7);
        a.write_at(h, 0, text.as_bytes()).unwrap();
        hs.push((h, text));
    }
    a.flush().unwrap();
    assert!(a.dictionary_len().is_some());
    for (h, text) in &hs {
        assert_eq!(&a.read(*h).unwrap()[..text.len()], text.as_bytes());
    }
    a.check_invariants().unwrap(); // H2 for dictionary-encoded blocks
}

#[test]
fn shared_arena_guards_across_threads() {
    let a = Arc::new(
        SharedArena::new(Config::default().block_size(2048).uncompressed_blocks(2)).unwrap(),
    );
    let hs: Vec<_> = (0..64u8)
        .map(|i| {
            let h = a.alloc(100).unwrap();
            a.write_at(h, 0, &[i; 100]).unwrap();
            h
        })
        .collect();
    let hs = Arc::new(hs);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let a = Arc::clone(&a);
            let hs = Arc::clone(&hs);
            std::thread::spawn(move || {
                for round in 0..50 {
                    let i = (t * 13 + round * 7) % hs.len();
                    let g = a.read(hs[i]).unwrap();
                    assert!(g[..100].iter().all(|&b| b == i as u8));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    a.check_invariants().unwrap();
}

#[test]
fn node_cache_serves_scattered_reads_and_sees_writes() {
    let a = Arena::new(Config::default().block_size(1024).uncompressed_blocks(1)).unwrap();
    let hs: Vec<_> = (0..40u8)
        .map(|i| a.alloc_init(100, &[i; 100]).unwrap())
        .collect();
    // Nodes spread over many blocks, read round-robin: the first pass
    // decompresses, later passes are served from node copies.
    for _ in 0..3 {
        for (i, h) in hs.iter().enumerate() {
            assert_eq!(a.read(*h).unwrap()[..100], [i as u8; 100]);
        }
    }
    let d = a.stats().decompressions;
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(a.read(*h).unwrap()[..100], [i as u8; 100]);
    }
    assert!(a.stats().decompressions - d < 10, "{:?}", a.stats());
    // A write replaces the copy (H9).
    a.write_at(hs[3], 0, &[0xEE; 4]).unwrap();
    a.flush().unwrap();
    assert_eq!(a.read(hs[3]).unwrap()[..5], [0xEE, 0xEE, 0xEE, 0xEE, 3]);
    a.free(hs[4]).unwrap();
    assert!(a.read(hs[4]).is_err());
    a.check_invariants().unwrap();
}

/// Fixed-layout records with a counter, a constant and a repeated link, as
/// a tree of nodes would hold them, plus a varying tail.
fn records(a: &Arena, n: u64) -> Vec<compll::Handle> {
    (0..n)
        .map(|i| {
            let mut r = Vec::new();
            r.extend_from_slice(&(1_000_000 + i).to_le_bytes());
            r.extend_from_slice(&7u64.to_le_bytes());
            r.extend_from_slice(&(i / 50).to_le_bytes());
            r.extend_from_slice(&(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40).to_le_bytes());
            r.extend_from_slice(format!("file-{}", i % 97).as_bytes());
            a.alloc_init(r.len(), &r).unwrap()
        })
        .collect()
}

#[test]
fn grouped_fields_round_trip_and_compress_better() {
    let mut sizes = Vec::new();
    for group in [0, 32] {
        let a = Arena::new(
            Config::default()
                .uncompressed_blocks(1)
                .group_fields(group)
                .codec(Codec::Zstd { level: 1 }),
        )
        .unwrap();
        let hs = records(&a, 20_000);
        // Change some nodes after their blocks were compressed, free others.
        for (i, h) in hs.iter().enumerate().step_by(7) {
            a.write_at(*h, 8, &(i as u64).to_le_bytes()).unwrap();
        }
        for h in hs.iter().skip(3).step_by(11) {
            a.free(*h).unwrap();
        }
        a.flush().unwrap();
        a.check_invariants().unwrap();
        let fresh = Arena::new(Config::default().codec(Codec::Copy)).unwrap();
        let want = records(&fresh, 20_000);
        for (i, h) in hs.iter().enumerate() {
            if i >= 3 && (i - 3) % 11 == 0 {
                assert!(a.read(*h).is_err());
                continue;
            }
            let mut exp = fresh.read(want[i]).unwrap().to_vec();
            if i % 7 == 0 {
                exp[8..16].copy_from_slice(&(i as u64).to_le_bytes());
            }
            assert_eq!(&a.read(*h).unwrap()[..exp.len()], &exp[..], "node {i}");
        }
        sizes.push(a.stats().compressed_bytes);
    }
    assert!(
        sizes[1] < sizes[0],
        "grouped {} vs whole nodes {}",
        sizes[1],
        sizes[0]
    );
}

#[test]
fn zero_byte_node_when_the_current_block_is_exactly_full() {
    // Regression: a block with no free chunk at all must not be chosen for
    // a zero-byte node.
    let a = arena(1024, 8, 1);
    let max = a.max_block_node();
    let full = a.alloc(max).unwrap();
    let z = a.alloc(0).unwrap();
    assert_ne!(block_of(full), block_of(z));
    assert!(a.len(z).unwrap() < 64);
    a.check_invariants().unwrap();
}

#[test]
fn arenas_are_send_and_the_shared_one_is_sync() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Arena>();
    send_sync::<SharedArena>();
}

/// The arena as a growable page store: fixed-size page nodes written and
/// read back by handle, the way a storage driver would use it.
#[test]
fn page_store() {
    const PAGE: usize = 4096;
    let a = Arena::new(
        Config::default()
            .block_size(64 * 1024)
            .uncompressed_blocks(4),
    )
    .unwrap();
    let mut pages = Vec::new();
    for p in 0..200u32 {
        let h = a.alloc(PAGE).unwrap();
        let mut page = vec![0u8; PAGE];
        for (i, chunk) in page.chunks_mut(4).enumerate() {
            chunk.copy_from_slice(&(p * 1000 + i as u32 % 7).to_le_bytes());
        }
        a.write_at(h, 0, &page).unwrap();
        pages.push((h, page));
    }
    // Overwrite part of every other page, then read everything back.
    for (h, page) in pages.iter_mut().step_by(2) {
        a.write_at(*h, 100, &[0xFF; 50]).unwrap();
        page[100..150].fill(0xFF);
    }
    let mut buf = vec![0u8; PAGE];
    for (h, page) in &pages {
        a.read_at(*h, 0, &mut buf).unwrap();
        assert_eq!(&buf, page);
    }
    let s = a.stats();
    assert!(s.compressed_bytes < (200 * PAGE) as u64 / 4, "{s:?}");
    a.check_invariants().unwrap();
}

#[test]
fn freeing_a_large_node_under_a_read_guard_leaves_other_pins_alone() {
    let a = arena(1024, 8, 1);
    let big = a.alloc(5000).unwrap();
    a.write_at(big, 0, &[9; 5000]).unwrap();
    let g = a.read(big).unwrap();
    a.free(big).unwrap();
    assert_eq!(g[..5000], [9; 5000], "the guard keeps its snapshot");
    // The freed block's index is reused; pin a node there with a write
    // guard, then drop the stale read guard: it must not release the new
    // pin, or the write could be lost to an eviction.
    let n = a.alloc(8).unwrap();
    let mut w = a.write(n).unwrap();
    drop(g);
    for _ in 0..4 {
        let h = a.alloc(900).unwrap(); // churn the one-block cache
        a.write_at(h, 0, &[1; 900]).unwrap();
    }
    w[..4].copy_from_slice(b"kept");
    drop(w);
    assert_eq!(&a.read(n).unwrap()[..4], b"kept");
    a.check_invariants().unwrap();
}

#[test]
fn block_images_are_the_bytes_the_arena_compresses() {
    let codecs = [
        Codec::Lz4,
        Codec::Zstd { level: 1 },
        Codec::Zlib { level: 5 },
        Codec::Copy,
    ];
    for codec in codecs {
        for group in [0, 32] {
            let a = Arena::new(
                Config::default()
                    .block_size(4096)
                    .uncompressed_blocks(2)
                    .group_fields(group)
                    .codec(codec.clone()),
            )
            .unwrap();
            let hs = records(&a, 3_000);
            for h in hs.iter().step_by(5) {
                a.free(*h).unwrap();
            }
            let big = a.alloc(10_000).unwrap();
            a.write_at(big, 0, &[3; 10_000]).unwrap();
            // Uncached and cached blocks alike.
            let before = a.stats();
            let images = a.block_images().unwrap();
            assert_eq!(a.stats(), before, "taking images changes nothing");
            assert_eq!(images.len() as u64, before.blocks);
            assert_eq!(images.iter().filter(|i| i.is_large()).count(), 1);
            let node = a.read(hs[1]).unwrap().to_vec();
            let b = (hs[1].to_raw() >> 24) as usize - 1;
            let off = (hs[1].to_raw() & 0xff_ffff) as usize;
            assert_eq!(&images[b].bytes()[off..off + node.len()], &node[..]);
            // Once flushed, compressing the images gives the stored bytes.
            a.flush().unwrap();
            let total: usize = images
                .iter()
                .map(|i| {
                    let c = a.compress_image(i).unwrap();
                    assert_eq!(c.image_len(), i.len());
                    assert_eq!(&a.decompress_image(&c).unwrap(), i);
                    c.compressed_len()
                })
                .sum();
            assert_eq!(
                total as u64,
                a.stats().compressed_bytes,
                "{codec:?} {group}"
            );
            a.check_invariants().unwrap();
        }
    }
}

#[test]
fn block_images_belong_to_their_arena() {
    let a = arena(1024, 8, 1);
    let b = arena(1024, 8, 1);
    a.alloc(10).unwrap();
    b.alloc(10).unwrap();
    let img = a.block_images().unwrap().remove(0);
    assert!(matches!(
        b.compress_image(&img),
        Err(Error::InvalidConfig(_))
    ));
    let c = a.compress_image(&img).unwrap();
    assert!(matches!(
        b.decompress_image(&c),
        Err(Error::InvalidConfig(_))
    ));
    assert_eq!(a.decompress_image(&c).unwrap(), img);
    assert!(Arena::new(Config::default())
        .unwrap()
        .block_images()
        .unwrap()
        .is_empty());
}

#[test]
fn compressing_images_does_not_feed_the_dictionary() {
    let a = Arena::new(
        Config::default()
            .block_size(4096)
            .uncompressed_blocks(1)
            .codec(Codec::parse("zstd-3-dict").unwrap()),
    )
    .unwrap();
    records(&a, 200);
    // Taking the images decompresses the stored blocks (creating the
    // decompression context on first use); compressing them changes
    // nothing more.
    let images = a.block_images().unwrap();
    let before = a.stats();
    for i in images {
        for _ in 0..300 {
            a.compress_image(&i).unwrap();
        }
    }
    assert_eq!(a.dictionary_len(), None, "no training from compress_image");
    assert_eq!(a.stats(), before);
}

/// Nodes in several blocks, a background compressor with `pending` slots
/// and one cached block: every block goes through the queue again and
/// again, and is taken back (written, freed) while it may be waiting.
fn background_round(codec: Codec, group: usize, pending: usize) {
    let a = Arena::new(
        Config::default()
            .block_size(2048)
            .uncompressed_blocks(1)
            .group_fields(group)
            .codec(codec)
            .background_compression(pending),
    )
    .unwrap();
    let mut hs = Vec::new();
    for i in 0..200u32 {
        let h = a.alloc(40).unwrap();
        a.write_at(h, 0, &i.to_le_bytes()).unwrap();
        hs.push((h, i));
    }
    a.check_invariants().unwrap();
    // Back and forth over the blocks: each access may find its block
    // cached, waiting for the compressor, or stored.
    for round in 0..3u32 {
        for (k, (h, v)) in hs.iter_mut().enumerate() {
            if k % 3 == round as usize {
                *v = v.wrapping_mul(31).wrapping_add(round);
                a.write_at(*h, 0, &v.to_le_bytes()).unwrap();
            }
            let mut b = [0u8; 4];
            a.read_at(*h, 0, &mut b).unwrap();
            assert_eq!(u32::from_le_bytes(b), *v);
        }
        a.check_invariants().unwrap();
    }
    for (h, _) in hs.iter().step_by(2) {
        a.free(*h).unwrap();
    }
    a.check_invariants().unwrap();
    let before = a.stats();
    a.flush().unwrap();
    let s = a.stats();
    // Nothing waits after a flush: the cache is empty and every block is
    // stored; at most one spare buffer is kept for the next load.
    assert!(s.uncompressed_bytes <= 2048, "{s:?}");
    assert!(s.compressions >= before.compressions);
    assert_eq!(s.blocks, before.blocks);
    a.check_invariants().unwrap();
    for (h, v) in hs.iter().skip(1).step_by(2) {
        assert_eq!(a.read(*h).unwrap()[..4], v.to_le_bytes());
    }
    assert!(a.read(hs[0].0).is_err());
    assert!(a.free(hs[0].0).is_err());
}

#[test]
fn background_compressor_blocks_are_taken_back_and_flushed() {
    for pending in [1, 2, 8] {
        background_round(Codec::Zstd { level: 1 }, 0, pending);
        background_round(Codec::Zstd { level: 1 }, 16, pending);
        background_round(Codec::Lz4, 4, pending);
        background_round(Codec::Zlib { level: 1 }, 0, pending);
        background_round(Codec::Copy, 8, pending);
    }
}

#[test]
fn background_compressor_counts_what_it_holds() {
    let a = Arena::new(
        Config::default()
            .uncompressed_blocks(1)
            .codec(Codec::Zstd { level: 1 })
            .background_compression(2),
    )
    .unwrap();
    for _ in 0..3 {
        a.alloc(30_000).unwrap();
    }
    // Three blocks: one cached; the other two are either waiting (their
    // images counted as uncompressed) or stored (counted as compressed).
    let s = a.stats();
    assert_eq!(s.blocks, 3);
    assert!(s.uncompressed_bytes >= 32 * 1024);
    // The compressor's context is counted beside the arena's own (which
    // compresses too while the compressor is busy, and is created only
    // if it does): at most one more compression context than without a
    // background thread.
    let plain = Arena::new(Config::default().uncompressed_blocks(1)).unwrap();
    for _ in 0..3 {
        plain.alloc(30_000).unwrap();
    }
    a.flush().unwrap();
    plain.flush().unwrap();
    let (with, without) = (
        a.stats().codec_context_bytes,
        plain.stats().codec_context_bytes,
    );
    assert!(a.stats().background_running);
    assert!(
        with >= without && with <= 2 * without,
        "{with} vs {without}"
    );
    assert_eq!(a.stats().compressed_bytes, plain.stats().compressed_bytes);
    // Images for measuring are still taken and compressed on this thread.
    let img = a.block_images().unwrap();
    assert_eq!(img.len(), 3);
    let c = a.compress_image(&img[0]).unwrap();
    assert_eq!(a.decompress_image(&c).unwrap(), img[0]);
}

/// Compresses by copying, but panics the first time the compressor thread
/// calls it (the arena's own thread compresses too while that thread is
/// busy; a panic there is the caller's, as without a compressor thread).
struct PanicsOnce(std::sync::atomic::AtomicBool);

impl BlockCodec for PanicsOnce {
    fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), String> {
        if std::thread::current().name() == Some("compll-compress")
            && !self.0.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            panic!("codec panics in the compressor thread");
        }
        dst.extend_from_slice(&src[..src.len() / 2]);
        dst.extend_from_slice(&src[src.len() / 2..]);
        dst.truncate(src.len() - 1);
        Err("no gain".into())
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        dst.copy_from_slice(src);
        Ok(())
    }
}

#[test]
fn background_compressor_lost_to_a_panicking_codec_keeps_the_arena_usable() {
    let a = Arena::new(
        Config::default()
            .block_size(1024)
            .uncompressed_blocks(1)
            .codec(Codec::Custom(Arc::new(PanicsOnce(Default::default()))))
            .background_compression(1),
    )
    .unwrap();
    let mut hs = Vec::new();
    for i in 0..40u8 {
        let h = a.alloc(100).unwrap();
        a.write_at(h, 0, &[i; 100]).unwrap();
        hs.push(h);
    }
    a.flush().unwrap();
    a.check_invariants().unwrap();
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(a.read(*h).unwrap()[..100], [i as u8; 100]);
    }
    a.free(hs[3]).unwrap();
    a.check_invariants().unwrap();
}

#[test]
fn shared_arena_with_background_compressor_across_threads() {
    let a = Arc::new(
        SharedArena::new(
            Config::default()
                .block_size(1024)
                .uncompressed_blocks(2)
                .background_compression(2),
        )
        .unwrap(),
    );
    let joins: Vec<_> = (0..4u8)
        .map(|t| {
            let a = Arc::clone(&a);
            std::thread::spawn(move || {
                let hs: Vec<_> = (0..100)
                    .map(|_| {
                        let h = a.alloc(30).unwrap();
                        a.write_at(h, 0, &[t; 30]).unwrap();
                        h
                    })
                    .collect();
                for h in &hs {
                    assert_eq!(a.read(*h).unwrap()[..30], [t; 30]);
                }
                hs
            })
        })
        .collect();
    for (t, j) in joins.into_iter().enumerate() {
        for h in j.join().unwrap() {
            assert_eq!(a.read(h).unwrap()[..30], [t as u8; 30]);
        }
    }
    a.check_invariants().unwrap();
}

#[test]
fn cache_grows_while_reads_reload_blocks_and_shrinks_while_filling() {
    let cfg = |grow| {
        Config::default()
            .block_size(1024)
            .uncompressed_blocks(2)
            .node_cache(0)
            .cache_growth(grow)
            .codec(Codec::Lz4)
    };
    let fill = |a: &Arena, n: u32| -> Vec<compll::Handle> {
        (0..n)
            .map(|i| {
                let h = a.alloc(200).unwrap();
                a.write_at(h, 0, &i.to_le_bytes()).unwrap();
                h
            })
            .collect()
    };
    // 40 nodes in 10 blocks, read round and round: with a fixed cache of 2
    // every block is decompressed on every round.
    let fixed = Arena::new(cfg(0)).unwrap();
    let hs = fill(&fixed, 40);
    // Room for all ten (a cyclic pass over more blocks than an LRU cache
    // holds misses every time, however close the cache is to enough).
    let grown = Arena::new(cfg(10)).unwrap();
    let hg = fill(&grown, 40);
    let block = 1024u64;
    assert_eq!(grown.stats().uncompressed_bytes, 2 * block);
    let d0 = (fixed.stats().decompressions, grown.stats().decompressions);
    for round in 0..5 {
        for (i, (a, b)) in hs.iter().zip(&hg).enumerate() {
            let mut x = [0u8; 4];
            fixed.read_at(*a, 0, &mut x).unwrap();
            assert_eq!(u32::from_le_bytes(x), i as u32);
            grown.read_at(*b, 0, &mut x).unwrap();
            assert_eq!(u32::from_le_bytes(x), i as u32);
        }
        grown.check_invariants().unwrap();
        let s = grown.stats();
        // Never more than the configured cache plus the growth.
        assert!(
            s.uncompressed_bytes <= (2 + 10) * block,
            "round {round}: {s:?}"
        );
    }
    let fixed_d = fixed.stats().decompressions - d0.0;
    let grown_d = grown.stats().decompressions - d0.1;
    assert!(grown_d < fixed_d / 2, "{grown_d} vs {fixed_d}");
    assert!(grown.stats().uncompressed_bytes >= 10 * block);
    // Writes do not make it grow, new blocks shrink it back.
    let more = fill(&grown, 60);
    grown.check_invariants().unwrap();
    // Two cached blocks and the one spare buffer kept for the next load.
    assert!(grown.stats().uncompressed_bytes <= 3 * block);
    for (i, h) in hg.iter().chain(&more).enumerate() {
        let v = if i < 40 { i } else { i - 40 } as u32;
        assert_eq!(grown.read(*h).unwrap()[..4], v.to_le_bytes());
    }
}

/// Nodes of `n` bytes, each filled with its own number, flushed so every
/// block is stored.
fn filled(a: &Arena, count: usize, n: usize) -> Vec<Handle> {
    let hs: Vec<Handle> = (0..count)
        .map(|i| {
            let h = a.alloc(n).unwrap();
            a.write_at(h, 0, &vec![i as u8; n]).unwrap();
            h
        })
        .collect();
    a.flush().unwrap();
    hs
}

#[test]
fn readahead_serves_walks_both_ways_and_keeps_invariants() {
    for codec in [Codec::Zstd { level: 1 }, Codec::Lz4] {
        let a = Arena::new(
            Config::default()
                .block_size(4096)
                .uncompressed_blocks(2)
                .group_fields(8)
                .background_compression(1)
                .readahead(3)
                .codec(codec),
        )
        .unwrap();
        let hs = filled(&a, 600, 300);
        for round in 0..2 {
            let order: Vec<usize> = if round == 0 {
                (0..hs.len()).rev().collect()
            } else {
                (0..hs.len()).collect()
            };
            for (k, &i) in order.iter().enumerate() {
                assert_eq!(a.read(hs[i]).unwrap()[..300], vec![i as u8; 300][..]);
                if k % 97 == 0 {
                    a.check_invariants().unwrap();
                }
            }
            a.flush().unwrap();
            a.check_invariants().unwrap();
        }
        let s = a.stats();
        assert!(s.decompressed_ahead > 0, "{s:?}");
        assert!(s.decompressed_ahead <= s.decompressions);
        // Writes and frees in the middle of a walk: blocks read ahead are
        // never changed behind the arena's back.
        for (k, &h) in hs.iter().enumerate().rev() {
            if k % 3 == 0 {
                a.free(h).unwrap();
            } else {
                a.write_at(h, 0, &[0xee]).unwrap();
                assert_eq!(a.read(h).unwrap()[0], 0xee);
            }
        }
        a.check_invariants().unwrap();
    }
}

/// Copies, but panics when the background thread decompresses.
struct PanicsReadingAhead;

impl BlockCodec for PanicsReadingAhead {
    fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), String> {
        dst.extend_from_slice(src);
        Ok(())
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        if std::thread::current().name() == Some("compll-compress") {
            panic!("codec panics in the background thread");
        }
        dst.copy_from_slice(src);
        Ok(())
    }
}

#[test]
fn readahead_lost_to_a_panicking_codec_keeps_the_arena_usable() {
    let a = Arena::new(
        Config::default()
            .block_size(1024)
            .uncompressed_blocks(1)
            .background_compression(1)
            .readahead(4)
            .codec(Codec::Custom(Arc::new(PanicsReadingAhead))),
    )
    .unwrap();
    let hs = filled(&a, 200, 100);
    for (i, h) in hs.iter().enumerate().rev() {
        assert_eq!(a.read(*h).unwrap()[..100], [i as u8; 100][..]);
    }
    a.check_invariants().unwrap();
    // The thread is gone: compression happens here from now on.
    let h = a.alloc(100).unwrap();
    a.write_at(h, 0, &[9; 100]).unwrap();
    a.flush().unwrap();
    assert_eq!(a.read(h).unwrap()[..100], [9; 100][..]);
    a.check_invariants().unwrap();
}

/// Frees in a cached block are lazy (a bit and zeroed bytes; merging and
/// the free list wait for one tidy): the freed handles are refused at
/// once, the block checks as its tidy will leave it (H13), and an
/// allocation into it, an eviction and a flush each bring it up to date
/// with every surviving node intact. Nodes of mixed sizes freed in a
/// seeded random order, so neighbours merge both ways.
#[test]
fn lazy_frees_are_tidied_before_allocating_and_storing() {
    let a = arena(4096, 8, 2);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut nodes: Vec<(Handle, Vec<u8>)> = (0..60u32)
        .map(|i| {
            let len = 8 + (i as usize * 13) % 90;
            let bytes: Vec<u8> = (0..len).map(|k| (i as usize * 31 + k) as u8 | 1).collect();
            (a.alloc_init(len, &bytes).unwrap(), bytes)
        })
        .collect();
    for round in 0..4 {
        // Free a third of what is left, in random order.
        for _ in 0..nodes.len() / 3 {
            let k = (next() % nodes.len() as u64) as usize;
            let (h, _) = nodes.swap_remove(k);
            a.free(h).unwrap();
            assert!(a.read(h).is_err(), "freed node still readable");
            a.check_invariants().unwrap(); // H13: untidy, checked tidied
        }
        // An allocation tidies the block it lands in; later frees there
        // are eager until the block leaves the cache.
        let h = a.alloc_init(24, &[round as u8 + 1; 24]).unwrap();
        nodes.push((h, vec![round as u8 + 1; 24]));
        let (h, _) = nodes.swap_remove(0);
        a.free(h).unwrap();
        a.check_invariants().unwrap();
        if round % 2 == 1 {
            a.flush().unwrap();
            a.check_invariants().unwrap(); // stored tidy
        }
        for (h, b) in &nodes {
            assert_eq!(&a.read(*h).unwrap()[..b.len()], &b[..]);
        }
    }
    // Emptied entirely: blocks are released without a tidy.
    for (h, _) in nodes.drain(..) {
        a.free(h).unwrap();
    }
    a.flush().unwrap();
    a.check_invariants().unwrap();
    assert_eq!(a.stats().live_nodes, 0);
}

/// Space freed lazily in a cached block is used by the next allocations
/// before a new block is started: the block is chosen by what its tidy
/// can leave, tidied, and filled again.
#[test]
fn space_freed_lazily_is_reused_before_a_new_block() {
    let a = arena(4096, 8, 4);
    let first = a.alloc(100).unwrap();
    let mut nodes = vec![first];
    loop {
        let h = a.alloc(100).unwrap();
        if block_of(h) != block_of(first) {
            nodes.push(h);
            break;
        }
        nodes.push(h);
    }
    assert_eq!(a.stats().blocks, 2);
    let (second, full) = nodes.split_last().unwrap();
    // Every node of the first block but one, freed in address order and
    // then backwards, so the free space is in pieces until the tidy.
    let keep = full.len() / 2;
    for (i, h) in full.iter().enumerate() {
        if i != keep {
            a.free(*h).unwrap();
        }
    }
    a.check_invariants().unwrap();
    // The second block holds one node and has room too; fill both.
    let mut again = 0;
    while a.stats().blocks == 2 {
        a.alloc(100).unwrap();
        again += 1;
        assert!(again < 1000);
    }
    // The second block takes as many nodes as the first held less the
    // one it has; the freed space as many as were freed.
    let room = 2 * (full.len() - 1);
    assert!(
        again + 1 >= room,
        "a new block after {again} allocations, room for {room}"
    );
    a.read(full[keep]).unwrap();
    a.read(*second).unwrap();
    a.check_invariants().unwrap();
}
