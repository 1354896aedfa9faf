//! Block compression: one state object per arena holding reusable codec
//! contexts (and, for the dictionary mode, the samples and trained
//! dictionary).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use zstd::zstd_safe::{CCtx, CDict, DCtx, DDict};

use crate::config::Codec;
use crate::error::{Error, Result};

/// Bytes of a zstd decompression context: fixed for the library build,
/// measured once per process (creating a context costs about as much as
/// decompressing a block, so it is not done per arena).
fn zstd_dctx_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| DCtx::create().sizeof())
}

/// zstd contexts set aside between uses, shared by the arena's thread and
/// the background thread: at most [`SPARE_EACH`] compression and as many
/// decompression contexts (one per thread, as both may be working at
/// once). A context the memory target has no room to keep
/// ([`CodecState::set_lean`]) is parked here after its call instead of
/// freed, and the next call on either thread takes it back instead of
/// setting up a new one (which costs about what a block's decompression
/// does: zstd asks the processor for its features each time, and on a
/// virtual machine that traps). The background thread parks its own
/// here after every job. The arena trims it when it settles or flushes
/// to the contexts its target has room for (`BlockHeap::spare_at_rest`),
/// so an arena at rest holds only what its target allows. Never waited
/// for: a side that finds it locked creates or frees a context as if it
/// were empty or full (a child of `fork` may find it locked for good).
#[derive(Default)]
pub(crate) struct Spare {
    held: Mutex<Parked>,
    /// Native bytes of the parked contexts.
    bytes: AtomicU64,
}

/// The contexts a [`Spare`] holds.
#[derive(Default)]
struct Parked {
    c: Vec<CCtx<'static>>,
    d: Vec<DCtx<'static>>,
}

/// Contexts of each kind a [`Spare`] holds at most.
pub(crate) const SPARE_EACH: usize = 2;

impl Spare {
    fn recount(&self, held: &Parked) {
        let n = held.c.iter().map(|c| c.sizeof()).sum::<usize>()
            + held.d.iter().map(|d| d.sizeof()).sum::<usize>();
        self.bytes.store(n as u64, Ordering::Relaxed);
    }

    fn take_c(&self) -> Option<CCtx<'static>> {
        let mut g = self.held.try_lock().ok()?;
        let c = g.c.pop();
        self.recount(&g);
        c
    }

    fn take_d(&self) -> Option<DCtx<'static>> {
        let mut g = self.held.try_lock().ok()?;
        let d = g.d.pop();
        self.recount(&g);
        d
    }

    fn park_c(&self, c: CCtx<'static>) {
        if let Ok(mut g) = self.held.try_lock() {
            if g.c.len() < SPARE_EACH {
                g.c.push(c);
                self.recount(&g);
            }
        }
    }

    fn park_d(&self, d: DCtx<'static>) {
        if let Ok(mut g) = self.held.try_lock() {
            if g.d.len() < SPARE_EACH {
                g.d.push(d);
                self.recount(&g);
            }
        }
    }

    /// Frees the parked contexts beyond `keep` of each kind.
    pub fn trim(&self, keep: usize) {
        if let Ok(mut g) = self.held.try_lock() {
            g.c.truncate(keep);
            g.d.truncate(keep);
            if keep == 0 {
                *g = Parked::default();
            }
            self.recount(&g);
        }
    }

    /// Native bytes of the parked contexts.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// How a stored block was encoded; kept per block so blocks compressed
/// before a dictionary existed (or stored raw) stay readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// The configured codec without dictionary.
    Plain,
    /// zstd with the trained dictionary.
    Dict,
    /// Stored as-is: the codec failed or did not shrink the block.
    Raw,
    /// lz4, whatever the configured codec: a block the arena stored fast
    /// while it had memory to spare (see `Config::target_ratio`).
    Fast,
}

struct DictState {
    level: i32,
    train_blocks: u32,
    dict_size: usize,
    samples: Vec<u8>,
    sample_sizes: Vec<usize>,
    trained: Option<(CDict<'static>, DDict<'static>, usize)>,
    given_up: bool,
}

pub(crate) struct CodecState {
    codec: Codec,
    /// Whether this state compresses and decompresses: a state may have
    /// one half only (the background thread's compressor, its loader).
    can_c: bool,
    can_d: bool,
    /// Codec contexts, created on first use (an arena that never
    /// compresses or never decompresses holds none: a zstd context is
    /// about 0.1 MiB, which a small arena cannot afford idle).
    zstd_c: Option<CCtx<'static>>,
    zlib_c: Option<Compress>,
    zstd_d: Option<DCtx<'static>>,
    zlib_d: Option<Decompress>,
    dict: Option<DictState>,
    /// Compression / decompression contexts live only for the call that
    /// uses them (see [`CodecState::set_lean`]).
    lean_c: bool,
    lean_d: bool,
    /// The most native bytes the compression and the decompression
    /// contexts have taken: what keeping each between calls costs.
    peak_c: usize,
    peak_d: usize,
    /// Where lean zstd contexts are parked between calls (none: freed).
    spare: Option<Arc<Spare>>,
}

// One piece of each sampled block goes to the trainer: many medium samples
// from many blocks describe the data better than a few whole blocks.
fn sample_piece(block_len: usize) -> (usize, usize) {
    let len = (block_len / 4).clamp(256, 16 * 1024).min(block_len);
    ((block_len / 4).min(block_len - len), len)
}

/// The context in `slot`, created by `make` on first use; an error in a
/// state that does not have this half.
fn lazy<T>(
    slot: &mut Option<T>,
    allowed: bool,
    make: impl FnOnce() -> T,
) -> std::result::Result<&mut T, String> {
    if slot.is_none() && allowed {
        *slot = Some(make());
    }
    slot.as_mut()
        .ok_or_else(|| "this codec state has no such context".into())
}

impl CodecState {
    pub fn new(codec: &Codec) -> CodecState {
        CodecState::with_halves(codec, true, true)
    }

    /// A state with the compressing half, the decompressing half or both
    /// (only the contexts asked for are created).
    fn with_halves(codec: &Codec, compress: bool, decompress: bool) -> CodecState {
        let mut st = CodecState {
            codec: codec.clone(),
            can_c: compress,
            can_d: decompress,
            zstd_c: None,
            zlib_c: None,
            zstd_d: None,
            zlib_d: None,
            dict: None,
            lean_c: false,
            lean_d: false,
            peak_c: 0,
            peak_d: 0,
            spare: None,
        };
        // A zstd decompression context has one size, known before the
        // first load: the memory target can reserve room for it while
        // the arena is being filled, before any block is read back.
        if decompress
            && matches!(
                codec,
                Codec::Zstd { .. } | Codec::ZstdTuned { .. } | Codec::ZstdDict { .. }
            )
        {
            st.peak_d = zstd_dctx_bytes();
        }
        if let Codec::ZstdDict {
            level,
            train_blocks,
            dict_size,
        } = codec
        {
            st.can_c = true;
            st.can_d = true;
            st.dict = Some(DictState {
                level: *level,
                train_blocks: *train_blocks,
                dict_size: *dict_size,
                samples: Vec::new(),
                sample_sizes: Vec::new(),
                trained: None,
                given_up: false,
            });
        }
        st
    }

    /// With `lean`, every context is freed at the end of the call that
    /// created it, so between calls the state holds none: a call then
    /// pays for setting its context up (about a fifth of a block's work
    /// with zstd) and the arena holds nothing for the codec at rest. A
    /// dictionary codec keeps its contexts (they carry the dictionary).
    pub fn set_lean(&mut self, lean: bool) {
        self.set_lean_parts(lean, lean);
    }

    /// [`CodecState::set_lean`] for the compressing and the decompressing
    /// contexts separately.
    pub fn set_lean_parts(&mut self, compress: bool, decompress: bool) {
        let split = self.dict.is_none();
        self.lean_c = compress && split;
        self.lean_d = decompress && split;
        self.release();
    }

    /// The most native context bytes this state's contexts have taken
    /// (compression and decompression together; a zstd decompression
    /// context counts from the start, its size being fixed).
    pub fn ctx_peak(&self) -> usize {
        self.peak_c + self.peak_d
    }

    /// The same for the compression and the decompression context apart.
    pub fn ctx_peaks(&self) -> (usize, usize) {
        (self.peak_c, self.peak_d)
    }

    /// After a call: notes the contexts' sizes and frees the lean ones.
    fn after_use(&mut self) {
        if let Some(c) = &self.zstd_c {
            self.peak_c = self.peak_c.max(c.sizeof());
        }
        if let Some(d) = &self.zstd_d {
            self.peak_d = self.peak_d.max(d.sizeof());
        }
        self.release();
    }

    /// Parks lean zstd contexts between calls in `spare` (see
    /// [`Spare`]) instead of freeing them.
    pub fn share_spare(&mut self, spare: Arc<Spare>) {
        self.spare = Some(spare);
    }

    /// Frees the contexts that are lean (zstd's are parked, if there is
    /// room for them in the spare).
    fn release(&mut self) {
        if self.lean_c {
            if let (Some(c), Some(s)) = (self.zstd_c.take(), &self.spare) {
                s.park_c(c);
            }
            self.zlib_c = None;
        }
        if self.lean_d {
            if let (Some(d), Some(s)) = (self.zstd_d.take(), &self.spare) {
                s.park_d(d);
            }
            self.zlib_d = None;
        }
    }

    /// A compression context: the parked one if there is one, else new.
    fn new_cctx(spare: &Option<Arc<Spare>>) -> CCtx<'static> {
        spare
            .as_ref()
            .and_then(|s| s.take_c())
            .unwrap_or_else(CCtx::create)
    }

    /// A decompression context: the parked one if there is one, else new.
    fn new_dctx(spare: &Option<Arc<Spare>>) -> DCtx<'static> {
        spare
            .as_ref()
            .and_then(|s| s.take_d())
            .unwrap_or_else(DCtx::create)
    }

    /// Whether a separate compress-only state ([`CodecState::compressor`])
    /// can compress for this one: every codec but the dictionary one,
    /// whose training and dictionary both would have to share.
    pub fn can_split(&self) -> bool {
        self.dict.is_none()
    }

    /// A state that only decompresses, with contexts of its own (for blocks
    /// the background thread loads ahead).
    pub fn decompressor(codec: &Codec) -> CodecState {
        CodecState::with_halves(codec, false, true)
    }

    /// A state that only compresses, with contexts of its own (for the
    /// background compressor).
    pub fn compressor(codec: &Codec) -> CodecState {
        CodecState::with_halves(codec, true, false)
    }

    /// Heap bytes held by the codec state on the Rust side (samples and the
    /// dictionary copy size).
    pub fn heap_bytes(&self) -> usize {
        self.dict
            .as_ref()
            .map_or(0, |d| d.samples.capacity() + d.sample_sizes.capacity() * 8)
    }

    /// Bytes held by native zstd contexts and dictionaries.
    pub fn native_bytes(&self) -> usize {
        let mut n = 0;
        if let Some(c) = &self.zstd_c {
            n += c.sizeof();
        }
        if let Some(d) = &self.zstd_d {
            n += d.sizeof();
        }
        if let Some(DictState {
            trained: Some((cd, dd, _)),
            ..
        }) = &self.dict
        {
            n += cd.sizeof() + dd.sizeof();
        }
        n
    }

    /// Size of the trained dictionary, if any.
    pub fn dict_len(&self) -> Option<usize> {
        self.dict.as_ref()?.trained.as_ref().map(|t| t.2)
    }

    /// Compresses `src` into `dst` (cleared first). Returns the encoding
    /// and whether a dictionary was trained just now (the caller may then
    /// recompress blocks stored before it existed).
    pub fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> (Encoding, bool) {
        let enc = self.encode(src, dst);
        let trained = self.maybe_sample(src);
        (enc, trained)
    }

    /// Compresses `src` into `dst` (cleared first) without letting a
    /// dictionary codec sample it: the same bytes [`CodecState::compress`]
    /// produces, and no other effect.
    pub fn encode(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Encoding {
        dst.clear();
        let enc = match self.try_compress(src, dst) {
            Ok(e) if dst.len() < src.len() => e,
            _ => Encoding::Raw,
        };
        if enc == Encoding::Raw {
            dst.clear();
            dst.extend_from_slice(src);
        }
        self.after_use();
        enc
    }

    /// lz4 into `dst` (cleared first), whatever the configured codec; the
    /// block as it is if lz4 does not shrink it.
    pub fn encode_fast(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Encoding {
        dst.clear();
        dst.resize(lz4_flex::block::get_maximum_output_size(src.len()), 0);
        match lz4_flex::block::compress_into(src, dst) {
            Ok(n) if n < src.len() => {
                dst.truncate(n);
                Encoding::Fast
            }
            _ => {
                dst.clear();
                dst.extend_from_slice(src);
                Encoding::Raw
            }
        }
    }

    /// [`CodecState::encode`], trying zstd first with room for a third of
    /// the input instead of its worst case: a buffer that lives through the
    /// compression is then a third as large; a block that does not fit is
    /// compressed again the usual way.
    pub fn encode_small(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Encoding {
        if matches!(self.codec, Codec::Zstd { .. } | Codec::ZstdTuned { .. }) {
            dst.clear();
            if self.zstd_into(src, dst, src.len() / 3).is_ok() && dst.len() < src.len() {
                self.after_use();
                return Encoding::Plain;
            }
        }
        self.encode(src, dst)
    }

    /// Plain zstd (with the configured minimum match, if any) into `dst`,
    /// with room for `cap` bytes.
    fn zstd_into(
        &mut self,
        src: &[u8],
        dst: &mut Vec<u8>,
        cap: usize,
    ) -> std::result::Result<(), String> {
        use zstd::zstd_safe::CParameter;
        let spare = &self.spare;
        let c = lazy(&mut self.zstd_c, self.can_c, || Self::new_cctx(spare))?;
        dst.reserve_exact(cap);
        let e = |e| format!("zstd error {e}");
        match &self.codec {
            Codec::ZstdTuned {
                level,
                min_match,
                block_kib,
            } => {
                c.set_parameter(CParameter::CompressionLevel(*level))
                    .map_err(e)?;
                if *min_match > 0 {
                    c.set_parameter(CParameter::MinMatch(*min_match))
                        .map_err(e)?;
                }
                if *block_kib > 0 {
                    c.set_parameter(CParameter::MaxBlockSize(*block_kib * 1024))
                        .map_err(e)?;
                }
                c.compress2(dst, src).map_err(e)?;
            }
            Codec::Zstd { level } => {
                c.compress(dst, src, *level).map_err(e)?;
            }
            _ => return Err("not plain zstd".into()),
        }
        Ok(())
    }

    fn maybe_sample(&mut self, src: &[u8]) -> bool {
        let Some(d) = self.dict.as_mut() else {
            return false;
        };
        if d.trained.is_some() || d.given_up {
            return false;
        }
        let (at, len) = sample_piece(src.len());
        d.samples.extend_from_slice(&src[at..at + len]);
        d.sample_sizes.push(len);
        if d.sample_sizes.len() >= d.train_blocks as usize {
            match zstd::dict::from_continuous(&d.samples, &d.sample_sizes, d.dict_size) {
                Ok(dict) => {
                    let cd = CDict::create(&dict, d.level);
                    let dd = DDict::create(&dict);
                    d.trained = Some((cd, dd, dict.len()));
                }
                Err(_) => d.given_up = true,
            }
            d.samples = Vec::new();
            d.sample_sizes = Vec::new();
            return d.trained.is_some();
        }
        false
    }

    fn try_compress(
        &mut self,
        src: &[u8],
        dst: &mut Vec<u8>,
    ) -> std::result::Result<Encoding, String> {
        match &self.codec {
            Codec::Lz4 => {
                dst.resize(lz4_flex::block::get_maximum_output_size(src.len()), 0);
                let n = lz4_flex::block::compress_into(src, dst).map_err(|e| e.to_string())?;
                dst.truncate(n);
                Ok(Encoding::Plain)
            }
            Codec::Zstd { level } => {
                let spare = &self.spare;
                let c = lazy(&mut self.zstd_c, self.can_c, || Self::new_cctx(spare))?;
                dst.reserve(zstd::zstd_safe::compress_bound(src.len()));
                c.compress(dst, src, *level)
                    .map_err(|e| format!("zstd error {e}"))?;
                Ok(Encoding::Plain)
            }
            Codec::ZstdTuned { .. } => {
                self.zstd_into(src, dst, zstd::zstd_safe::compress_bound(src.len()))?;
                Ok(Encoding::Plain)
            }
            Codec::ZstdDict { level, .. } => {
                let c = lazy(&mut self.zstd_c, self.can_c, CCtx::create)?;
                dst.reserve(zstd::zstd_safe::compress_bound(src.len()));
                let d = self.dict.as_ref().expect("dict state");
                if let Some((cd, _, _)) = &d.trained {
                    c.compress_using_cdict(dst, src, cd)
                        .map_err(|e| format!("zstd error {e}"))?;
                    Ok(Encoding::Dict)
                } else {
                    c.compress(dst, src, *level)
                        .map_err(|e| format!("zstd error {e}"))?;
                    Ok(Encoding::Plain)
                }
            }
            Codec::Zlib { level } => {
                let level = *level;
                let c = lazy(&mut self.zlib_c, self.can_c, || {
                    Compress::new(Compression::new(level), true)
                })?;
                c.reset();
                dst.reserve(src.len() + src.len() / 100 + 64);
                match c.compress_vec(src, dst, FlushCompress::Finish) {
                    Ok(Status::StreamEnd) => Ok(Encoding::Plain),
                    _ => Err("zlib did not finish".into()),
                }
            }
            Codec::Copy => Err("copy".into()),
            Codec::Custom(cb) => {
                cb.compress(src, dst)?;
                Ok(Encoding::Plain)
            }
        }
    }

    /// Decompresses `src` into `dst`, which must have exactly the
    /// uncompressed length.
    pub fn decompress(
        &mut self,
        enc: Encoding,
        src: &[u8],
        dst: &mut Vec<u8>,
        len: usize,
    ) -> Result<()> {
        let r = self.decompress_with_contexts(enc, src, dst, len);
        self.after_use();
        r
    }

    fn decompress_with_contexts(
        &mut self,
        enc: Encoding,
        src: &[u8],
        dst: &mut Vec<u8>,
        len: usize,
    ) -> Result<()> {
        let err = |m: String| Error::Codec(m);
        dst.clear();
        match enc {
            Encoding::Raw => {
                dst.extend_from_slice(src);
            }
            Encoding::Fast => {
                dst.resize(len, 0);
                let n =
                    lz4_flex::block::decompress_into(src, dst).map_err(|e| err(e.to_string()))?;
                dst.truncate(n);
            }
            Encoding::Dict => {
                let d = lazy(&mut self.zstd_d, self.can_d, DCtx::create).map_err(err)?;
                let dd = self
                    .dict
                    .as_ref()
                    .and_then(|x| x.trained.as_ref())
                    .ok_or_else(|| err("no dictionary".into()))?;
                dst.reserve(len);
                d.decompress_using_ddict(dst, src, &dd.1)
                    .map_err(|e| err(format!("zstd error {e}")))?;
            }
            Encoding::Plain => match &self.codec {
                Codec::Lz4 => {
                    dst.resize(len, 0);
                    let n = lz4_flex::block::decompress_into(src, dst)
                        .map_err(|e| err(e.to_string()))?;
                    dst.truncate(n);
                }
                Codec::Zstd { .. } | Codec::ZstdDict { .. } | Codec::ZstdTuned { .. } => {
                    let spare = &self.spare;
                    let d = lazy(&mut self.zstd_d, self.can_d, || Self::new_dctx(spare))
                        .map_err(err)?;
                    dst.reserve(len);
                    d.decompress(dst, src)
                        .map_err(|e| err(format!("zstd error {e}")))?;
                }
                Codec::Zlib { .. } => {
                    let d = lazy(&mut self.zlib_d, self.can_d, || Decompress::new(true))
                        .map_err(err)?;
                    d.reset(true);
                    dst.reserve(len);
                    match d.decompress_vec(src, dst, FlushDecompress::Finish) {
                        Ok(Status::StreamEnd) => {}
                        _ => return Err(err("zlib stream damaged".into())),
                    }
                }
                Codec::Copy => dst.extend_from_slice(src),
                Codec::Custom(cb) => {
                    dst.resize(len, 0);
                    cb.decompress(src, dst).map_err(err)?;
                }
            },
        }
        if dst.len() != len {
            return Err(err(format!(
                "decompressed {} bytes, expected {len}",
                dst.len()
            )));
        }
        Ok(())
    }
}
