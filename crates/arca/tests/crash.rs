//! Crash safety: a fault-injecting disk stops the process at every write
//! and sync of a session, keeping a random subset of unsynced writes (some
//! torn). After each crash the file must open (rolling back the journal),
//! pass `check`, and hold exactly the state after a prefix of the session's
//! transactions: the interrupted one all or nothing, the last committed one
//! possibly lost to a power failure unless flushed or closed (J1–J10 in the
//! journal module). The variable-length sessions also write vector bytes
//! and records into the file beside arca, as parallel writers do.

mod common;

use std::sync::{Arc, Mutex, MutexGuard};

use arca::io::{DiskError, Driver, FaultDisk, MemoryDriver};
use arca::{AttrValue, DatasetOptions, Datatype, File, Filter, Selection, VlenOptions};
use common::{snapshot, Snapshot};

/// The data file's driver, shared by the `File` and a session that writes
/// vector bytes and records into the file beside it, as parallel writers
/// do after `vlen_extend` and `vlen_record_extent`.
#[derive(Clone)]
struct RawFile(Arc<Mutex<Box<dyn Driver>>>);

impl RawFile {
    fn new(d: impl Driver + 'static) -> Self {
        RawFile(Arc::new(Mutex::new(Box::new(d))))
    }

    fn get(&self) -> MutexGuard<'_, Box<dyn Driver>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Driver for RawFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        self.get().read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> arca::Result<()> {
        self.get().write_at(offset, data)
    }
    fn sync(&mut self) -> arca::Result<()> {
        self.get().sync()
    }
    fn truncate(&mut self, len: u64) -> arca::Result<()> {
        self.get().truncate(len)
    }
    fn len(&self) -> arca::Result<u64> {
        self.get().len()
    }
}

/// The committed starting file.
fn base() -> Vec<u8> {
    let disk = FaultDisk::new(None, 1);
    let f = File::options()
        .open_drivers(
            Box::new(disk.driver()),
            Some(Box::new(disk.driver())),
            true,
            true,
        )
        .unwrap();
    let r = f.root();
    r.attrs().set("title", &AttrValue::string("base")).unwrap();
    for i in 0..30 {
        r.create_group(&format!("g{i:02}"))
            .unwrap()
            .attrs()
            .set("i", &AttrValue::scalar(i as i64))
            .unwrap();
    }
    let c = r
        .create_dataset(
            "chunked",
            &DatasetOptions::new(Datatype::float(8), &[64, 64])
                .chunks(&[16, 16])
                .filters(&[Filter::Shuffle, Filter::Zstd(1)]),
        )
        .unwrap();
    c.write_all(&(0..4096).map(|x| x as f64).collect::<Vec<_>>())
        .unwrap();
    let d = r
        .create_dataset("contig", &DatasetOptions::new(Datatype::int(4), &[5000]))
        .unwrap();
    d.write_all(&(0..5000).collect::<Vec<i32>>()).unwrap();
    f.close().unwrap();
    disk.durable_images().remove(0)
}

type Session = fn(&File, &mut RawFile, usize) -> arca::Result<()>;

/// An editing session: attribute and group changes, several transactions.
fn edit_session(f: &File, _: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    match t {
        0 => {
            r.attrs().set("title", &AttrValue::string("edited"))?;
            r.attrs().set(
                "new",
                &AttrValue::array(
                    &[2, 2, 2],
                    &[
                        1.0f64, 2.0, -110.0, -120.0, 2.1e-3, 2.2e-3, -3.1e-3, -3.2e-2,
                    ],
                )?,
            )?;
            r.group("g03")?.attrs().delete("i")?;
            r.group("g04")?.attrs().rename("i", "j")?;
        }
        1 => {
            r.delete("g05")?;
            r.create_group("h/i/j")?;
            r.rename("g06", "h/g06")?;
            r.attrs()
                .set("big", &AttrValue::array(&[2000], &vec![7u32; 2000])?)?;
        }
        _ => {
            for i in 10..30 {
                r.delete(&format!("g{i:02}"))?;
            }
        }
    }
    Ok(())
}

/// A data-writing session: chunk rewrites, contiguous overwrites, resizes.
fn data_session(f: &File, _: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    let c = r.dataset("chunked")?;
    let d = r.dataset("contig")?;
    match t {
        0 => {
            c.write(
                &Selection::from_ranges(&[(8, 40, 1), (0, 64, 1)])?,
                &vec![-1.0f64; 32 * 64],
            )?;
            d.write(
                &Selection::from_ranges(&[(100, 4000, 3)])?,
                &vec![9i32; 1300],
            )?;
        }
        1 => {
            let e = r.create_dataset(
                "ext",
                &DatasetOptions::new(Datatype::uint(2), &[0])
                    .maxshape(&[None])
                    .chunks(&[256])
                    .filters(&[Filter::Lz4]),
            )?;
            e.resize(&[1000])?;
            e.write_all(&(0..1000).map(|x| x as u16).collect::<Vec<_>>())?;
            c.write_all(&vec![3.5f64; 4096])?;
        }
        _ => {
            r.delete("chunked")?;
            d.write_all(&vec![1i32; 5000])?;
        }
    }
    Ok(())
}

/// A session that reuses space the previous transaction freed, grows the
/// file in every transaction and finally shrinks it: the cases where a
/// stale journal could do harm (J7, J8, J10).
fn reuse_session(f: &File, _: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    match t {
        0 => {
            r.delete("contig")?;
            r.attrs()
                .set("grow", &AttrValue::array(&[30000], &vec![5u32; 30000])?)?;
        }
        1 => {
            // Lands in the extent `contig` left, written before any journal sync.
            let d = r.create_dataset("again", &DatasetOptions::new(Datatype::int(4), &[5000]))?;
            d.write_all(&vec![-7i32; 5000])?;
            let d = r.create_dataset("tail", &DatasetOptions::new(Datatype::uint(1), &[60000]))?;
            d.write_all(&vec![9u8; 60000])?;
        }
        _ => {
            r.delete("tail")?;
            r.attrs().delete("grow")?;
        }
    }
    Ok(())
}

/// Small objects: compact datasets written and rewritten in their headers,
/// attribute trees that grow through page sizes (pages freed and reused in
/// the same transaction), deletions of objects committed before.
fn small_objects_session(f: &File, _: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    match t {
        0 => {
            for i in 0..24u32 {
                let d = r.create_dataset(
                    &format!("small/d{i:02}"),
                    &DatasetOptions::new(Datatype::float(8), &[4]),
                )?;
                d.write_all(&[f64::from(i); 4])?;
                for k in 0..=(i % 10) {
                    d.attrs()
                        .set(&format!("a{k}"), &AttrValue::scalar(i64::from(i * k)))?;
                }
            }
        }
        1 => {
            for i in (0..24).step_by(3) {
                let d = r.dataset(&format!("small/d{i:02}"))?;
                d.write(&Selection::from_ranges(&[(1, 3, 1)])?, &[-1.0f64, -2.0])?;
            }
            for i in 0..10 {
                let g = r.group(&format!("g{i:02}"))?;
                for k in 0..8 {
                    g.attrs()
                        .set(&format!("k{k}"), &AttrValue::scalar(k as u16))?;
                }
            }
        }
        _ => {
            for i in (0..24).step_by(2) {
                r.delete(&format!("small/d{i:02}"))?;
            }
            r.create_dataset("small/late", &DatasetOptions::new(Datatype::int(2), &[3]))?
                .write_all(&[1i16, 2, 3])?;
        }
    }
    Ok(())
}

/// Links: second names (the link-count tree grows and shrinks), soft and
/// external links, a group that keeps creation order; objects that lose a
/// name live on, and go with their last one.
fn links_session(f: &File, _: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    match t {
        0 => {
            let o = r.create_group_with("ordered", &arca::GroupOptions::new().track_order(true))?;
            for i in (0..12).rev() {
                r.link_hard(&format!("g{i:02}"), &format!("ordered/h{i:02}"))?;
                o.link_soft(&format!("s{i:02}"), &format!("/g{i:02}"))?;
            }
            r.link_external("ext", "elsewhere.arca", "/x")?;
            r.link_hard("contig", "d_alias")?;
        }
        1 => {
            for i in 0..6 {
                r.delete(&format!("g{i:02}"))?;
            }
            r.rename("d_alias", "ordered/d")?;
        }
        _ => {
            for i in 0..6 {
                r.delete(&format!("ordered/h{i:02}"))?;
            }
            r.delete("contig")?;
            r.delete("ext")?;
        }
    }
    Ok(())
}

/// Bytes per vector chunk: small, so that a few KiB span whole chunks.
const VCHUNK: u64 = 4096;

fn range(a: u64, b: u64) -> Selection {
    Selection::from_ranges(&[(a, b, 1)]).unwrap()
}

fn strings(tag: &str, a: u64, b: u64) -> Vec<String> {
    (a..b)
        .map(|i| format!("{tag}{i}{}", "-".repeat((i % 23) as usize)))
        .collect()
}

/// Rows `a..b` of under `max` items each (some empty), Arrow-style.
fn ragged<T: From<u16>>(salt: u64, a: u64, b: u64, max: u64) -> (Vec<T>, Vec<u64>) {
    let mut values = vec![];
    let mut offsets = vec![0];
    for i in a..b {
        for k in 0..(i * 7 + salt) % max {
            values.push(T::from((i * 16 + k + salt) as u16));
        }
        offsets.push(values.len() as u64);
    }
    (values, offsets)
}

fn bytes(salt: u8, n: usize) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ salt).collect()
}

/// The committed starting file of the variable-length sessions: `base`
/// plus a vector of each kind.
fn vlen_base() -> Vec<u8> {
    let disk = FaultDisk::new(None, 1);
    let (f, _) = open_on(&disk, &base()).unwrap();
    let r = f.root();
    let small = VlenOptions::default().chunk_bytes(VCHUNK);
    let seq = |t| Datatype::vlen(t).unwrap();
    // Chunked records, so that it can be resized.
    let names = DatasetOptions::new(Datatype::VlenStr, &[300])
        .chunks(&[64])
        .maxshape(&[None])
        .vlen(small.clone());
    let names = r.create_dataset("names", &names).unwrap();
    names
        .write_strings(&range(0, 200), &strings("n", 0, 200))
        .unwrap();
    let rows =
        DatasetOptions::new(seq(Datatype::float(4)), &[200]).vlen(small.clone().reuse_space(true));
    let (v, o) = ragged::<f32>(0, 0, 200, 13);
    let rows = r.create_dataset("rows", &rows).unwrap();
    rows.write_ragged(&range(0, 200), &v, &o).unwrap();
    let packed = DatasetOptions::new(seq(Datatype::int(4)), &[100])
        .vlen(small.clone().filters(&[Filter::Shuffle, Filter::Zstd(1)]));
    let (v, o) = ragged::<i32>(1, 0, 100, 29);
    let packed = r.create_dataset("packed", &packed).unwrap();
    packed.write_ragged(&range(0, 100), &v, &o).unwrap();
    // Contiguous records, which `vlen_record_extent` hands out.
    let bulk = DatasetOptions::new(Datatype::VlenBytes, &[8]).vlen(small.clone());
    r.create_dataset("bulk", &bulk).unwrap();
    // Four whole chunks in one extent, free again once it is deleted.
    let old = DatasetOptions::new(Datatype::VlenBytes, &[4]).vlen(small);
    let old = r.create_dataset("old", &old).unwrap();
    old.write_vlen_bytes(&range(0, 4), &vec![bytes(1, VCHUNK as usize); 4])
        .unwrap();
    f.close().unwrap();
    disk.durable_images().remove(0)
}

/// A variable-length session that appends: strings, a filtered vector,
/// whole chunks written straight from the caller's buffer, direct
/// extensions whose bytes and records are written beside arca (as
/// parallel writers do), records pointed at them, and resizes.
fn vlen_append_session(f: &File, raw: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    let names = r.dataset("names")?;
    let bulk = r.dataset("bulk")?;
    match t {
        0 => {
            names.write_strings(&range(200, 260), &strings("a", 200, 260))?;
            let (v, o) = ragged::<i32>(2, 70, 100, 29);
            r.dataset("packed")?.write_ragged(&range(70, 100), &v, &o)?;
            // Five whole chunks and part of a sixth.
            let items: Vec<_> = (0..4).map(|i| bytes(i as u8, 5000 + 300 * i)).collect();
            bulk.write_vlen_bytes(&range(0, 4), &items)?;
            r.delete("old")?;
        }
        1 => {
            // May lie where `old` was. Whole chunks are left to
            // `whole_chunk_extension_waits_for_the_last_commit`.
            let ext = bulk.vlen_extend(2 * VCHUNK - 200)?;
            let data = bytes(7, ext.len as usize);
            raw.write_at(ext.addr, &data)?;
            let first = crc32c::crc32c(&data[..VCHUNK as usize]);
            bulk.vlen_seal(&ext, &[(0, first)])?;
            let o = ext.offset;
            let rest = ext.len - 3000;
            bulk.write_vlen_records(&range(4, 8), &[o, 3000, o + 3000, rest, 0, 5000, o, 0])?;
            names.resize(&[400])?;
            names.write_strings(&range(300, 400), &strings("b", 300, 400))?;
        }
        _ => {
            // Part of a chunk: arca zeroes the rest.
            let ext = bulk.vlen_extend(VCHUNK + 500)?;
            raw.write_at(ext.addr, &bytes(9, ext.len as usize))?;
            bulk.vlen_seal(&ext, &[])?;
            let (at, n) = bulk.vlen_record_extent()?.expect("contiguous records");
            assert_eq!(n, 8 * 16);
            let o = ext.offset;
            let records: Vec<u8> = [o, 100, o + 100, ext.len - 100]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            raw.write_at(at, &records)?;
            names.resize(&[150])?;
        }
    }
    Ok(())
}

/// A variable-length session that overwrites: a space-reusing vector whose
/// freed ranges are saved and filled again, garbage in a plain and a
/// filtered vector, repacks, and a deletion.
fn vlen_rewrite_session(f: &File, _: &mut RawFile, t: usize) -> arca::Result<()> {
    let r = f.root();
    let rows = r.dataset("rows")?;
    match t {
        0 => {
            // Mostly longer rows: the old ranges are freed, the new appended.
            let (v, o) = ragged::<f32>(5, 0, 60, 20);
            rows.write_ragged(&range(0, 60), &v, &o)?;
            let (v, o) = ragged::<i32>(3, 0, 30, 40);
            r.dataset("packed")?.write_ragged(&range(0, 30), &v, &o)?;
        }
        1 => {
            // Short rows: free ranges are left and saved.
            let (v, o) = ragged::<f32>(6, 100, 180, 4);
            rows.write_ragged(&range(100, 180), &v, &o)?;
            let names = r.dataset("names")?;
            names.write_strings(&range(0, 100), &strings("c", 0, 100))?;
        }
        _ => {
            // Taken from the saved free ranges, which the repack then drops.
            let (v, o) = ragged::<f32>(7, 20, 40, 3);
            rows.write_ragged(&range(20, 40), &v, &o)?;
            rows.vlen_repack()?;
            r.dataset("names")?.vlen_repack()?;
            r.dataset("packed")?.vlen_repack()?;
            r.delete("old")?;
        }
    }
    Ok(())
}

const TRANSACTIONS: usize = 3;

/// How a session ends its transactions.
#[derive(Clone, Copy, PartialEq)]
enum Commit {
    /// `File::transaction` only: a commit is durable once the next one
    /// starts writing, or at close (J6, J9).
    Lazy,
    /// `File::flush` after each transaction: durable when it returns.
    Flush,
}

thread_local! {
    /// Metadata pages the sessions under test may cache (0: the default).
    /// A small cache fills with dirty pages inside a transaction, which
    /// then writes them back before its commit: write points to crash at.
    static CACHE_PAGES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Open `image` on `disk`, with the sidecar journal on the same disk;
/// also returns the data file for writes beside the `File`.
fn open_on(disk: &FaultDisk, image: &[u8]) -> arca::Result<(File, RawFile)> {
    let raw = RawFile::new(disk.driver_with(image.to_vec()));
    let mut options = File::options();
    if CACHE_PAGES.get() > 0 {
        options.page_cache_pages(CACHE_PAGES.get());
    }
    let f = options.open_drivers(
        Box::new(raw.clone()),
        Some(Box::new(disk.driver())),
        false,
        true,
    )?;
    Ok((f, raw))
}

/// Open what survived on the disk: the data file and its journal.
fn reopen(imgs: &[Vec<u8>]) -> arca::Result<File> {
    File::options().open_drivers(
        Box::new(MemoryDriver::from_bytes(imgs[0].clone())),
        Some(Box::new(MemoryDriver::from_bytes(imgs[1].clone()))),
        false,
        true,
    )
}

/// Run the session's transactions on a disk; stop at the first error.
/// Returns the transactions that returned Ok and whether close succeeded.
fn run(disk: &FaultDisk, image: &[u8], session: Session, commit: Commit) -> (usize, bool) {
    let Ok((f, mut raw)) = open_on(disk, image) else {
        return (0, false);
    };
    let mut done = 0;
    for t in 0..TRANSACTIONS {
        if f.transaction(|f| session(f, &mut raw, t)).is_err() {
            return (done, false);
        }
        if commit == Commit::Flush && f.flush().is_err() {
            return (done, false);
        }
        done += 1;
    }
    (done, f.close().is_ok())
}

/// The state after each prefix of the session's transactions.
fn states(image: &[u8], session: Session) -> Vec<Snapshot> {
    let mut out = vec![];
    for n in 0..=TRANSACTIONS {
        let mut raw = RawFile::new(MemoryDriver::from_bytes(image.to_vec()));
        let f = File::options()
            .open_drivers(Box::new(raw.clone()), None, false, true)
            .unwrap();
        for t in 0..n {
            session(&f, &mut raw, t).unwrap();
        }
        out.push(snapshot(&f).unwrap());
    }
    out
}

/// Random crash outcomes tried at each crash point.
const SEEDS: u64 = 6;

fn crash_everywhere(session: Session, commit: Commit) {
    crash_everywhere_on(&base(), session, commit, SEEDS);
}

/// Crash at every write and sync of a session on `image` with `seeds`
/// random outcomes and three fixed ones each.
fn crash_everywhere_on(image: &[u8], session: Session, commit: Commit, seeds: u64) {
    let expected = states(image, session);
    assert!(
        expected.windows(2).all(|w| w[0] != w[1]),
        "each transaction changes something"
    );
    let total = {
        let disk = FaultDisk::new(None, 0);
        assert_eq!(run(&disk, image, session, commit), (TRANSACTIONS, true));
        disk.ops()
    };
    assert!(total > 10);
    let mut recoveries = 0;
    let mut lost_last = 0;
    for k in 1..=total {
        // Random subsets of the unsynced writes survive; then none; then
        // all but the journal's (the worst case for a stale journal); then
        // all but the data file's.
        for seed in 0..seeds + 3 {
            let disk = FaultDisk::new(Some(k), k * 31 + seed);
            let disk = match seed - seeds.min(seed) {
                0 if seed < seeds => disk,
                0 => disk.losing_unsynced(),
                1 => disk.losing_unsynced_of(1),
                _ => disk.losing_unsynced_of(0),
            };
            let (done, closed) = run(&disk, image, session, commit);
            assert!(disk.crashed(), "crash point {k} was not reached");
            let imgs = disk.durable_images();
            let f = reopen(&imgs)
                .unwrap_or_else(|e| panic!("crash at op {k} (seed {seed}): reopen failed: {e}"));
            recoveries += f.recovered() as usize;
            f.check()
                .unwrap_or_else(|e| panic!("crash at op {k} (seed {seed}): check failed: {e}"));
            let s = snapshot(&f).unwrap();
            let at = expected.iter().position(|e| *e == s).unwrap_or_else(|| {
                panic!("crash at op {k} (seed {seed}): state is no prefix of the session")
            });
            // The interrupted transaction is all or nothing; a flushed or
            // closed one survives (J9); a lazily committed one may be lost to
            // its unsynced invalidation, but only whole and only the last
            // one (J6, J7, J10).
            let lo = match commit {
                _ if closed => TRANSACTIONS,
                Commit::Flush => done,
                Commit::Lazy => done.saturating_sub(1),
            };
            assert!(
                (lo..=(done + 1).min(TRANSACTIONS)).contains(&at),
                "crash at op {k} (seed {seed}): state after {at} transactions, {done} returned (closed: {closed})"
            );
            lost_last += (at + 1 == done) as usize;
        }
    }
    assert!(recoveries > 0, "no crash ever needed a rollback");
    if commit == Commit::Lazy {
        assert!(lost_last > 0, "no crash ever lost an unsynced invalidation");
    }
}

#[test]
fn crash_at_every_write_of_an_edit_session() {
    crash_everywhere(edit_session, Commit::Lazy);
}

#[test]
fn crash_at_every_write_of_a_data_session() {
    crash_everywhere(data_session, Commit::Lazy);
}

#[test]
fn crash_at_every_write_of_a_small_objects_session() {
    crash_everywhere(small_objects_session, Commit::Lazy);
    crash_everywhere(small_objects_session, Commit::Flush);
}

#[test]
fn crash_at_every_write_of_a_small_objects_session_with_a_small_page_cache() {
    let writes = |pages| {
        CACHE_PAGES.set(pages);
        let disk = FaultDisk::new(None, 0);
        assert_eq!(
            run(&disk, &base(), small_objects_session, Commit::Lazy),
            (TRANSACTIONS, true)
        );
        disk.ops()
    };
    let (default, small) = (writes(0), writes(16));
    assert!(
        small > default,
        "16 pages: {small} writes and syncs, the default cache {default}: no early write-back"
    );
    CACHE_PAGES.set(16);
    crash_everywhere(small_objects_session, Commit::Lazy);
    crash_everywhere(small_objects_session, Commit::Flush);
}

#[test]
fn crash_at_every_write_of_a_links_session() {
    crash_everywhere(links_session, Commit::Lazy);
    crash_everywhere(links_session, Commit::Flush);
}

#[test]
fn crash_at_every_write_of_a_reusing_session() {
    // More random outcomes: only some orders of the journal's unsynced
    // writes would expose a first journal write over a stale one (J10).
    crash_everywhere_on(&base(), reuse_session, Commit::Lazy, 24);
}

#[test]
fn crash_at_every_write_of_a_vlen_appending_session() {
    // More random outcomes, as for the reusing session: the bytes written
    // beside arca are unsynced data writes, and which of them survive
    // matters (J7).
    crash_everywhere_on(&vlen_base(), vlen_append_session, Commit::Lazy, 24);
}

#[test]
fn crash_at_every_write_of_a_vlen_rewriting_session() {
    crash_everywhere_on(&vlen_base(), vlen_rewrite_session, Commit::Lazy, 24);
}

#[test]
fn crash_at_every_write_of_flushed_vlen_sessions() {
    let image = vlen_base();
    crash_everywhere_on(&image, vlen_append_session, Commit::Flush, SEEDS);
    crash_everywhere_on(&image, vlen_rewrite_session, Commit::Flush, SEEDS);
}

/// An extension that lies in space the previous commit freed must not be
/// handed out before that commit's invalidation is durable (J7): the
/// caller writes there at once, and a power failure that brought the
/// commit's journal back would roll it back over those bytes.
#[test]
fn whole_chunk_extension_waits_for_the_last_commit() {
    let image = vlen_base();
    let disk = FaultDisk::new(None, 0).losing_unsynced_of(1);
    let (f, mut raw) = open_on(&disk, &image).unwrap();
    // Deletes `old`, among other writes.
    f.transaction(|f| vlen_append_session(f, &mut raw.clone(), 0))
        .unwrap();
    let r = f.transaction(|f| {
        let ext = f.root().dataset("bulk")?.vlen_extend(2 * VCHUNK)?;
        raw.write_at(ext.addr, &bytes(7, ext.len as usize))?;
        disk.power_off();
        Ok(())
    });
    assert!(r.is_err());
    let g = reopen(&disk.durable_images()).unwrap();
    g.check().unwrap();
}

#[test]
fn crash_at_every_write_of_flushed_sessions() {
    crash_everywhere(edit_session, Commit::Flush);
    crash_everywhere(data_session, Commit::Flush);
    crash_everywhere(reuse_session, Commit::Flush);
}

/// A power failure right after `flush` or `close` returned keeps that
/// state, whatever the disk had not written back (J6, J9).
#[test]
fn flush_and_close_are_durable() {
    let (image, vlen_image) = (base(), vlen_base());
    for (image, session) in [
        (&image, edit_session as Session),
        (&image, data_session),
        (&image, reuse_session),
        (&vlen_image, vlen_append_session),
        (&vlen_image, vlen_rewrite_session),
    ] {
        let expected = states(image, session);
        for (t, want) in expected.iter().enumerate() {
            for lose in [None, Some(0), Some(1)] {
                let disk = FaultDisk::new(None, 0);
                let disk = match lose {
                    None => disk.losing_unsynced(),
                    Some(i) => disk.losing_unsynced_of(i),
                };
                let (f, mut raw) = open_on(&disk, image).unwrap();
                for i in 0..t {
                    f.transaction(|f| session(f, &mut raw, i)).unwrap();
                }
                if t == TRANSACTIONS {
                    f.close().unwrap();
                } else {
                    f.flush().unwrap();
                }
                disk.power_off();
                let imgs = disk.durable_images();
                if t == TRANSACTIONS {
                    assert!(imgs[1].is_empty(), "close left a journal behind");
                }
                let g = reopen(&imgs).unwrap();
                g.check().unwrap();
                assert!(
                    snapshot(&g).unwrap() == *want,
                    "power lost after {t} transactions and a flush/close ({lose:?}): state differs"
                );
            }
        }
    }
}

/// How a session went on a disk that returned an error once.
struct Outcome {
    /// Transactions that returned Ok (each counted once, retries included).
    done: usize,
    /// Transactions known durable: flushed, or all of them once closed.
    durable: usize,
    closed: bool,
    errors: Vec<arca::Error>,
}

/// Run the session's transactions on a disk that fails one operation; once
/// an error comes back the cause is removed (room made on a full disk) and
/// what failed, a transaction or a flush, is tried again, then the rest.
/// The handle may refuse instead; the run then stops.
fn run_through_error(disk: &FaultDisk, image: &[u8], session: Session, commit: Commit) -> Outcome {
    let mut out = Outcome {
        done: 0,
        durable: 0,
        closed: false,
        errors: vec![],
    };
    let (f, mut raw) = match open_on(disk, image) {
        Ok(x) => x,
        Err(e) => {
            out.errors.push(e);
            return out;
        }
    };
    // One retry in all: a second error ends the run.
    let retry = |out: &mut Outcome, e: arca::Error| {
        out.errors.push(e);
        disk.make_room();
        out.errors.len() == 1
    };
    let mut t = 0;
    while t < TRANSACTIONS {
        if let Err(e) = f.transaction(|f| session(f, &mut raw, t)) {
            if retry(&mut out, e) {
                continue;
            }
            return out;
        }
        out.done += 1;
        if commit == Commit::Flush {
            loop {
                match f.flush() {
                    Ok(()) => break,
                    Err(e) => {
                        if !retry(&mut out, e) {
                            return out;
                        }
                    }
                }
            }
            out.durable = out.done;
        }
        t += 1;
    }
    match f.close() {
        Ok(()) => {
            out.closed = true;
            out.durable = TRANSACTIONS;
        }
        Err(e) => out.errors.push(e),
    }
    out
}

/// Return `error` at every write, sync and truncate of a session, in turn.
/// The caller gets the disk's error as an `Io` error (never a panic, never
/// damage reported); the file as it is on disk then, and what a power
/// failure leaves of it, open at a state the session reached: the
/// interrupted transaction all or nothing, and nothing lost that flush or
/// close had reported durable (a failed sync is not retried as if it had
/// written what it lost). The handle goes on once the cause is gone, or
/// refuses every further call with `Poisoned` (reopening works).
fn error_everywhere_on(image: &[u8], session: Session, commit: Commit, error: DiskError) {
    let expected = states(image, session);
    let total = {
        let disk = FaultDisk::new(None, 0);
        assert_eq!(run(&disk, image, session, commit), (TRANSACTIONS, true));
        disk.ops()
    };
    let (mut went_on, mut poisoned) = (0, 0);
    for k in 1..=total {
        let disk = FaultDisk::new(None, k * 17 + 3).failing_at(k, error);
        let o = run_through_error(&disk, image, session, commit);
        let case = format!("{error:?} at op {k} of {total}");
        let first = o
            .errors
            .first()
            .unwrap_or_else(|| panic!("{case}: no error reached the caller"));
        assert!(
            matches!(first, arca::Error::Io { .. }),
            "{case}: the disk's error came back as {first}"
        );
        // After it, the handle either finished the session once the cause
        // was gone or refused to go on, saying so.
        let finished = o.done == TRANSACTIONS && o.closed && o.errors.len() == 1;
        assert!(
            finished
                || o.errors[1..]
                    .iter()
                    .all(|e| matches!(e, arca::Error::Poisoned)),
            "{case}: after the error: {:?}",
            o.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        );
        went_on += finished as usize;
        poisoned += !finished as usize;
        // The file as the disk holds it now, then what a power failure that
        // loses every unsynced write leaves.
        let live = disk.current_images();
        disk.power_off();
        for (what, imgs, lo) in [
            ("live", live, o.done),
            ("after power loss", disk.durable_images(), o.durable),
        ] {
            let g = reopen(&imgs).unwrap_or_else(|e| panic!("{case}: {what}: reopen failed: {e}"));
            g.check()
                .unwrap_or_else(|e| panic!("{case}: {what}: check failed: {e}"));
            let snap = snapshot(&g).unwrap();
            let at = expected
                .iter()
                .position(|e| *e == snap)
                .unwrap_or_else(|| panic!("{case}: {what}: state is no prefix of the session"));
            // Lazily committed transactions may be lost to a power failure
            // (the last one only, as in the crash tests); not once flushed.
            let lo = if what == "live" || commit == Commit::Flush || o.closed {
                lo
            } else {
                lo.max(o.done.saturating_sub(1))
            };
            assert!(
                (lo..=(o.done + 1).min(TRANSACTIONS)).contains(&at),
                "{case}: {what}: state after {at} transactions; {} returned, {} durable, closed {}",
                o.done,
                o.durable,
                o.closed
            );
        }
    }
    // Both ends are reached: some errors (before a transaction wrote
    // anything, or in a sync after its commit) leave the handle usable, and
    // an error among a transaction's writes poisons it.
    assert!(
        went_on + poisoned == total as usize && poisoned > 0,
        "{error:?}: {went_on} went on, {poisoned} refused"
    );
}

#[test]
fn disk_errors_at_every_write_of_edit_and_data_sessions() {
    let image = base();
    for error in [DiskError::NoSpace, DiskError::Io] {
        for commit in [Commit::Lazy, Commit::Flush] {
            error_everywhere_on(&image, edit_session, commit, error);
            error_everywhere_on(&image, data_session, commit, error);
        }
    }
}

#[test]
fn disk_errors_at_every_write_of_space_reusing_sessions() {
    let image = base();
    for error in [DiskError::NoSpace, DiskError::Io] {
        error_everywhere_on(&image, reuse_session, Commit::Lazy, error);
        error_everywhere_on(&image, small_objects_session, Commit::Flush, error);
        error_everywhere_on(&image, links_session, Commit::Lazy, error);
    }
}

#[test]
fn disk_errors_at_every_write_of_vlen_sessions() {
    let image = vlen_base();
    for error in [DiskError::NoSpace, DiskError::Io] {
        error_everywhere_on(&image, vlen_append_session, Commit::Lazy, error);
        error_everywhere_on(&image, vlen_rewrite_session, Commit::Flush, error);
    }
}

#[test]
fn failed_transaction_leaves_bytes_untouched() {
    let image = base();
    let disk = FaultDisk::new(None, 0);
    let f = File::options()
        .exact_rollback(true)
        .open_drivers(
            Box::new(disk.driver_with(image.clone())),
            Some(Box::new(disk.driver())),
            false,
            true,
        )
        .unwrap();
    let r = f.transaction(|f| {
        let mut raw = RawFile::new(MemoryDriver::new());
        edit_session(f, &mut raw, 0)?;
        data_session(f, &mut raw, 1)?;
        f.root().delete("no-such-thing")
    });
    assert!(r.is_err());
    f.close().unwrap();
    let after = &disk.durable_images()[0];
    let first = after.iter().zip(&image).position(|(a, b)| a != b);
    assert!(
        after == &image,
        "the file changed although its transaction failed: {} vs {} bytes, first difference at {first:?}",
        after.len(),
        image.len()
    );
}

#[test]
fn panicking_transaction_rolls_back() {
    let f = File::in_memory().unwrap();
    f.root().create_group("kept").unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = f.transaction(|f| -> arca::Result<()> {
            f.root().create_group("lost")?;
            panic!("boom");
        });
    }));
    assert!(r.is_err());
    assert!(f.root().contains("kept").unwrap());
    assert!(!f.root().contains("lost").unwrap());
}

#[test]
fn inner_failure_dooms_the_outer_transaction() {
    let f = File::in_memory().unwrap();
    f.root().create_group("before").unwrap();
    let r = f.transaction(|f| {
        f.root().create_group("outer")?;
        let inner: arca::Result<()> = f.transaction(|f| {
            f.root().create_group("inner")?;
            Err(arca::Error::InvalidArgument("inner fails".into()))
        });
        assert!(inner.is_err());
        Ok(()) // the caller swallowed the inner error
    });
    assert!(r.is_err(), "a doomed transaction must not commit");
    assert!(f.root().contains("before").unwrap());
    assert!(!f.root().contains("outer").unwrap());
    assert!(!f.root().contains("inner").unwrap());
    // Manual begin/end, as bindings use it.
    f.begin_transaction().unwrap();
    f.root().create_group("manual").unwrap();
    f.end_transaction(false).unwrap();
    assert!(!f.root().contains("manual").unwrap());
    assert!(f.end_transaction(true).is_err());
}
