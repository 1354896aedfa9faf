/*
 * compll.h - compressed memory allocator (C API of the compll crate).
 *
 * Link with libcompll_capi.a (plus -lpthread -ldl -lm) or libcompll_capi.so.
 *
 * Nodes are named by 64-bit handles (compll_t); 0 means "no node". Pointers
 * returned by compll_read()/compll_write() point into a pinned copy of the
 * node and stay valid until the eighth following call on the same arena, or
 * until the next call that touches the same node (free, or write after
 * read). Changes made through a write pointer land in the arena when that
 * pointer expires. Do not keep these pointers; call compll_read() again.
 *
 * Define COMPLL_NOLIB before including this header to map everything to
 * calloc()/free() and plain pointers, so ordinary memory debugging tools
 * (valgrind, AddressSanitizer) see every node.
 */
#ifndef COMPLL_H
#define COMPLL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* unsigned int compress(src, src_len, dst, dst_len): returns the compressed
 * length, 0 on failure. dst_len is at least src_len * 3 / 2 + 1024. */
typedef unsigned int (*compll_compress_callback)(const unsigned char *, unsigned int,
                                                 unsigned char *, unsigned int);
/* void decompress(src, src_len, dst, dst_len): fills exactly dst_len bytes. */
typedef void (*compll_decompress_callback)(const unsigned char *, unsigned int,
                                           unsigned char *, unsigned int);

struct compll_stats {
    unsigned long long compressed_bytes;   /* compressed block copies */
    unsigned long long uncompressed_bytes; /* cached uncompressed blocks */
    unsigned long long overhead_bytes;     /* tables and codec state */
    unsigned long long compressions;
    unsigned long long decompressions;
    unsigned long long live_nodes;
    double hit_rate;                       /* lookups served without decompressing */
    /* added after the fields above (their layout is unchanged) */
    unsigned long long codec_context_bytes; /* zstd's native contexts (also in
                                               overhead_bytes) */
    unsigned long long decompressed_ahead; /* loads served by a block the compressor
                                              thread had decompressed ahead */
    unsigned long long hits;               /* lookups served uncompressed */
    unsigned long long misses;             /* lookups that decompressed */
    unsigned long long blocks;             /* blocks in use */
    unsigned long long fast_blocks;        /* blocks held in lz4 form because memory
                                              was to spare (target_ratio) */
    unsigned long long background_running; /* 1 while the compressor thread runs */
    unsigned long long background_starts;  /* times the thread was started */
    unsigned long long taken_over;         /* jobs queued for the thread that the
                                              calling thread did itself */
};

/* Every setting of a context (compll_ctx_new_config). Fill it with
 * compll_config_default() first, then change what you need. */
struct compll_config {
    unsigned int block_size;     /* 1024 .. 16 MiB; default 32768 */
    unsigned short alignment;    /* 1, 2, 4, 8 or 16; default 8 */
    unsigned short uncomp_count; /* blocks kept uncompressed (>= 1); default 10 */
    const char *codec;           /* a codec name, see compll_ctx_new_codec; default "zstd-1" */
    unsigned int group_fields;   /* leading node bytes stored column by column when a
                                    block is compressed (0: none; at most 4096) */
    unsigned int background;     /* blocks that may wait for a compressor thread; while
                                    that many wait the calling thread compresses too
                                    (0: no thread; at most 1024) */
    unsigned int readahead;      /* blocks the thread may decompress ahead of reads that
                                    walk the arena one way (0: none; at most 64) */
    unsigned int cache_growth;   /* blocks the cache may grow by while reads reload
                                    blocks it just evicted (0: fixed) */
    unsigned int node_cache;     /* bytes of single-node copies kept for scattered
                                    reads (0: none); default 32768 */
    unsigned int background_from; /* blocks in use from which the compressor thread
                                    runs; it stops below half of this (0: from the
                                    first block evicted); default 0 */
    double target_ratio;         /* memory target: hold about (block bytes in use) /
                                    this, storing blocks with lz4 while memory is to
                                    spare and freeing codec contexts after each use
                                    while it is not (0: off; else >= 1); default 0 */
};

#ifndef COMPLL_NOLIB

typedef unsigned long long compll_t;
typedef struct compll_ctx compll_ctx;

/* ---- one global arena (the original interface) ---- */

/* block_size: 1024 .. 16 MiB; alignment: 1, 2, 4, 8 or 16 (raised where the
 * block size needs it); uncomp_count: blocks kept uncompressed (>= 1);
 * compress_cb/decompress_cb: both given, or both NULL for the built-in
 * default codec (zstd level 1). Returns 0 on success, positive on error.
 * Calling it again replaces the arena and frees everything in it. */
int compll_init(unsigned int block_size, unsigned short alignment,
                unsigned short uncomp_count, compll_compress_callback compress_cb,
                compll_decompress_callback decompress_cb);
/* Zeroed node of at least size bytes; 0 on error. */
compll_t compll_alloc(unsigned int size);
/* 0 on success, 1 for an invalid or already freed node. */
int compll_free(compll_t node);
/* NULL for an invalid node. */
const void *compll_read(compll_t node);
void *compll_write(compll_t node);
/* Frees the global arena. */
void compll_shutdown(void);

/* ---- any number of arenas ---- */

compll_ctx *compll_ctx_new(unsigned int block_size, unsigned short alignment,
                           unsigned short uncomp_count,
                           compll_compress_callback compress_cb,
                           compll_decompress_callback decompress_cb);
/* codec: "lz4", "zstd-N", "zstd-N-dict", "zstd-N-mM-bK" (minimum match M,
 * zstd blocks of K KiB; either may be left out), "zlib-N" or "copy". */
compll_ctx *compll_ctx_new_codec(unsigned int block_size, unsigned short alignment,
                                 unsigned short uncomp_count, const char *codec);
/* The library's defaults (those of compll_ctx_new with NULL callbacks). */
void compll_config_default(struct compll_config *cfg);
/* A context with every setting; NULL on a bad setting or codec name. */
compll_ctx *compll_ctx_new_config(const struct compll_config *cfg);
/* Waits until the compressor thread (if any) has stored every block it was
 * given and drops blocks decompressed ahead; the cache stays. */
void compll_ctx_settle(compll_ctx *ctx);
/* Copies len bytes at offset of a node to out, then frees the node, in one
 * lookup (tearing down linked structures). 0 on success, 1 for an invalid
 * node or a range outside it (the node is then not freed). */
int compll_ctx_read_free(compll_ctx *ctx, compll_t node, size_t offset, void *out,
                         size_t len);
void compll_ctx_destroy(compll_ctx *ctx);
compll_t compll_ctx_alloc(compll_ctx *ctx, unsigned int size);
int compll_ctx_free(compll_ctx *ctx, compll_t node);
const void *compll_ctx_read(compll_ctx *ctx, compll_t node);
void *compll_ctx_write(compll_ctx *ctx, compll_t node);
/* Usable size (>= the requested size); 0 for an invalid node. */
unsigned int compll_ctx_size(compll_ctx *ctx, compll_t node);
/* 0 on success. */
int compll_ctx_stats(compll_ctx *ctx, struct compll_stats *out);

#else /* COMPLL_NOLIB: plain heap memory for debugging */

#include <stdlib.h>
#include <string.h>

typedef void *compll_t;
typedef struct compll_ctx compll_ctx;

#define compll_init(bs, al, cnt, comp, decomp) ((void)(bs), (void)(al), (void)(cnt), (void)(comp), (void)(decomp), 0)
#define compll_alloc(size) calloc((size) ? (size) : 1, 1)
#define compll_free(p) (free(p), 0)
#define compll_read(p) ((const void *)(p))
#define compll_write(p) ((void *)(p))
#define compll_shutdown() ((void)0)

/* A context is only a token; nodes are individual heap blocks. */
#define compll_ctx_new(bs, al, cnt, comp, decomp) ((compll_ctx *)calloc(1, 1))
#define compll_ctx_new_codec(bs, al, cnt, codec) ((void)(codec), (compll_ctx *)calloc(1, 1))
#define compll_ctx_destroy(ctx) free(ctx)
#define compll_ctx_alloc(ctx, size) ((void)(ctx), calloc((size) ? (size) : 1, 1))
#define compll_ctx_free(ctx, p) ((void)(ctx), free(p), 0)
#define compll_ctx_read(ctx, p) ((void)(ctx), (const void *)(p))
#define compll_ctx_write(ctx, p) ((void)(ctx), (void *)(p))
#define compll_ctx_size(ctx, p) ((void)(ctx), 0u)
#define compll_ctx_stats(ctx, out) ((void)(ctx), memset((out), 0, sizeof *(out)), 0)
#define compll_config_default(cfg) ((void)memset((cfg), 0, sizeof *(cfg)))
#define compll_ctx_new_config(cfg) ((void)(cfg), (compll_ctx *)calloc(1, 1))
#define compll_ctx_settle(ctx) ((void)(ctx))
#define compll_ctx_read_free(ctx, p, off, out, len) \
    ((void)(ctx), memcpy((out), (const char *)(p) + (off), (len)), free(p), 0)

#endif /* COMPLL_NOLIB */

#ifdef __cplusplus
}
#endif

#endif /* COMPLL_H */
