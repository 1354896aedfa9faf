//! [`CloudDriver`]: an object on object storage read as an arca file.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use futures::future::try_join_all;
use futures::stream::{self, StreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};

use super::blocks::Blocks;
use super::options::CloudOptions;
use super::runtime::block_on;
use crate::error::{Error, RemoteKind, Result};
use crate::format::page::PAGE_SIZE;
use crate::format::superblock::Superblock;
use crate::io::driver::{Driver, ReadAt};
use crate::io::stats::Fetches;

/// Reads spanning more blocks than this keep only their two edge blocks in
/// the cache: the middle is bulk data the chunk cache keeps if anything does.
const CACHED_SPAN: u64 = 4;

/// A read-only driver over one object: the first request (made by
/// [`CloudDriver::open`]) reads the head of the object and learns its size,
/// later reads fetch whole blocks into a bounded cache, and the blocks one
/// read lacks are fetched together, as parallel requests of at most
/// [`CloudOptions::part_bytes`] each. A batch of reads (the chunks of one
/// dataset read, [`ReadAt::read_batch`]) is fetched as exact ranges,
/// neighbours within [`CloudOptions::coalesce_bytes`] merged, with at most
/// [`CloudOptions::max_in_flight`] requests in flight. A file whose
/// superblock records a metadata region laid out first (`meta_end`, written
/// by `repack --cloud`) that reaches past the first read has the rest of
/// that region fetched as one request by the first read that needs a byte
/// of it (up to [`CloudOptions::meta_bytes`]), so that any chunk is then one
/// request away. Every request after the first asks
/// for the version first seen (`If-Match` its ETag), so a replaced object
/// is an error, not a mixture of two files.
///
/// ```
/// use arca::io::{CloudDriver, CloudOptions, Driver};
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("a.arca");
/// arca::File::create(&p).unwrap().close().unwrap();
/// let d = CloudDriver::open(&format!("file://{}", p.display()), &CloudOptions::new()).unwrap();
/// assert_eq!(d.len().unwrap(), std::fs::metadata(&p).unwrap().len());
/// let mut stats = arca::IoStats::default();
/// d.fetches().unwrap().add_to(&mut stats);
/// assert_eq!((stats.requests, stats.round_trips), (1, 1));
/// ```
pub struct CloudDriver {
    inner: Arc<Object>,
}

/// The object, its cache and its counters, shared with unlocked readers.
struct Object {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    etag: Option<String>,
    block: u64,
    part: u64,
    in_flight: usize,
    gap: u64,
    cache: Mutex<Blocks>,
    fetches: Arc<Fetches>,
    /// The part of the file's metadata region the first read did not hold,
    /// in whole blocks, until a read needing it fetches it (then `None`).
    meta: Mutex<Option<Range<u64>>>,
}

impl std::fmt::Debug for CloudDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudDriver")
            .field("url", &self.inner.url)
            .field("size", &self.inner.size)
            .finish()
    }
}

/// The typed error of a failed request for `range` of `url`.
pub(super) fn remote(url: &str, range: Option<Range<u64>>, e: object_store::Error) -> Error {
    use object_store::Error as E;
    let kind = match e {
        E::NotFound { .. } => RemoteKind::NotFound,
        E::Precondition { .. } => RemoteKind::Changed,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => RemoteKind::Denied,
        _ => RemoteKind::Failed,
    };
    Error::Remote {
        url: url.to_string(),
        range,
        kind,
        message: e.to_string(),
    }
}

impl CloudDriver {
    /// Open the object at `url` (`s3://bucket/key`, `gs://…`, `az://…`,
    /// `http(s)://…`, `file:///path`, `memory:///key`), reading its head.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a URL or option arca cannot use,
    /// [`Error::Remote`] when the first request fails (a missing object is
    /// [`RemoteKind::NotFound`]).
    pub fn open(url: &str, opts: &CloudOptions) -> Result<CloudDriver> {
        let (store, path, _) = super::store::open(url, opts)?;
        Self::over_store(store, path, url, opts)
    }

    /// Open `path` in a store made by the caller (own credentials provider,
    /// a wrapped store); `url` names it in errors.
    ///
    /// # Errors
    /// As for [`CloudDriver::open`].
    pub fn over_store(
        store: Arc<dyn ObjectStore>,
        path: Path,
        url: &str,
        opts: &CloudOptions,
    ) -> Result<CloudDriver> {
        let head = opts.head_bytes() as u64;
        let fetches = Arc::new(Fetches::new());
        let want = 0..head;
        let (size, etag, bytes) = block_on(async {
            let r = store
                .get_opts(
                    &path,
                    GetOptions {
                        range: Some(GetRange::Bounded(want.clone())),
                        ..Default::default()
                    },
                )
                .await?;
            let (size, etag, range) = (r.meta.size, r.meta.e_tag.clone(), r.range.clone());
            let bytes = r.bytes().await?;
            Ok::<_, object_store::Error>((size, etag, range, bytes))
        })?
        .map_err(|e| remote(url, Some(want.clone()), e))
        .and_then(|(size, etag, range, bytes)| {
            if range.start != 0 || bytes.len() as u64 != range.end {
                return Err(short(url, &want, bytes.len()));
            }
            Ok((size, etag, bytes))
        })?;
        fetches.round_trip(1, bytes.len() as u64);
        let block = opts.block_bytes() as u64;
        let meta = meta_rest(&bytes, size, block, opts);
        let inner = Object {
            url: url.to_string(),
            store,
            path,
            size,
            etag,
            block,
            part: (opts.part_bytes() as u64).div_ceil(block).max(1) * block,
            in_flight: opts.max_in_flight(),
            gap: opts.coalesce_bytes() as u64,
            cache: Mutex::new(Blocks::new(opts.cache_bytes())),
            fetches,
            meta: Mutex::new(meta),
        };
        // The head is metadata: every block of it is kept.
        inner.keep(0, &bytes, 0, 0)?;
        Ok(CloudDriver {
            inner: Arc::new(inner),
        })
    }

    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// Bytes of fetched blocks the cache holds now.
    pub fn cached_bytes(&self) -> usize {
        self.inner.cache.lock().map(|c| c.held()).unwrap_or(0)
    }
}

/// The blocks of the file's metadata region past `head` (its first bytes),
/// if its superblock verifies and records one that reaches past them and
/// the options let it be fetched at once. A damaged superblock is left to
/// the file's open to report.
fn meta_rest(head: &[u8], size: u64, block: u64, opts: &CloudOptions) -> Option<Range<u64>> {
    let meta_end = Superblock::decode(head, size).ok()?.meta_end;
    let start = head.len() as u64 / block * block;
    let end = meta_end.checked_next_multiple_of(block)?.min(size);
    // Kept beside the head in the cache, or not fetched at once at all.
    let room = opts.cache_bytes().saturating_sub(head.len());
    let limit = opts.meta_bytes().min(room) as u64;
    (meta_end > head.len() as u64 && end - start <= limit).then_some(start..end)
}

/// The error of a response shorter than asked for.
fn short(url: &str, want: &Range<u64>, got: usize) -> Error {
    Error::Remote {
        url: url.to_string(),
        range: Some(want.clone()),
        kind: RemoteKind::Failed,
        message: format!("the response held {got} bytes"),
    }
}

impl Object {
    /// Keep the blocks of `bytes` (fetched from `at`) that lie whole in it
    /// or end at the object's end: all of them for a read of blocks
    /// `first..=last` spanning few, else only those two.
    fn keep(&self, at: u64, bytes: &[u8], first: u64, last: u64) -> Result<()> {
        let mut cache = self.cache.lock().map_err(|_| Error::Poisoned)?;
        let end = at + bytes.len() as u64;
        let mut i = at.div_ceil(self.block);
        let few = last.saturating_sub(first) < CACHED_SPAN;
        while i * self.block < end {
            let (s, e) = (i * self.block, ((i + 1) * self.block).min(self.size));
            if e > end {
                break;
            }
            if few || i == first || i == last {
                cache.put(i, bytes[(s - at) as usize..(e - at) as usize].to_vec());
            }
            i += 1;
        }
        Ok(())
    }

    /// Fetch `range` (one request).
    async fn fetch(&self, range: Range<u64>) -> Result<(u64, bytes::Bytes)> {
        let r = self
            .store
            .get_opts(
                &self.path,
                GetOptions {
                    range: Some(GetRange::Bounded(range.clone())),
                    if_match: self.etag.clone(),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| remote(&self.url, Some(range.clone()), e))?;
        let bytes = r
            .bytes()
            .await
            .map_err(|e| remote(&self.url, Some(range.clone()), e))?;
        if bytes.len() as u64 != range.end - range.start {
            return Err(short(&self.url, &range, bytes.len()));
        }
        Ok((range.start, bytes))
    }
}

impl Object {
    /// If one of `reads` (byte ranges) needs the metadata region not yet
    /// fetched, fetch all of it as one request and keep its blocks: every
    /// structure laid out first is then one cache lookup away.
    fn fetch_meta(&self, mut reads: impl Iterator<Item = Range<u64>>) -> Result<()> {
        let range = {
            let mut meta = self.meta.lock().map_err(|_| Error::Poisoned)?;
            let needed = meta
                .as_ref()
                .is_some_and(|m| reads.any(|r| r.start < m.end && m.start < r.end));
            if !needed {
                return Ok(());
            }
            match meta.take() {
                Some(m) => m,
                None => return Ok(()),
            }
        };
        let (at, bytes) = block_on(self.fetch(range))??;
        self.fetches.round_trip(1, bytes.len() as u64);
        // Kept whole, as the head is: it is all metadata.
        self.keep(at, &bytes, 0, 0)
    }

    /// The end of a read of `len` bytes at `offset`, if it lies inside.
    fn end_of(&self, offset: u64, len: usize) -> Result<u64> {
        offset
            .checked_add(len as u64)
            .filter(|e| *e <= self.size)
            .ok_or_else(|| {
                Error::io(
                    format!(
                        "reading {len} bytes at {offset} of {} ({} bytes)",
                        self.url, self.size
                    ),
                    std::io::ErrorKind::UnexpectedEof.into(),
                )
            })
    }

    /// Fill what the cache holds of a read of `buf` at `offset`; the
    /// ranges of it left to fetch, in order.
    fn copy_cached(&self, offset: u64, buf: &mut [u8]) -> Result<Vec<Range<u64>>> {
        let end = self.end_of(offset, buf.len())?;
        let mut missing: Vec<Range<u64>> = Vec::new();
        if buf.is_empty() {
            return Ok(missing);
        }
        let mut cache = self.cache.lock().map_err(|_| Error::Poisoned)?;
        for i in offset / self.block..=(end - 1) / self.block {
            let (s, e) = (
                (i * self.block).max(offset),
                ((i + 1) * self.block).min(end),
            );
            match cache.get(i) {
                Some(b) => copy_into(buf, offset, i * self.block, b),
                None => match missing.last_mut() {
                    Some(r) if r.end == s => r.end = e,
                    _ => missing.push(s..e),
                },
            }
        }
        Ok(missing)
    }

    /// The requests that fetch the byte ranges `wanted` (sorted by start):
    /// neighbours at most `gap` apart merged while the merged request stays
    /// within a part and the gap holds no block the cache has (those bytes
    /// came once already), a range longer than a part cut into parts.
    fn plan(&self, wanted: impl Iterator<Item = Range<u64>>) -> Result<Vec<Range<u64>>> {
        let mut merged: Vec<Range<u64>> = Vec::new();
        let mut cache = self.cache.lock().map_err(|_| Error::Poisoned)?;
        let mut cached_between = |a: u64, b: u64| {
            (a.div_ceil(self.block)..b / self.block).any(|i| cache.get(i).is_some())
        };
        for r in wanted {
            match merged.last_mut() {
                Some(m)
                    if r.start <= m.end.saturating_add(self.gap)
                        && r.end.max(m.end) - m.start <= self.part
                        && (r.start <= m.end || !cached_between(m.end, r.start)) =>
                {
                    m.end = m.end.max(r.end)
                }
                _ => merged.push(r),
            }
        }
        let mut parts = Vec::with_capacity(merged.len());
        for r in merged {
            let mut s = r.start;
            while s < r.end {
                let n = (r.end - s).min(self.part);
                parts.push(s..s + n);
                s += n;
            }
        }
        Ok(parts)
    }
}

impl ReadAt for Object {
    fn batches(&self) -> bool {
        true
    }

    fn read_batch(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        // What the cache holds is copied and sent for no more; the rest,
        // in file order, becomes requests sent together, at most
        // `in_flight` at a time.
        self.fetch_meta(
            reads
                .iter()
                .map(|(at, buf)| *at..at.saturating_add(buf.len() as u64)),
        )?;
        let mut order = Vec::with_capacity(reads.len());
        let mut wanted = Vec::with_capacity(reads.len());
        for (i, (at, buf)) in reads.iter_mut().enumerate() {
            let missing = self.copy_cached(*at, buf)?;
            if !missing.is_empty() {
                order.push(i);
                wanted.extend(missing);
            }
        }
        if order.is_empty() {
            return Ok(());
        }
        order.sort_unstable_by_key(|&i| reads[i].0);
        wanted.sort_unstable_by_key(|r| r.start);
        let parts = self.plan(wanted.into_iter())?;
        let n = parts.len();
        let longest = order
            .iter()
            .map(|&i| reads[i].1.len() as u64)
            .max()
            .unwrap_or(0);
        let fetched = block_on(async {
            let mut got = stream::iter(parts.into_iter().map(|r| self.fetch(r)))
                .buffer_unordered(self.in_flight);
            let mut bytes = 0u64;
            while let Some(part) = got.next().await {
                let (at, b) = part?;
                bytes += b.len() as u64;
                let end = at + b.len() as u64;
                // Its edge blocks may hold metadata (an index page beside
                // the chunks): kept, as a read's are.
                let last = if end == self.size {
                    (end - 1) / self.block
                } else {
                    (end / self.block).saturating_sub(1)
                };
                self.keep(at, &b, at.div_ceil(self.block), last)?;
                // The reads this part overlaps: those starting before its
                // end, back to the first that ends after its start.
                let upto = order.partition_point(|&i| reads[i].0 < end);
                for &i in order[..upto].iter().rev() {
                    let (o, buf) = &mut reads[i];
                    if *o + (buf.len() as u64) > at {
                        copy_into(buf, *o, at, &b);
                    } else if *o + longest <= at {
                        break;
                    }
                }
            }
            Ok::<_, Error>(bytes)
        })??;
        self.fetches.round_trips(
            (n as u64).div_ceil(self.in_flight as u64),
            n as u64,
            fetched,
        );
        Ok(())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = self.end_of(offset, buf.len())?;
        if buf.is_empty() {
            return Ok(());
        }
        let (first, last) = (offset / self.block, (end - 1) / self.block);
        // A metadata page is read as its 8-byte head, then whole: a miss
        // also fetches what the largest page starting here would need, so
        // a page across a block boundary costs one round trip, not two.
        let ahead = (offset + PAGE_SIZE as u64).min(self.size).max(end);
        self.fetch_meta(std::iter::once(offset..ahead))?;
        let mut missing: Vec<Range<u64>> = Vec::new();
        {
            let mut cache = self.cache.lock().map_err(|_| Error::Poisoned)?;
            for i in first..=(ahead - 1) / self.block {
                match cache.get(i) {
                    Some(b) => copy_into(buf, offset, i * self.block, b),
                    None => match missing.last_mut() {
                        Some(r) if r.end == i => r.end = i + 1,
                        _ => missing.push(i..i + 1),
                    },
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        // Whole blocks, each run cut into parts sent together.
        let mut parts = Vec::new();
        for r in missing {
            let (mut s, e) = (r.start * self.block, (r.end * self.block).min(self.size));
            while s < e {
                let n = (e - s).min(self.part);
                parts.push(s..s + n);
                s += n;
            }
        }
        let n = parts.len() as u64;
        let got = block_on(try_join_all(parts.into_iter().map(|r| self.fetch(r))))??;
        self.fetches
            .round_trip(n, got.iter().map(|(_, b)| b.len() as u64).sum());
        for (at, bytes) in &got {
            copy_into(buf, offset, *at, bytes);
            self.keep(*at, bytes, first, last)?;
        }
        Ok(())
    }
}

/// Copy the part of `src` (which starts at `src_at` in the object) that
/// overlaps `dst` (which starts at `dst_at`).
fn copy_into(dst: &mut [u8], dst_at: u64, src_at: u64, src: &[u8]) {
    let s = dst_at.max(src_at);
    let e = (dst_at + dst.len() as u64).min(src_at + src.len() as u64);
    if s < e {
        dst[(s - dst_at) as usize..(e - dst_at) as usize]
            .copy_from_slice(&src[(s - src_at) as usize..(e - src_at) as usize]);
    }
}

impl Driver for CloudDriver {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(offset, buf)
    }

    fn write_at(&mut self, _offset: u64, _data: &[u8]) -> Result<()> {
        Err(Error::ReadOnly)
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn truncate(&mut self, _len: u64) -> Result<()> {
        Err(Error::ReadOnly)
    }

    fn len(&self) -> Result<u64> {
        Ok(self.inner.size)
    }

    fn shared_reader(&self) -> Option<Arc<dyn ReadAt>> {
        Some(self.inner.clone())
    }

    fn fetches(&self) -> Option<Arc<Fetches>> {
        Some(self.inner.fetches.clone())
    }
}
