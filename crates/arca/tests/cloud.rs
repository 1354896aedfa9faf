//! Files on object storage, read through the process's in-memory store
//! (`memory://`): request counts, data equal to local reads, typed errors.

use arca::io::object_store::{path::Path as ObjPath, ObjectStore, PutPayload};
use arca::io::object_store::{
    GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, PutMultipartOptions,
    PutOptions, PutResult,
};
use arca::io::{memory_store, CloudOptions};
use arca::{DatasetOptions, Datatype, Error, File, Mode, RemoteKind, Selection};

/// Put `bytes` at `key` in the process's memory store.
fn put(key: &str, bytes: Vec<u8>) {
    let rt = tokio_free_block_on(memory_store().put(&ObjPath::from(key), PutPayload::from(bytes)));
    rt.unwrap();
}

/// Drive a future to completion without a runtime of our own: the memory
/// store's futures are ready at once.
fn tokio_free_block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

/// A file with a small group tree, a contiguous dataset and a chunked one
/// of `n` chunks; returns its bytes.
fn sample(n: u64) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.arca");
    let f = File::create(&p).unwrap();
    let g = f.root().create_group("g").unwrap();
    g.attrs()
        .set("title", &arca::AttrValue::string("run 1"))
        .unwrap();
    let c = g
        .create_dataset("c", &DatasetOptions::new(Datatype::float(8), &[1000]))
        .unwrap();
    c.write_all(&(0..1000).map(|i| i as f64).collect::<Vec<_>>())
        .unwrap();
    let k = f
        .root()
        .create_dataset(
            "k",
            &DatasetOptions::new(Datatype::uint(4), &[n * 256]).chunks(&[256]),
        )
        .unwrap();
    k.write_all(&(0..n as u32 * 256).collect::<Vec<u32>>())
        .unwrap();
    f.close().unwrap();
    std::fs::read(&p).unwrap()
}

fn open(key: &str, o: &CloudOptions) -> arca::Result<File> {
    File::options().open_url(&format!("memory:///{key}"), o)
}

#[test]
fn small_file_opens_in_one_request_and_reads_as_locally() {
    // About 600 KiB: several cache blocks, all inside the first response.
    let bytes = sample(600);
    assert!(bytes.len() > 4 * 128 * 1024 && bytes.len() < 1 << 20);
    let local = File::from_bytes(bytes.clone()).unwrap();
    put("t/small.arca", bytes.clone());
    let f = open("t/small.arca", &CloudOptions::new()).unwrap();
    let s = f.io_stats();
    assert_eq!((s.requests, s.round_trips), (1, 1));
    assert_eq!(s.bytes_fetched, bytes.len() as u64);
    // Everything lies in the first request's window: no more requests.
    let c: Vec<f64> = f.root().dataset("g/c").unwrap().read_all().unwrap();
    let k: Vec<u32> = f.root().dataset("k").unwrap().read_all().unwrap();
    assert_eq!(
        c,
        local
            .root()
            .dataset("g/c")
            .unwrap()
            .read_all::<f64>()
            .unwrap()
    );
    assert_eq!(
        k,
        local
            .root()
            .dataset("k")
            .unwrap()
            .read_all::<u32>()
            .unwrap()
    );
    assert_eq!(f.io_stats().requests, 1);
    assert_eq!(f.url(), Some("memory:///t/small.arca"));
}

#[test]
fn a_chunk_costs_at_most_one_round_trip_per_level() {
    // 4096 chunks of 1 KiB: a chunk index of more than one level.
    put("t/big.arca", sample(4096));
    let o = CloudOptions::new()
        .set("head_bytes", "4096")
        .unwrap()
        .set("block_bytes", "4096")
        .unwrap();
    let f = open("t/big.arca", &o).unwrap();
    let k = f.root().dataset("k").unwrap();
    eprintln!(
        "open + /k with 4 KiB reads: {} round trips",
        f.io_stats().round_trips
    );
    let before = f.io_stats();
    let one: Vec<u32> = k
        .read(&Selection::from_ranges(&[(3000 * 256, 3000 * 256 + 4, 1)]).unwrap())
        .unwrap();
    assert_eq!(one, vec![768000, 768001, 768002, 768003]);
    let after = f.io_stats();
    let trips = after.round_trips - before.round_trips;
    // The chunk index of 4096 chunks has two levels (a 4 KiB leaf holds
    // about a hundred entries): at most one round trip for each, then one
    // for the chunk.
    assert!(trips <= 3, "{trips} round trips");
    eprintln!(
        "one chunk: {trips} round trips, {} requests",
        after.requests - before.requests
    );
    assert_eq!(after.requests - before.requests, trips);
    // Read again: the chunk cache and the block cache answer.
    let again: Vec<u32> = k
        .read(&Selection::from_ranges(&[(3000 * 256, 3000 * 256 + 4, 1)]).unwrap())
        .unwrap();
    assert_eq!(again, one);
    assert_eq!(f.io_stats().requests, after.requests);
    // The whole dataset equals a local read.
    let all: Vec<u32> = k.read_all().unwrap();
    assert_eq!(all, (0..4096 * 256).collect::<Vec<u32>>());
}

#[test]
fn errors_are_typed() {
    let e = open("t/missing.arca", &CloudOptions::new()).unwrap_err();
    assert!(
        matches!(&e, Error::Remote { kind: RemoteKind::NotFound, url, range: Some(r), .. }
            if url == "memory:///t/missing.arca" && r.start == 0),
        "{e}"
    );
    for bad in ["nope", "ftp://host/x.arca", "s3://", "memory:///"] {
        let e = File::options()
            .open_url(bad, &CloudOptions::new())
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{bad}: {e}");
    }
    let e = File::options()
        .open_url(
            "memory:///t/x",
            &CloudOptions::new().set("aws_region", "x").unwrap(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(CloudOptions::new().set("head_bytes", "0").is_err());
    // A truncated object: its end cuts the file's structures.
    let bytes = sample(64);
    put("t/cut.arca", bytes[..bytes.len() / 2].to_vec());
    let r = open("t/cut.arca", &CloudOptions::new()).and_then(|f| {
        f.root()
            .dataset("k")
            .and_then(|k| k.read_all::<u32>())
            .map(|_| ())
    });
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{r:?}");
    // A file opened read-only stays so; a web server takes no writes.
    put("t/ro.arca", bytes);
    let f = open("t/ro.arca", &CloudOptions::new()).unwrap();
    assert!(matches!(f.root().create_group("x"), Err(Error::ReadOnly)));
    for m in [Mode::ReadWrite, Mode::Append, Mode::Create, Mode::CreateNew] {
        let e = File::options()
            .mode(m)
            .open_url("http://127.0.0.1:9/t/ro.arca", &CloudOptions::new())
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
    }
}

#[test]
fn a_replaced_object_is_an_error_not_a_mixture() {
    let o = CloudOptions::new()
        .set("head_bytes", "4096")
        .unwrap()
        .set("block_bytes", "4096")
        .unwrap();
    put("t/swap.arca", sample(512));
    let f = open("t/swap.arca", &o).unwrap();
    put("t/swap.arca", sample(513));
    let r = f.root().dataset("k").and_then(|k| k.read_all::<u32>());
    assert!(
        matches!(
            r,
            Err(Error::Remote {
                kind: RemoteKind::Changed,
                ..
            })
        ),
        "{r:?}"
    );
}

/// Options for the batch tests: a small head and blocks, and `extra`.
fn small(extra: &[(&str, &str)]) -> CloudOptions {
    let mut o = CloudOptions::new()
        .set("head_bytes", "4096")
        .unwrap()
        .set("block_bytes", "4096")
        .unwrap();
    for (k, v) in extra {
        o = o.set(k, v).unwrap();
    }
    o
}

#[test]
fn a_batch_of_reads_is_merged_and_sent_sixteen_at_a_time() {
    use arca::io::{CloudDriver, Driver};
    let bytes: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    put("t/batch.bin", bytes.clone());
    // 256 reads of 1000 bytes, 4000 apart, past the head.
    let at = |k: u64| 8192 + k * 4000;
    let batch = |o: &CloudOptions| {
        let d = CloudDriver::open("memory:///t/batch.bin", o).unwrap();
        let mut bufs = vec![vec![0u8; 1000]; 256];
        let mut reads: Vec<(u64, &mut [u8])> = bufs
            .iter_mut()
            .enumerate()
            .map(|(k, b)| (at(k as u64), &mut b[..]))
            .collect();
        let r = d.shared_reader().unwrap();
        assert!(r.batches());
        r.read_batch(&mut reads).unwrap();
        for (k, b) in bufs.iter().enumerate() {
            let s = at(k as u64) as usize;
            assert_eq!(&b[..], &bytes[s..s + 1000], "read {k}");
        }
        let mut s = arca::IoStats::default();
        d.fetches().unwrap().add_to(&mut s);
        // Less the first request, the head.
        (s.requests - 1, s.round_trips - 1, s.bytes_fetched - 4096)
    };
    // Nothing merged: one request a read, sixteen in flight at a time.
    assert_eq!(
        batch(&small(&[("coalesce_bytes", "0")])),
        (256, 16, 256_000)
    );
    assert_eq!(
        batch(&small(&[("coalesce_bytes", "0"), ("max_in_flight", "64")])),
        (256, 4, 256_000)
    );
    // Gaps of 3000 bytes merged, each request at most 64 KiB: 17 reads a
    // request (16 * 4000 + 1000 bytes), 16 requests, one round trip.
    assert_eq!(
        batch(&small(&[("part_bytes", "65536")])),
        (16, 1, 15 * 65_000 + 1000)
    );
    // A read the cache holds sends nothing; one past the end is an error.
    let d = CloudDriver::open("memory:///t/batch.bin", &small(&[])).unwrap();
    let r = d.shared_reader().unwrap();
    let mut a = [0u8; 100];
    r.read_batch(&mut [(10, &mut a[..])]).unwrap();
    assert_eq!(&a[..], &bytes[10..110]);
    let mut s = arca::IoStats::default();
    d.fetches().unwrap().add_to(&mut s);
    assert_eq!(s.requests, 1);
    let mut b = [0u8; 100];
    assert!(r
        .read_batch(&mut [(bytes.len() as u64 - 50, &mut b[..])])
        .is_err());
}

#[test]
fn a_read_of_many_chunks_fetches_them_in_one_batch() {
    // 256 chunks of 1 KiB, stored one after another.
    put("t/many.arca", sample(256));
    let f = open("t/many.arca", &small(&[])).unwrap();
    let k = f.root().dataset("k").unwrap();
    // The index first (one chunk at each end walks it), then the rest.
    let ends: Vec<u32> = k
        .read(&Selection::from_ranges(&[(0, 256 * 256, 255 * 256)]).unwrap())
        .unwrap();
    assert_eq!(ends, vec![0, 255 * 256]);
    let before = f.io_stats();
    let all: Vec<u32> = k.read_all().unwrap();
    assert_eq!(all, (0..256 * 256).collect::<Vec<u32>>());
    let after = f.io_stats();
    eprintln!(
        "256 chunks: {} requests, {} round trips",
        after.requests - before.requests,
        after.round_trips - before.round_trips
    );
    assert_eq!(after.chunks_read - before.chunks_read, 254);
    // One round trip for the index leaves between the two the first read
    // walked (fetched together, a tree level at a time), one for the
    // chunks: they lie together, so one request, or two where a block the
    // cache holds since the first read lies between them.
    let (requests, trips) = (
        after.requests - before.requests,
        after.round_trips - before.round_trips,
    );
    assert_eq!(trips, 2, "{requests} requests, {trips} round trips");
    assert!((2..=4).contains(&requests), "{requests} requests");
    // Without merging, sixteen requests in flight at a time.
    let f = open(
        "t/many.arca",
        &small(&[("coalesce_bytes", "0"), ("part_bytes", "1")]),
    )
    .unwrap();
    let k = f.root().dataset("k").unwrap();
    let _: Vec<u32> = k
        .read(&Selection::from_ranges(&[(0, 256 * 256, 255 * 256)]).unwrap())
        .unwrap();
    let before = f.io_stats();
    let all: Vec<u32> = k.read_all().unwrap();
    assert_eq!(all, (0..256 * 256).collect::<Vec<u32>>());
    let after = f.io_stats();
    let (requests, trips) = (
        after.requests - before.requests,
        after.round_trips - before.round_trips,
    );
    eprintln!("unmerged: {requests} requests, {trips} round trips");
    // part_bytes is rounded up to a block (4 KiB): four chunks a request,
    // sixteen in flight, after the index's round trip (a request or two:
    // its leaves are not merged either).
    let chunks = 254u64.div_ceil(4);
    assert_eq!(trips, 1 + chunks.div_ceil(16), "{requests} requests");
    assert!(
        (chunks + 1..=chunks + 2).contains(&requests),
        "{requests} requests, {trips} round trips"
    );
}

#[test]
fn a_read_larger_than_a_batch_decodes_one_while_fetching_the_next() {
    // 96 MiB of u32 in 4 MiB zstd chunks: decoded batches are 64 MiB, so
    // the read takes two, the second fetched while the first decodes.
    let n = 24u64 << 20;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.arca");
    {
        let f = File::create(&p).unwrap();
        let d = f
            .root()
            .create_dataset(
                "x",
                &DatasetOptions::new(Datatype::uint(4), &[n])
                    .chunks(&[1 << 20])
                    .filters(&[arca::Filter::Zstd(1)]),
            )
            .unwrap();
        d.write_all(&(0..n as u32).map(|i| i / 7).collect::<Vec<u32>>())
            .unwrap();
        f.close().unwrap();
    }
    put("t/big.arca", std::fs::read(&p).unwrap());
    let f = open("t/big.arca", &CloudOptions::new()).unwrap();
    let got: Vec<u32> = f.root().dataset("x").unwrap().read_all().unwrap();
    assert_eq!(got.len() as u64, n);
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as u32 / 7));
    let s = f.io_stats();
    assert_eq!(s.chunks_read, 24);
    // The open, the index, then the two batches.
    assert!(s.round_trips <= 4, "{s:?}");
}

#[test]
fn a_file_larger_than_the_first_read_opens_in_one_request() {
    // About 3 MiB: the open's first read (1 MiB) holds the superblock and
    // the root group; a reader needs nothing from the end of the file.
    let bytes = sample(3000);
    assert!(bytes.len() > 2 << 20);
    put("t/large.arca", bytes.clone());
    let f = open("t/large.arca", &CloudOptions::new()).unwrap();
    let s = f.io_stats();
    assert_eq!((s.requests, s.round_trips), (1, 1), "{s:?}");
    // `check` still validates the free-space record, fetched then.
    f.check().unwrap();
    assert!(f.io_stats().requests > 1);
}

#[test]
fn a_file_repacked_for_the_cloud_opens_and_reads_any_chunk_in_two_requests() {
    // 3000 chunks of 1 KiB (3 MiB). Repacked with `cloud`, every structure
    // comes first, inside the open's first read: the chunk is the second
    // request wherever it lies.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.arca"), dir.path().join("b.arca"));
    std::fs::write(&a, sample(3000)).unwrap();
    arca::repack_with(
        &a,
        &b,
        &arca::RepackOptions::new().cloud(true),
        &mut |_, _| {},
    )
    .unwrap();
    let bytes = std::fs::read(&b).unwrap();
    assert!(bytes.len() > 2 << 20);
    File::open(&b).unwrap().check().unwrap();
    put("t/cloud.arca", bytes);
    let one_chunk = |key: &str, i: u64| {
        let f = open(key, &CloudOptions::new()).unwrap();
        let k = f.root().dataset("k").unwrap();
        let v: Vec<u32> = k
            .read(&Selection::from_ranges(&[(i * 256, i * 256 + 4, 1)]).unwrap())
            .unwrap();
        assert_eq!(v, (0..4).map(|j| (i * 256 + j) as u32).collect::<Vec<_>>());
        let s = f.io_stats();
        (s.requests, s.round_trips)
    };
    // The first chunks lie inside the first read too.
    assert_eq!(one_chunk("t/cloud.arca", 0), (1, 1));
    for i in [1500, 2999] {
        assert_eq!(one_chunk("t/cloud.arca", i), (2, 2), "chunk {i}");
    }
}

/// The superblock's `meta_end` (offset 104).
fn meta_end_of(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[104..112].try_into().unwrap())
}

/// `sample(chunks)` with `groups` groups of a small dataset each besides:
/// metadata of several hundred KiB, repacked for the cloud. Returns the
/// source's bytes and the repacked file's path (in `dir`).
fn many_objects(dir: &std::path::Path, groups: u32, chunks: u64) -> (Vec<u8>, std::path::PathBuf) {
    let a = dir.join("many.arca");
    std::fs::write(&a, sample(chunks)).unwrap();
    let f = File::options().mode(Mode::Append).open(&a).unwrap();
    let g = f.root().create_group("many").unwrap();
    for i in 0..groups {
        let d = g
            .create_group(&format!("g{i}"))
            .unwrap()
            .create_dataset("v", &DatasetOptions::new(Datatype::uint(4), &[4]))
            .unwrap();
        d.write_all(&[i, i + 1, i + 2, i + 3]).unwrap();
        d.attrs()
            .set("units", &arca::AttrValue::string("m/s"))
            .unwrap();
    }
    f.close().unwrap();
    let b = dir.join("many-cloud.arca");
    arca::repack_with(
        &a,
        &b,
        &arca::RepackOptions::new().cloud(true),
        &mut |_, _| {},
    )
    .unwrap();
    (std::fs::read(&a).unwrap(), b)
}

/// Every data extent of the file at `p` lies at or past `meta_end`, and
/// every metadata extent but the records at the end below it: returns how
/// many metadata bytes lie past it.
fn metadata_past(p: &std::path::Path, meta_end: u64) -> u64 {
    let mut past = 0;
    for e in File::open(p).unwrap().space_map().unwrap() {
        match e.what {
            "chunk" | "contiguous data" | "vlen chunk" => {
                assert!(
                    e.addr >= meta_end,
                    "{} at {} below {meta_end}",
                    e.what,
                    e.addr
                )
            }
            "free section" | "aggregator" | "left unused" | "free-space record" => {}
            _ if e.addr >= meta_end => past += e.len,
            _ => {}
        }
    }
    past
}

#[test]
fn metadata_larger_than_the_first_read_is_fetched_in_one_more_request() {
    // 3000 groups of a small dataset and a dataset of 3000 chunks:
    // metadata many times a first read of 64 KiB, read in 4 KiB blocks.
    let dir = tempfile::tempdir().unwrap();
    let (plain, b) = many_objects(dir.path(), 3000, 3000);
    let bytes = std::fs::read(&b).unwrap();
    File::open(&b).unwrap().check().unwrap();
    let meta_end = meta_end_of(&bytes);
    let head = 64u64 << 10;
    assert!(
        meta_end > 5 * head && meta_end < bytes.len() as u64 / 2,
        "{meta_end}"
    );
    // All the structures lie below it; no data does.
    assert_eq!(metadata_past(&b, meta_end), 0);
    assert_eq!(meta_end_of(&plain), 0);
    put("t/many-cloud.arca", bytes.clone());
    put("t/many.arca", plain);
    let opts = |extra: &[(&str, &str)]| {
        let mut o = CloudOptions::new()
            .set("head_bytes", &head.to_string())
            .unwrap()
            .set("block_bytes", "4096")
            .unwrap();
        for (k, v) in extra {
            o = o.set(k, v).unwrap();
        }
        o
    };
    // Open, one far object and one far chunk: (requests, round trips).
    let reach = |key: &str, o: &CloudOptions| {
        let f = open(key, o).unwrap();
        let s = f.io_stats();
        assert_eq!((s.requests, s.round_trips), (1, 1), "{key}: open");
        let v: Vec<u32> = f
            .root()
            .dataset("many/g2999/v")
            .unwrap()
            .read_all()
            .unwrap();
        assert_eq!(v, vec![2999, 3000, 3001, 3002]);
        let k = f.root().dataset("k").unwrap();
        let i = 2990u64;
        let c: Vec<u32> = k
            .read(&Selection::from_ranges(&[(i * 256, i * 256 + 4, 1)]).unwrap())
            .unwrap();
        assert_eq!(c, (0..4).map(|j| (i * 256 + j) as u32).collect::<Vec<_>>());
        let s = f.io_stats();
        (s.requests, s.round_trips)
    };
    // The head, the rest of the metadata region, the far dataset's data,
    // the chunk: never a request per structure.
    let laid_out = reach("t/many-cloud.arca", &opts(&[]));
    assert_eq!(laid_out, (3, 3));
    // Opening alone fetches no more than the head; a chunk alone is the
    // region and the chunk.
    let f = open("t/many-cloud.arca", &opts(&[])).unwrap();
    let k = f.root().dataset("k").unwrap();
    let _: Vec<u32> = k
        .read(&Selection::from_ranges(&[(1500 * 256, 1500 * 256 + 1, 1)]).unwrap())
        .unwrap();
    let s = f.io_stats();
    assert_eq!((s.requests, s.round_trips), (3, 3), "{s:?}");
    assert!(s.bytes_fetched >= meta_end - head && s.bytes_fetched < meta_end + (64 << 10));
    // Without the region fetched at once (a limit of 0, or a region
    // beyond the limit), structures come a block at a time, as in a file
    // without one.
    let blockwise = reach("t/many-cloud.arca", &opts(&[("meta_bytes", "0")]));
    assert!(blockwise.0 > laid_out.0 + 2, "{blockwise:?}");
    eprintln!(
        "{} bytes, meta_end {meta_end}, first read {head}: open + object + chunk {laid_out:?} \
         (requests, round trips), {blockwise:?} a block at a time",
        bytes.len()
    );
    let small = (meta_end - head - 1).to_string();
    assert_eq!(
        reach("t/many-cloud.arca", &opts(&[("meta_bytes", &small)])),
        blockwise
    );
    // A file not laid out (meta_end 0) reads as before: the option changes nothing.
    assert_eq!(
        reach("t/many.arca", &opts(&[])),
        reach("t/many.arca", &opts(&[("meta_bytes", "0")]))
    );
}

#[test]
fn a_metadata_region_past_the_end_of_the_file_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let (_, b) = many_objects(dir.path(), 50, 10);
    let mut bytes = std::fs::read(&b).unwrap();
    assert!(meta_end_of(&bytes) > 4096);
    let eof = bytes.len() as u64;
    for bad in [eof + 1, 17, u64::MAX] {
        bytes[104..112].copy_from_slice(&bad.to_le_bytes());
        let crc = crc32c::crc32c(&bytes[12..128]);
        bytes[8..12].copy_from_slice(&crc.to_le_bytes());
        let e = File::from_bytes(bytes.clone()).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{bad}: {e}");
        put("t/bad-meta.arca", bytes.clone());
        let e = open(
            "t/bad-meta.arca",
            &CloudOptions::new().set("head_bytes", "4096").unwrap(),
        )
        .unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{bad}: {e}");
        assert!(e.to_string().contains("metadata region"), "{e}");
    }
}

#[test]
fn a_later_writer_keeps_the_metadata_region_true() {
    let dir = tempfile::tempdir().unwrap();
    let (_, b) = many_objects(dir.path(), 500, 100);
    let meta_end = meta_end_of(&std::fs::read(&b).unwrap());
    assert!(meta_end > 4096);
    // Delete objects (their space freed below meta_end), then add data and
    // metadata: no data goes below meta_end, metadata may go past it.
    let f = File::options().mode(Mode::Append).open(&b).unwrap();
    for i in 0..200 {
        f.root().delete(&format!("many/g{i}")).unwrap();
    }
    f.close().unwrap();
    let f = File::options().mode(Mode::Append).open(&b).unwrap();
    let g = f.root().create_group("later").unwrap();
    for i in 0..600u32 {
        let d = g
            .create_dataset(
                &format!("d{i}"),
                &DatasetOptions::new(Datatype::uint(4), &[64]).chunks(&[16]),
            )
            .unwrap();
        d.write_all(&(0..64).map(|j| i * j).collect::<Vec<u32>>())
            .unwrap();
    }
    f.close().unwrap();
    let bytes = std::fs::read(&b).unwrap();
    assert_eq!(meta_end_of(&bytes), meta_end);
    assert!(
        metadata_past(&b, meta_end) > 0,
        "the new metadata lies past the region"
    );
    File::open(&b).unwrap().check().unwrap();
    // Read by URL, the region still comes in one request and what lies
    // past it is read as in any file.
    put("t/later.arca", bytes);
    let o = CloudOptions::new()
        .set("head_bytes", "4096")
        .unwrap()
        .set("block_bytes", "4096")
        .unwrap();
    let f = open("t/later.arca", &o).unwrap();
    let v: Vec<u32> = f.root().dataset("later/d599").unwrap().read_all().unwrap();
    assert_eq!(v, (0..64).map(|j| 599 * j).collect::<Vec<u32>>());
    let v: Vec<u32> = f.root().dataset("many/g499/v").unwrap().read_all().unwrap();
    assert_eq!(v, vec![499, 500, 501, 502]);
}

// ---- Writing: staged locally, published by conditional PUT ----

/// The bytes of the object at `key` in the memory store.
fn object(key: &str) -> Vec<u8> {
    tokio_free_block_on(async {
        memory_store()
            .get(&ObjPath::from(key))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
            .to_vec()
    })
}

fn write(mode: Mode, key: &str) -> arca::Result<File> {
    File::options()
        .mode(mode)
        .open_url(&format!("memory:///{key}"), &CloudOptions::new())
}

fn add(f: &File, name: &str, n: u32) {
    f.root()
        .create_dataset(name, &DatasetOptions::new(Datatype::uint(4), &[n as u64]))
        .unwrap()
        .write_all(&(0..n).collect::<Vec<u32>>())
        .unwrap();
}

/// The staged file a conflict names.
fn staged_of(e: &Error) -> std::path::PathBuf {
    match e {
        Error::Conflict {
            staged: Some(p), ..
        } => p.clone(),
        e => panic!("not a conflict with a staged file: {e}"),
    }
}

#[test]
fn a_file_created_by_url_is_published_at_each_commit_and_reads_back() {
    let f = write(Mode::Create, "w/new.arca").unwrap();
    // Opening asked once whether the object exists (a HEAD).
    let s = f.io_stats();
    assert_eq!((s.requests, s.round_trips, s.puts), (1, 1, 0));
    assert_eq!(f.url(), Some("memory:///w/new.arca"));
    add(&f, "a", 100);
    f.flush().unwrap();
    let s = f.io_stats();
    assert_eq!(
        (s.puts, s.bytes_put),
        (1, object("w/new.arca").len() as u64)
    );
    let r = open("w/new.arca", &CloudOptions::new()).unwrap();
    assert_eq!(
        r.root().dataset("a").unwrap().read_all::<u32>().unwrap(),
        (0..100).collect::<Vec<u32>>()
    );
    // A transaction's end is a commit: one more PUT.
    f.transaction(|f| {
        add(f, "b", 10);
        Ok(())
    })
    .unwrap();
    assert_eq!(f.io_stats().puts, 2);
    // A flush with nothing new sends nothing.
    f.flush().unwrap();
    assert_eq!(f.io_stats().puts, 2);
    add(&f, "c", 5);
    f.close().unwrap();
    let r = open("w/new.arca", &CloudOptions::new()).unwrap();
    for (name, n) in [("a", 100), ("b", 10), ("c", 5)] {
        assert_eq!(
            r.root().dataset(name).unwrap().read_all::<u32>().unwrap(),
            (0..n).collect::<Vec<u32>>()
        );
    }
    // An empty new file is published at its close.
    write(Mode::CreateNew, "w/empty.arca")
        .unwrap()
        .close()
        .unwrap();
    assert!(open("w/empty.arca", &CloudOptions::new())
        .unwrap()
        .root()
        .members()
        .unwrap()
        .is_empty());
    // The staged copy goes once published and closed.
    let dir = tempfile::tempdir().unwrap();
    let o = CloudOptions::new()
        .set("staging_dir", dir.path().to_str().unwrap())
        .unwrap();
    let f = File::options()
        .mode(Mode::Create)
        .open_url("memory:///w/tidy.arca", &o)
        .unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    f.close().unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Dropped without a close, it is published and tidied as by one.
    let f = File::options()
        .mode(Mode::Create)
        .open_url("memory:///w/dropped.arca", &o)
        .unwrap();
    add(&f, "a", 3);
    drop(f);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(open("w/dropped.arca", &CloudOptions::new())
        .unwrap()
        .root()
        .contains("a")
        .unwrap());
}

#[test]
fn append_fetches_the_object_once_and_publishes_what_it_adds() {
    let bytes = sample(8);
    put("w/app.arca", bytes.clone());
    let reader = open("w/app.arca", &CloudOptions::new()).unwrap();
    let f = write(Mode::Append, "w/app.arca").unwrap();
    let s = f.io_stats();
    assert_eq!(
        (s.requests, s.bytes_fetched, s.puts),
        (1, bytes.len() as u64, 0)
    );
    add(&f, "new", 300);
    f.flush().unwrap();
    assert_eq!(f.io_stats().puts, 1);
    f.close().unwrap();
    let r = open("w/app.arca", &CloudOptions::new()).unwrap();
    assert_eq!(
        r.root().dataset("new").unwrap().read_all::<u32>().unwrap(),
        (0..300).collect::<Vec<u32>>()
    );
    assert_eq!(
        r.root().dataset("k").unwrap().read_all::<u32>().unwrap(),
        (0..8 * 256).collect::<Vec<u32>>()
    );
    // A reader opened before sees the old object or an error, never a mixture.
    assert!(!reader.root().contains("new").unwrap());
    // r+ likewise; on a missing object it is an error, and a opens a new one.
    let f = write(Mode::ReadWrite, "w/app.arca").unwrap();
    f.root().delete("new").unwrap();
    f.close().unwrap();
    assert!(!open("w/app.arca", &CloudOptions::new())
        .unwrap()
        .root()
        .contains("new")
        .unwrap());
    let e = write(Mode::ReadWrite, "w/none.arca").unwrap_err();
    assert!(
        matches!(
            e,
            Error::Remote {
                kind: RemoteKind::NotFound,
                ..
            }
        ),
        "{e}"
    );
    let f = write(Mode::Append, "w/fresh.arca").unwrap();
    add(&f, "x", 3);
    f.close().unwrap();
    assert!(open("w/fresh.arca", &CloudOptions::new())
        .unwrap()
        .root()
        .contains("x")
        .unwrap());
}

#[test]
fn of_two_writers_exactly_one_publishes_and_the_other_keeps_its_file() {
    let base = sample(4);
    for round in 0..10 {
        let key = format!("w/race-{round}.arca");
        put(&key, base.clone());
        let writers: Vec<File> = (0..2)
            .map(|i| {
                let f = write(Mode::Append, &key).unwrap();
                add(&f, &format!("by{i}"), 50 + i);
                f
            })
            .collect();
        let go = std::sync::Barrier::new(2);
        let results: Vec<arca::Result<()>> = std::thread::scope(|s| {
            let hs: Vec<_> = writers
                .iter()
                .map(|f| {
                    let go = &go;
                    s.spawn(move || {
                        go.wait();
                        f.flush()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won: Vec<usize> = (0..2).filter(|&i| results[i].is_ok()).collect();
        assert_eq!(won.len(), 1, "round {round}: {results:?}");
        let (w, l) = (won[0], 1 - won[0]);
        let e = results[l].as_ref().unwrap_err();
        let staged = staged_of(e);
        assert!(e.to_string().contains(&staged.display().to_string()));
        // The store holds the winner's file.
        let r = open(&key, &CloudOptions::new()).unwrap();
        assert!(r.root().contains(&format!("by{w}")).unwrap());
        assert!(!r.root().contains(&format!("by{l}")).unwrap());
        // The loser's close conflicts again and keeps its file, readable
        // locally with what it wrote.
        let mut ws = writers;
        let loser = ws.remove(l);
        let e = loser.close().unwrap_err();
        assert_eq!(staged_of(&e), staged);
        let local = File::open(&staged).unwrap();
        assert_eq!(
            local
                .root()
                .dataset(&format!("by{l}"))
                .unwrap()
                .read_all::<u32>()
                .unwrap(),
            (0..50 + l as u32).collect::<Vec<u32>>()
        );
        drop(local);
        ws.pop().unwrap().close().unwrap();
        std::fs::remove_dir_all(staged.parent().unwrap()).unwrap();
    }
}

#[test]
fn create_new_on_an_existing_object_conflicts() {
    put("w/taken.arca", sample(2));
    let e = write(Mode::CreateNew, "w/taken.arca").unwrap_err();
    assert!(matches!(e, Error::Conflict { staged: None, .. }), "{e}");
    // Two creators of one new object: both open, one publishes.
    let a = write(Mode::CreateNew, "w/both.arca").unwrap();
    let b = write(Mode::CreateNew, "w/both.arca").unwrap();
    add(&a, "a", 1);
    add(&b, "b", 1);
    a.close().unwrap();
    let e = b.close().unwrap_err();
    let staged = staged_of(&e);
    assert!(File::open(&staged).unwrap().root().contains("b").unwrap());
    let r = open("w/both.arca", &CloudOptions::new()).unwrap();
    assert!(r.root().contains("a").unwrap() && !r.root().contains("b").unwrap());
    std::fs::remove_dir_all(staged.parent().unwrap()).unwrap();
    // w replaces an object only if it is still the one seen at open.
    let w = write(Mode::Create, "w/both.arca").unwrap();
    let other = write(Mode::Append, "w/both.arca").unwrap();
    add(&other, "c", 1);
    other.close().unwrap();
    let e = w.close().unwrap_err();
    std::fs::remove_dir_all(staged_of(&e).parent().unwrap()).unwrap();
    // Unchanged since the open, it is replaced: a new, empty file but for
    // what this writer added.
    let w = write(Mode::Create, "w/both.arca").unwrap();
    add(&w, "d", 2);
    w.close().unwrap();
    let r = open("w/both.arca", &CloudOptions::new()).unwrap();
    assert_eq!(r.root().members().unwrap().len(), 1);
    assert!(r.root().contains("d").unwrap());
}

/// The memory store, but a PUT fails (as an upload cut off by a killed
/// connection does) while `fail` is set, and while `lose` is, a PUT is
/// made but its answer lost: with `lose` 1 the caller gets a transport
/// error, with 2 the PUT is sent again (as a client retries) and the
/// caller gets that second answer.
#[derive(Debug)]
struct CutUploads {
    fail: std::sync::atomic::AtomicBool,
    lose: std::sync::atomic::AtomicU8,
    puts: std::sync::atomic::AtomicU64,
}

impl std::fmt::Display for CutUploads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CutUploads")
    }
}

type OsResult<T> = arca::io::object_store::Result<T>;

#[async_trait::async_trait]
impl ObjectStore for CutUploads {
    async fn put_opts(&self, p: &ObjPath, data: PutPayload, o: PutOptions) -> OsResult<PutResult> {
        use std::sync::atomic::Ordering::SeqCst;
        self.puts.fetch_add(1, SeqCst);
        if self.fail.load(SeqCst) {
            return Err(arca::io::object_store::Error::Generic {
                store: "CutUploads",
                source: "connection reset during the upload".into(),
            });
        }
        match self.lose.load(SeqCst) {
            0 => memory_store().put_opts(p, data, o).await,
            1 => {
                memory_store().put_opts(p, data, o).await?;
                Err(arca::io::object_store::Error::Generic {
                    store: "CutUploads",
                    source: "connection reset before the answer".into(),
                })
            }
            _ => {
                memory_store().put_opts(p, data.clone(), o.clone()).await?;
                self.puts.fetch_add(1, SeqCst);
                memory_store().put_opts(p, data, o).await
            }
        }
    }
    async fn put_multipart_opts(
        &self,
        p: &ObjPath,
        o: PutMultipartOptions,
    ) -> OsResult<Box<dyn MultipartUpload>> {
        memory_store().put_multipart_opts(p, o).await
    }
    async fn get_opts(&self, p: &ObjPath, o: GetOptions) -> OsResult<GetResult> {
        memory_store().get_opts(p, o).await
    }
    async fn delete(&self, p: &ObjPath) -> OsResult<()> {
        memory_store().delete(p).await
    }
    fn list(
        &self,
        p: Option<&ObjPath>,
    ) -> futures::stream::BoxStream<'static, OsResult<ObjectMeta>> {
        memory_store().list(p)
    }
    async fn list_with_delimiter(&self, p: Option<&ObjPath>) -> OsResult<ListResult> {
        memory_store().list_with_delimiter(p).await
    }
    async fn copy(&self, a: &ObjPath, b: &ObjPath) -> OsResult<()> {
        memory_store().copy(a, b).await
    }
    async fn copy_if_not_exists(&self, a: &ObjPath, b: &ObjPath) -> OsResult<()> {
        memory_store().copy_if_not_exists(a, b).await
    }
}

#[test]
fn an_upload_cut_off_leaves_the_old_object_whole() {
    use std::sync::atomic::Ordering::SeqCst;
    let old = sample(8);
    put("w/cut.arca", old.clone());
    let store = std::sync::Arc::new(CutUploads {
        fail: true.into(),
        lose: 0.into(),
        puts: 0.into(),
    });
    let f = File::options()
        .mode(Mode::Append)
        .open_store(
            store.clone(),
            ObjPath::from("w/cut.arca"),
            "memory:///w/cut.arca",
            &CloudOptions::new(),
        )
        .unwrap();
    add(&f, "lost", 1000);
    let e = f.flush().unwrap_err();
    assert!(
        matches!(&e, Error::Remote { kind: RemoteKind::Failed, message, .. }
            if message.contains("kept at")),
        "{e}"
    );
    assert_eq!(store.puts.load(SeqCst), 1);
    // The object is the old one, byte for byte, and reads as before.
    assert_eq!(object("w/cut.arca"), old);
    let r = open("w/cut.arca", &CloudOptions::new()).unwrap();
    assert!(!r.root().contains("lost").unwrap());
    assert_eq!(
        r.root().dataset("k").unwrap().read_all::<u32>().unwrap(),
        (0..8 * 256).collect::<Vec<u32>>()
    );
    // The writer goes on: its next commit publishes what was not.
    store.fail.store(false, SeqCst);
    f.close().unwrap();
    assert_eq!(store.puts.load(SeqCst), 2);
    let r = open("w/cut.arca", &CloudOptions::new()).unwrap();
    assert_eq!(
        r.root().dataset("lost").unwrap().read_all::<u32>().unwrap(),
        (0..1000).collect::<Vec<u32>>()
    );
}

#[test]
fn a_publish_whose_answer_was_lost_is_not_a_conflict_with_itself() {
    use std::sync::atomic::Ordering::SeqCst;
    put("w/lost.arca", sample(4));
    let store = std::sync::Arc::new(CutUploads {
        fail: false.into(),
        lose: 1.into(),
        puts: 0.into(),
    });
    let f = File::options()
        .mode(Mode::Append)
        .open_store(
            store.clone(),
            ObjPath::from("w/lost.arca"),
            "memory:///w/lost.arca",
            &CloudOptions::new(),
        )
        .unwrap();
    let opened = f.io_stats();
    // The PUT is made, its answer lost: one HEAD finds this publish's
    // token on the object and the commit succeeds.
    add(&f, "a", 100);
    f.flush().unwrap();
    let s = f.io_stats();
    assert_eq!((s.puts - opened.puts, s.requests - opened.requests), (1, 1));
    assert_eq!(store.puts.load(SeqCst), 1);
    // Lost, and the client's retry meets the object the first attempt
    // made (412): the same.
    store.lose.store(2, SeqCst);
    add(&f, "b", 10);
    f.flush().unwrap();
    assert_eq!(store.puts.load(SeqCst), 3);
    assert_eq!(f.io_stats().requests - opened.requests, 2);
    // The next commit publishes on the version adopted: no conflict.
    store.lose.store(0, SeqCst);
    add(&f, "c", 5);
    f.flush().unwrap();
    assert_eq!(f.io_stats().requests - opened.requests, 2);
    let r = open("w/lost.arca", &CloudOptions::new()).unwrap();
    for name in ["a", "b", "c", "k"] {
        assert!(r.root().contains(name).unwrap(), "{name}");
    }
    // A genuine racer still wins: this writer's PUT is refused, the HEAD
    // finds another writer's object, and the commit conflicts.
    let other = write(Mode::Append, "w/lost.arca").unwrap();
    add(&other, "theirs", 3);
    other.close().unwrap();
    store.lose.store(2, SeqCst);
    add(&f, "mine", 3);
    let e = f.flush().unwrap_err();
    let staged = staged_of(&e);
    assert_eq!(f.io_stats().requests - opened.requests, 3);
    let r = open("w/lost.arca", &CloudOptions::new()).unwrap();
    assert!(r.root().contains("theirs").unwrap() && !r.root().contains("mine").unwrap());
    store.lose.store(0, SeqCst);
    assert!(f.close().is_err());
    assert!(File::open(&staged)
        .unwrap()
        .root()
        .contains("mine")
        .unwrap());
    std::fs::remove_dir_all(staged.parent().unwrap()).unwrap();
}
