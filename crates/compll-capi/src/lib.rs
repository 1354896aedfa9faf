//! C API for `compll` (header: `crates/compll/include/compll.h`).
//!
//! This is the only place with `unsafe` code: it turns C pointers into
//! slices and hands out raw pointers into pinned node copies. The arena
//! itself is the safe `compll::Arena`.
//!
//! Pointers returned by `compll_read` / `compll_write` stay valid until the
//! eighth following call on the same context, or until the next call that
//! touches the same node (the original library's contract is "until the next call"; the
//! extra room makes `write(a)->x = read(b)->y` safe).

use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_uint, c_ushort, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use compll::{Arena, BlockCodec, Codec, Config, Handle, ReadGuard, WriteGuard};

/// `unsigned int compress(const unsigned char *src, unsigned int src_len,
/// unsigned char *dst, unsigned int dst_len)`: returns the compressed length
/// (0 = failure).
pub type CompressCb = unsafe extern "C" fn(*const u8, c_uint, *mut u8, c_uint) -> c_uint;
/// `void decompress(const unsigned char *src, unsigned int src_len,
/// unsigned char *dst, unsigned int dst_len)`.
pub type DecompressCb = unsafe extern "C" fn(*const u8, c_uint, *mut u8, c_uint);

struct CCodec {
    compress: CompressCb,
    decompress: DecompressCb,
}

impl BlockCodec for CCodec {
    fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), String> {
        // The callback gets a buffer large enough for any sane codec's
        // worst case; the original interface promises "large enough" without a formula.
        let cap = src.len() + src.len() / 2 + 1024;
        dst.clear();
        dst.resize(cap, 0);
        let n = unsafe {
            (self.compress)(
                src.as_ptr(),
                src.len() as c_uint,
                dst.as_mut_ptr(),
                cap as c_uint,
            )
        } as usize;
        if n == 0 || n > cap {
            return Err("compress callback failed".into());
        }
        dst.truncate(n);
        Ok(())
    }

    fn decompress(&self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        unsafe {
            (self.decompress)(
                src.as_ptr(),
                src.len() as c_uint,
                dst.as_mut_ptr(),
                dst.len() as c_uint,
            )
        };
        Ok(())
    }
}

enum Pinned {
    // The guard is held only for its pin; the pointer handed out is into it.
    Read(u64, #[allow(dead_code)] ReadGuard<'static>),
    Write(u64, WriteGuard<'static>),
}

impl Pinned {
    fn node(&self) -> u64 {
        match self {
            Pinned::Read(n, _) | Pinned::Write(n, _) => *n,
        }
    }
}

const RING: usize = 8;

/// One arena plus the guards behind the pointers handed to C.
pub struct Ctx {
    // Declared before `arena` so the guards drop first.
    pinned: VecDeque<Pinned>,
    arena: &'static Arena,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        self.pinned.clear();
        // SAFETY: `arena` came from `Box::leak` in `Ctx::new`, and every
        // guard borrowing it was dropped just above.
        unsafe { drop(Box::from_raw(self.arena as *const Arena as *mut Arena)) };
    }
}

impl Ctx {
    fn new(cfg: Config) -> Option<Box<Ctx>> {
        let arena = Arena::new(cfg).ok()?;
        Some(Box::new(Ctx {
            pinned: VecDeque::new(),
            arena: Box::leak(Box::new(arena)),
        }))
    }

    /// Drops guards that touch `node` (writing pending changes back).
    fn release_node(&mut self, node: u64) {
        self.pinned.retain(|p| p.node() != node);
    }

    fn push(&mut self, p: Pinned) {
        if self.pinned.len() >= RING {
            self.pinned.pop_front();
        }
        self.pinned.push_back(p);
    }

    fn alloc(&mut self, size: usize) -> u64 {
        self.arena.alloc(size).map_or(0, Handle::to_raw)
    }

    fn free(&mut self, node: u64) -> c_int {
        self.release_node(node);
        match self.arena.free(Handle::from_raw(node)) {
            Ok(()) => 0,
            Err(_) => 1,
        }
    }

    fn read(&mut self, node: u64) -> *const c_void {
        // A pending write to this node holds the freshest bytes.
        for p in self.pinned.iter() {
            if let Pinned::Write(n, g) = p {
                if *n == node {
                    return g.as_ptr() as *const c_void;
                }
            }
        }
        match self.arena.read(Handle::from_raw(node)) {
            Ok(g) => {
                let ptr = g.as_ptr() as *const c_void;
                self.push(Pinned::Read(node, g));
                ptr
            }
            Err(_) => ptr::null(),
        }
    }

    fn write(&mut self, node: u64) -> *mut c_void {
        for p in self.pinned.iter_mut() {
            if let Pinned::Write(n, g) = p {
                if *n == node {
                    return g.as_mut_ptr() as *mut c_void;
                }
            }
        }
        self.release_node(node);
        match self.arena.write(Handle::from_raw(node)) {
            Ok(mut g) => {
                let ptr = g.as_mut_ptr() as *mut c_void;
                self.push(Pinned::Write(node, g));
                ptr
            }
            Err(_) => ptr::null_mut(),
        }
    }
}

fn config(block_size: c_uint, alignment: c_ushort, uncomp: c_ushort, codec: Codec) -> Config {
    Config::default()
        .block_size(block_size as usize)
        .alignment(alignment as usize)
        .uncompressed_blocks(uncomp as usize)
        .codec(codec)
}

fn callbacks(c: Option<CompressCb>, d: Option<DecompressCb>) -> Option<Codec> {
    match (c, d) {
        (Some(compress), Some(decompress)) => Some(Codec::Custom(Arc::new(CCodec {
            compress,
            decompress,
        }))),
        (None, None) => Some(Config::default().get_codec().clone()),
        _ => None,
    }
}

/// Creates a context. `compress_cb` and `decompress_cb` are both given or
/// both NULL (NULL: the built-in default codec). Returns NULL on a bad
/// configuration.
#[no_mangle]
pub extern "C" fn compll_ctx_new(
    block_size: c_uint,
    alignment: c_ushort,
    uncomp_count: c_ushort,
    compress_cb: Option<CompressCb>,
    decompress_cb: Option<DecompressCb>,
) -> *mut Ctx {
    let Some(codec) = callbacks(compress_cb, decompress_cb) else {
        return ptr::null_mut();
    };
    Ctx::new(config(block_size, alignment, uncomp_count, codec))
        .map_or(ptr::null_mut(), Box::into_raw)
}

/// Creates a context with a built-in codec named like "zstd-1", "lz4",
/// "zlib-5", "zstd-3-dict" or "copy". Returns NULL on a bad name or
/// configuration.
///
/// # Safety
/// `codec` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_new_codec(
    block_size: c_uint,
    alignment: c_ushort,
    uncomp_count: c_ushort,
    codec: *const c_char,
) -> *mut Ctx {
    if codec.is_null() {
        return ptr::null_mut();
    }
    let Ok(name) = CStr::from_ptr(codec).to_str() else {
        return ptr::null_mut();
    };
    let Ok(codec) = Codec::parse(name) else {
        return ptr::null_mut();
    };
    Ctx::new(config(block_size, alignment, uncomp_count, codec))
        .map_or(ptr::null_mut(), Box::into_raw)
}

/// Mirror of `struct compll_config` in compll.h.
#[repr(C)]
pub struct CConfig {
    /// Block size in bytes.
    pub block_size: c_uint,
    /// Node alignment.
    pub alignment: c_ushort,
    /// Blocks kept uncompressed.
    pub uncomp_count: c_ushort,
    /// Codec name (NUL-terminated).
    pub codec: *const c_char,
    /// Leading node bytes grouped by column.
    pub group_fields: c_uint,
    /// Blocks that may wait for the compressor thread.
    pub background: c_uint,
    /// Blocks decompressed ahead of reads.
    pub readahead: c_uint,
    /// Blocks the cache may grow by.
    pub cache_growth: c_uint,
    /// Node cache budget in bytes.
    pub node_cache: c_uint,
    /// Blocks in use from which the compressor thread runs.
    pub background_from: c_uint,
    /// The memory target (`Config::target_ratio`; 0: off).
    pub target_ratio: f64,
}

/// The name `compll_config_default` gives the default codec.
static DEFAULT_CODEC: &CStr = c"zstd-1";

/// Fills `cfg` with the library's defaults.
///
/// # Safety
/// `cfg` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn compll_config_default(cfg: *mut CConfig) {
    let Some(out) = cfg.as_mut() else {
        return;
    };
    let d = Config::default();
    *out = CConfig {
        block_size: d.get_block_size() as c_uint,
        alignment: d.get_alignment() as c_ushort,
        uncomp_count: d.get_uncompressed_blocks() as c_ushort,
        codec: DEFAULT_CODEC.as_ptr(),
        group_fields: d.get_group_fields() as c_uint,
        background: d.get_background_compression() as c_uint,
        readahead: d.get_readahead() as c_uint,
        cache_growth: d.get_cache_growth() as c_uint,
        node_cache: d.get_node_cache() as c_uint,
        background_from: d.get_background_from() as c_uint,
        target_ratio: d.get_target_ratio(),
    };
}

/// Creates a context with every setting; NULL on a bad setting or codec
/// name.
///
/// # Safety
/// `cfg` must be NULL or point to a filled `struct compll_config` whose
/// `codec` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_new_config(cfg: *const CConfig) -> *mut Ctx {
    let Some(c) = cfg.as_ref() else {
        return ptr::null_mut();
    };
    let codec = if c.codec.is_null() {
        Config::default().get_codec().clone()
    } else {
        let Ok(name) = CStr::from_ptr(c.codec).to_str() else {
            return ptr::null_mut();
        };
        let Ok(codec) = Codec::parse(name) else {
            return ptr::null_mut();
        };
        codec
    };
    let cfg = config(c.block_size, c.alignment, c.uncomp_count, codec)
        .group_fields(c.group_fields as usize)
        .background_compression(c.background as usize)
        .background_from(c.background_from as usize)
        .readahead(c.readahead as usize)
        .cache_growth(c.cache_growth as usize)
        .node_cache(c.node_cache as usize)
        .target_ratio(c.target_ratio);
    Ctx::new(cfg).map_or(ptr::null_mut(), Box::into_raw)
}

/// Waits for the context's compressor thread (see `Arena::settle`).
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_settle(ctx: *mut Ctx) {
    if let Some(c) = ctx_ref(ctx) {
        c.arena.settle();
    }
}

/// Copies `len` bytes at `offset` of a node to `out`, then frees the node;
/// 0 on success, 1 for an invalid node or range (nothing freed).
///
/// # Safety
/// `ctx` must be NULL or a live context; `out` NULL or writable for `len`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_read_free(
    ctx: *mut Ctx,
    node: u64,
    offset: usize,
    out: *mut c_void,
    len: usize,
) -> c_int {
    let Some(c) = ctx_ref(ctx) else {
        return 1;
    };
    if out.is_null() && len > 0 {
        return 1;
    }
    // A pending write through a pointer lands before the bytes are read.
    c.release_node(node);
    let buf: &mut [u8] = if len == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(out as *mut u8, len)
    };
    match c.arena.read_and_free(Handle::from_raw(node), offset, buf) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// Destroys a context and everything allocated in it.
///
/// # Safety
/// `ctx` must be NULL or come from `compll_ctx_new*`, and not be used again.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_destroy(ctx: *mut Ctx) {
    if !ctx.is_null() {
        drop(Box::from_raw(ctx));
    }
}

unsafe fn ctx_ref<'a>(ctx: *mut Ctx) -> Option<&'a mut Ctx> {
    ctx.as_mut()
}

/// Allocates a zeroed node; 0 on error.
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_alloc(ctx: *mut Ctx, size: c_uint) -> u64 {
    ctx_ref(ctx).map_or(0, |c| c.alloc(size as usize))
}

/// Frees a node; returns 0, or 1 for an invalid or already freed node.
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_free(ctx: *mut Ctx, node: u64) -> c_int {
    ctx_ref(ctx).map_or(1, |c| c.free(node))
}

/// Pointer to the node's bytes for reading; NULL for an invalid node.
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_read(ctx: *mut Ctx, node: u64) -> *const c_void {
    ctx_ref(ctx).map_or(ptr::null(), |c| c.read(node))
}

/// Pointer to the node's bytes for writing; NULL for an invalid node.
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_write(ctx: *mut Ctx, node: u64) -> *mut c_void {
    ctx_ref(ctx).map_or(ptr::null_mut(), |c| c.write(node))
}

/// Usable size of a node in bytes; 0 for an invalid node.
///
/// # Safety
/// `ctx` must be NULL or a live context.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_size(ctx: *mut Ctx, node: u64) -> c_uint {
    ctx_ref(ctx).map_or(0, |c| {
        c.release_node(node);
        c.arena
            .len(Handle::from_raw(node))
            .map_or(0, |n| n as c_uint)
    })
}

/// Mirror of `struct compll_stats` in compll.h.
#[repr(C)]
pub struct CStats {
    /// Bytes of compressed blocks.
    pub compressed_bytes: u64,
    /// Bytes of uncompressed (cached) blocks.
    pub uncompressed_bytes: u64,
    /// Bookkeeping bytes.
    pub overhead_bytes: u64,
    /// Block compressions.
    pub compressions: u64,
    /// Block decompressions.
    pub decompressions: u64,
    /// Live nodes.
    pub live_nodes: u64,
    /// Share of block lookups served without decompressing.
    pub hit_rate: f64,
    /// zstd's native context bytes (also in `overhead_bytes`).
    pub codec_context_bytes: u64,
    /// Loads served by a block decompressed ahead.
    pub decompressed_ahead: u64,
    /// Lookups served uncompressed.
    pub hits: u64,
    /// Lookups that decompressed.
    pub misses: u64,
    /// Blocks in use.
    pub blocks: u64,
    /// Blocks held in lz4 form (the memory target's choice).
    pub fast_blocks: u64,
    /// 1 while the compressor thread runs.
    pub background_running: u64,
    /// Times the compressor thread was started.
    pub background_starts: u64,
    /// Jobs queued for the thread that the calling thread did itself.
    pub taken_over: u64,
}

/// Fills `out` with the context's statistics; returns 0, or 1 on NULL.
///
/// # Safety
/// `ctx` must be NULL or a live context; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn compll_ctx_stats(ctx: *mut Ctx, out: *mut CStats) -> c_int {
    let (Some(c), Some(out)) = (ctx_ref(ctx), out.as_mut()) else {
        return 1;
    };
    let s = c.arena.stats();
    *out = CStats {
        compressed_bytes: s.compressed_bytes,
        uncompressed_bytes: s.uncompressed_bytes,
        overhead_bytes: s.overhead_bytes + s.codec_context_bytes,
        compressions: s.compressions,
        decompressions: s.decompressions,
        live_nodes: s.live_nodes,
        hit_rate: s.hit_rate(),
        codec_context_bytes: s.codec_context_bytes,
        decompressed_ahead: s.decompressed_ahead,
        hits: s.hits,
        misses: s.misses,
        blocks: s.blocks,
        fast_blocks: s.fast_blocks,
        background_running: s.background_running as u64,
        background_starts: s.background_starts,
        taken_over: s.taken_over,
    };
    0
}

// The process-wide arena of the original API. Like the original
// library it is meant for one thread.
static GLOBAL: AtomicPtr<Ctx> = AtomicPtr::new(ptr::null_mut());

fn global() -> *mut Ctx {
    GLOBAL.load(Ordering::Acquire)
}

/// Initialises the global arena (replacing an earlier one and everything
/// in it). Returns 0 on success, a positive number on error.
#[no_mangle]
pub extern "C" fn compll_init(
    block_size: c_uint,
    alignment: c_ushort,
    uncomp_count: c_ushort,
    compress_cb: Option<CompressCb>,
    decompress_cb: Option<DecompressCb>,
) -> c_int {
    let ctx = compll_ctx_new(
        block_size,
        alignment,
        uncomp_count,
        compress_cb,
        decompress_cb,
    );
    if ctx.is_null() {
        return 1;
    }
    let old = GLOBAL.swap(ctx, Ordering::AcqRel);
    // SAFETY: `old` is NULL or a context this module created.
    unsafe { compll_ctx_destroy(old) };
    0
}

/// Allocates a node in the global arena; 0 on error or before init.
#[no_mangle]
pub extern "C" fn compll_alloc(size: c_uint) -> u64 {
    // SAFETY: the global is NULL or a live context.
    unsafe { compll_ctx_alloc(global(), size) }
}

/// Frees a node of the global arena; 0 on success.
#[no_mangle]
pub extern "C" fn compll_free(node: u64) -> c_int {
    // SAFETY: as above.
    unsafe { compll_ctx_free(global(), node) }
}

/// Read pointer into the global arena; NULL on error.
#[no_mangle]
pub extern "C" fn compll_read(node: u64) -> *const c_void {
    // SAFETY: as above.
    unsafe { compll_ctx_read(global(), node) }
}

/// Write pointer into the global arena; NULL on error.
#[no_mangle]
pub extern "C" fn compll_write(node: u64) -> *mut c_void {
    // SAFETY: as above.
    unsafe { compll_ctx_write(global(), node) }
}

/// Destroys the global arena.
#[no_mangle]
pub extern "C" fn compll_shutdown() {
    let old = GLOBAL.swap(ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: `old` is NULL or a context this module created.
    unsafe { compll_ctx_destroy(old) };
}
