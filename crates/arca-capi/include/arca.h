/*
 * arca.h - C API for arca, embedded storage for hierarchical scientific
 * data: groups, typed n-dimensional datasets, attributes, chunking and
 * compression, in one checksummed file.
 *
 * Link with libarca.a (plus -lpthread -ldl -lm) or libarca.so, built by
 * `cargo build --release -p arca-capi`. See crates/arca-capi/README.md.
 *
 * Conventions
 * -----------
 * - Handles are opaque: arca_file_t, arca_group_t, arca_dataset_t and
 *   arca_attrs_t. Each handle a function gives you is yours and must be
 *   released with the matching arca_*_close, which accepts NULL. Handles
 *   are independent: closing a file does not free its group handles (they
 *   fail with ARCA_ERR_INVALID from then on, and still need closing).
 * - Every function returns an int32_t status: ARCA_OK (0) or a negative
 *   ARCA_ERR_* code. arca_last_error() gives the message of the most recent
 *   failure on the calling thread. Functions with an out-handle set it to
 *   NULL when they fail.
 * - NULL for a required pointer is ARCA_ERR_NULL, never a crash. Internal
 *   panics are caught and reported as ARCA_ERR_PANIC.
 * - Strings go in as NUL-terminated UTF-8 (file paths: any bytes). Strings
 *   come out through a caller buffer with required-length semantics:
 *   `*needed` (optional) receives strlen + 1; a NULL buffer only asks for
 *   that length; a shorter buffer is ARCA_ERR_INVALID and is left
 *   untouched. The one allocating call, arca_attr_read_string_alloc, is
 *   paired with arca_string_free.
 * - Element buffers are packed, row-major and in native byte order; the
 *   byte order on disk is chosen at creation and converted on the way.
 * - Handles may be used from several threads; the library serialises
 *   access to each file. Do not close a handle while another thread uses it.
 */
#ifndef ARCA_H
#define ARCA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes: one per kind of error ---------------------------- */

#define ARCA_OK 0
/* The operating system refused a read, write, sync or open. */
#define ARCA_ERR_IO (-1)
/* A structure in the file is damaged. */
#define ARCA_ERR_CORRUPT (-2)
/* No object, attribute or file by that name. */
#define ARCA_ERR_NOT_FOUND (-3)
/* An object or attribute by that name exists already. */
#define ARCA_ERR_EXISTS (-4)
/* An argument does not fit the object it is applied to (bad mode, type,
 * selection out of bounds, buffer too small, closed file, ...). */
#define ARCA_ERR_INVALID (-5)
/* A feature this version does not know, or that the C API does not
 * offer (variable-length types). */
#define ARCA_ERR_UNSUPPORTED (-6)
/* The file was opened read-only. */
#define ARCA_ERR_READ_ONLY (-7)
/* Another process holds the file. */
#define ARCA_ERR_LOCKED (-8)
/* An earlier write failure left the file handle unusable; reopen. */
#define ARCA_ERR_POISONED (-9)
/* A required pointer argument was NULL. */
#define ARCA_ERR_NULL (-10)
/* The library panicked; the message says where. Handles stay valid. */
#define ARCA_ERR_PANIC (-11)
/* The file has a journal left by an interrupted writer that this process
 * may not roll back (read-only open without write permission). */
#define ARCA_ERR_NEEDS_RECOVERY (-12)
/* An error kind newer than this header. */
#define ARCA_ERR_OTHER (-13)

/* ---- constants ------------------------------------------------------- */

/* Most dimensions a dataset or attribute can have. */
#define ARCA_MAX_RANK 32
/* A maxdims entry meaning "no limit". */
#define ARCA_UNLIMITED UINT64_MAX

/* Element types (arca_dtype_t). */
typedef int32_t arca_dtype_t;
#define ARCA_DTYPE_BOOL 1    /* one byte, 0 or 1 */
#define ARCA_DTYPE_INT8 2
#define ARCA_DTYPE_INT16 3
#define ARCA_DTYPE_INT32 4
#define ARCA_DTYPE_INT64 5
#define ARCA_DTYPE_UINT8 6
#define ARCA_DTYPE_UINT16 7
#define ARCA_DTYPE_UINT32 8
#define ARCA_DTYPE_UINT64 9
#define ARCA_DTYPE_FLOAT32 10
#define ARCA_DTYPE_FLOAT64 11
#define ARCA_DTYPE_STRING 12 /* fixed-length byte string, zero-padded */
#define ARCA_DTYPE_VLEN 13   /* variable-length: reported, not readable here */
#define ARCA_DTYPE_FLOAT16 14    /* IEEE half precision, 2 bytes */
#define ARCA_DTYPE_COMPLEX64 15  /* two floats, real first (float complex) */
#define ARCA_DTYPE_COMPLEX128 16 /* two doubles, real first (double complex) */
#define ARCA_DTYPE_OPAQUE 17     /* uninterpreted bytes; length in str_len */
#define ARCA_DTYPE_ENUM 18       /* named integer values: from a type string */
#define ARCA_DTYPE_ARRAY 19      /* fixed-shape array per element: from a type string */
#define ARCA_DTYPE_COMPOUND 20   /* record of named members: from a type string */
#define ARCA_DTYPE_COMPLEX32 21  /* two half-precision floats */
#define ARCA_DTYPE_REFERENCE 22  /* uint64_t object id (arca_object_id), 0 = none */
#define ARCA_DTYPE_LONGDOUBLE 23 /* x86-64 long double: x87 80-bit in 16 bytes */
#define ARCA_DTYPE_CLONGDOUBLE 24 /* two such, real first (long double complex) */
#define ARCA_DTYPE_BITFIELD 25   /* HDF5 bitfield: an unsigned integer of str_len bytes */
#define ARCA_DTYPE_TIME 26       /* HDF5 time: an unsigned integer of str_len (4, 8) bytes */

/* Type strings name every type, the structured ones included:
 *   "<f8", ">i4", "|b1", "<f2", "<c16", "|S10", "|V8",
 *   "[3,2]<f4"                            an array of 3x2 floats per element
 *   "struct(16){\"t\"@0:<f8,\"n\"@8:<i4}"   a compound: size, then name@offset:type
 *   "enum(|u1){\"RED\":0,\"GREEN\":1}"     named values of an integer base
 *   "opaque(4,\"tag\")"                    opaque bytes with a tag
 * Elements cross in native byte order; compound members sit at their
 * offsets. arca_dataset_dtype_str and arca_attr_dtype_str report them. */

/* Byte orders on disk. Types without one (bool, 1-byte integers, strings)
 * report ARCA_ORDER_NATIVE. */
#define ARCA_ORDER_NATIVE 0
#define ARCA_ORDER_LITTLE 1
#define ARCA_ORDER_BIG 2

/* Dataset layouts (arca_dataset_opts_t.layout, arca_dataset_layout). */
#define ARCA_LAYOUT_AUTO 0       /* compact when small, else contiguous or chunked */
#define ARCA_LAYOUT_COMPACT 1    /* elements in the header (fixed shape, < 4 KiB) */
#define ARCA_LAYOUT_CONTIGUOUS 2
#define ARCA_LAYOUT_CHUNKED 3
#define ARCA_LAYOUT_VIRTUAL 4    /* assembled from other datasets; read-only (not at creation) */
#define ARCA_LAYOUT_EXTERNAL 5   /* in segments of external files (not at creation) */

/* Filters, applied in pipeline order; at most one compressor. */
#define ARCA_FILTER_SHUFFLE 1 /* byte transposition; no level */
#define ARCA_FILTER_GZIP 2    /* level 0..9 */
#define ARCA_FILTER_ZSTD 3    /* level -7..22 */
#define ARCA_FILTER_LZ4 4     /* no level */
#define ARCA_FILTER_HDF5 5    /* a filter of an imported HDF5 file, its chunks kept
                                 as stored; level: HDF5's filter id. Reported by
                                 arca_dataset_filters, not accepted at creation */

/* Object kinds. */
#define ARCA_KIND_GROUP 1
#define ARCA_KIND_DATASET 2
#define ARCA_KIND_LINK 3    /* a dangling soft link or an external link */
#define ARCA_KIND_DATATYPE 4 /* a committed datatype (listed; no handle opens it) */

/* Link kinds (arca_link_info). */
#define ARCA_LINK_HARD 1
#define ARCA_LINK_SOFT 2
#define ARCA_LINK_EXTERNAL 3

/* ---- types ----------------------------------------------------------- */

typedef struct arca_file arca_file_t;
typedef struct arca_group arca_group_t;
typedef struct arca_dataset arca_dataset_t;
typedef struct arca_attrs arca_attrs_t;
/* A slab of an array cut into filtered chunks (arca_encode_slab); free
 * it with arca_slab_free. */
typedef struct arca_slab arca_slab_t;

/* One filter stage. */
typedef struct arca_filter {
    int32_t id;    /* ARCA_FILTER_* */
    int32_t level; /* for gzip and zstd; ignored otherwise */
} arca_filter_t;

/* Dataset creation options. Start from arca_dataset_opts_init. The arrays
 * are only read during arca_dataset_create. */
typedef struct arca_dataset_opts {
    arca_dtype_t dtype;          /* ARCA_DTYPE_* (not VLEN) */
    int32_t order;               /* ARCA_ORDER_*: byte order on disk */
    uint32_t str_len;            /* bytes per element for ARCA_DTYPE_STRING */
    int32_t rank;                /* 0 (scalar) .. ARCA_MAX_RANK */
    const uint64_t *dims;        /* rank extents */
    const uint64_t *maxdims;     /* NULL (= dims) or rank limits; ARCA_UNLIMITED */
    const uint64_t *chunks;      /* NULL (contiguous, or automatic when
                                    maxdims or filters need chunks) or rank extents */
    const arca_filter_t *filters;/* NULL or nfilters stages */
    size_t nfilters;
    const void *fill_value;      /* NULL (zeros) or one element, native order */
    size_t fill_size;            /* bytes at fill_value: the element size */
    int32_t layout;              /* ARCA_LAYOUT_* (AUTO from opts_init) */
    const char *type_str;        /* NULL, or a type string used instead of
                                    dtype, order and str_len */
    int32_t track_order;         /* nonzero: attributes listed in creation order */
} arca_dataset_opts_t;

/* One chunk written into reserved space, for arca_dataset_seal_chunks. */
typedef struct arca_written_chunk {
    const uint64_t *offset; /* the chunk's first element: rank entries */
    uint64_t addr;          /* where its stored bytes begin in the file */
    uint64_t len;           /* stored bytes */
    uint32_t mask;          /* filter mask, from arca_slab_chunk */
    uint32_t crc;           /* CRC32C of the stored bytes, from arca_slab_chunk */
} arca_written_chunk_t;

/* A chunked dataset as arca_encode_slab_desc needs it, for a process
 * that does not have the file open. The arrays are only read during the
 * call. */
typedef struct arca_slab_desc {
    const char *type_str;         /* NULL, or the element type as
                                     arca_dataset_dtype_str gives it: slab and
                                     fill value in native byte order. NULL: taken
                                     as stored, elem_size bytes each */
    size_t elem_size;             /* bytes per element (with type_str: 0 or its size) */
    int32_t rank;                 /* 1 .. ARCA_MAX_RANK */
    const uint64_t *dims;         /* rank extents */
    const uint64_t *chunks;       /* rank chunk extents */
    const arca_filter_t *filters; /* NULL or nfilters stages: the dataset's pipeline */
    size_t nfilters;
    const void *fill_value;       /* NULL (zeros) or one element */
    size_t fill_size;             /* bytes at fill_value */
} arca_slab_desc_t;

/* Figures from arca_stat / arca_file_check. */
typedef struct arca_stat {
    uint64_t groups;            /* groups, the root included */
    uint64_t datasets;
    uint64_t attributes;        /* on all objects */
    uint64_t chunks;            /* stored chunks of all chunked datasets */
    uint64_t file_bytes;        /* logical file length */
    uint64_t superblock_bytes;
    uint64_t metadata_bytes;    /* object headers, B-tree pages, blobs */
    uint64_t data_bytes;         /* dataset elements as stored */
    uint64_t data_logical_bytes; /* dataset elements before compression */
    uint64_t unused_bytes;      /* freed and not yet reused */
    uint64_t free_bytes;        /* in free sections */
    uint64_t free_sections;
    uint64_t compact_bytes;     /* elements kept in headers (in metadata_bytes) */
} arca_stat_t;

/* What an attribute holds. */
typedef struct arca_attr_info {
    arca_dtype_t dtype;              /* ARCA_DTYPE_* */
    int32_t order;                   /* ARCA_ORDER_* as stored */
    int32_t rank;                    /* 0 for a scalar */
    uint32_t elem_size;              /* bytes per element (string length) */
    uint64_t shape[ARCA_MAX_RANK];   /* first rank entries */
    uint64_t nelems;                 /* 1 for a scalar */
    uint64_t nbytes;                 /* what arca_attr_read writes */
} arca_attr_info_t;

/* Member callback: return 0 to go on, nonzero to stop; the iteration then
 * returns that value. `name` is valid only during the call. The callback
 * may call other arca functions, but must not close the group being
 * iterated. */
typedef int32_t (*arca_iterate_fn)(const char *name, int32_t kind, void *user);

/* ---- errors and version ---------------------------------------------- */

/* Message of the most recent failed call on this thread ("" if none).
 * Owned by the library; valid until the next failing call on this thread.
 *   if (rc != ARCA_OK) fprintf(stderr, "%s\n", arca_last_error()); */
const char *arca_last_error(void);

/* Name of a status code ("ARCA_ERR_NOT_FOUND"); static, do not free. */
const char *arca_error_name(int32_t code);

/* Library version ("0.1.0"); static, do not free. */
const char *arca_version(void);

/* Release the memory held by the library's free lists; returns the bytes
 * released (see docs/POOLS.md). Never fails. */
uint64_t arca_gc(void);

/* ---- files ----------------------------------------------------------- */

/* Open or create the file at `path`. mode: "r" read only (must exist),
 * "r+" read/write (must exist), "w" create or truncate, "w-" or "x" create
 * (ARCA_ERR_EXISTS if present), "a" read/write, created if missing.
 * On success *out is a new handle: release it with arca_file_close.
 *   arca_file_t *f;
 *   if (arca_file_open("run.arca", "a", &f) != ARCA_OK) ... */
int32_t arca_file_open(const char *path, const char *mode, arca_file_t **out);

/* arca_file_open(path, "w", out). */
int32_t arca_file_create(const char *path, arca_file_t **out);

/* Flush, close and free the handle (whatever the status; NULL is a no-op).
 * Other handles into the file must still be closed; they stop working.
 *   if (arca_file_close(f) != ARCA_OK) ... */
int32_t arca_file_close(arca_file_t *f);

/* Commit every pending change to disk, atomically. */
int32_t arca_file_flush(arca_file_t *f);

/* Move a file opened read-only to the newest commit of the writer that has
 * it open (in another process or through another handle); until then it
 * shows the commit that was newest when it was opened or last refreshed.
 * *changed (may be NULL) = 1 if it moved, else 0. No-op for writers.
 *   int32_t changed; arca_file_refresh(f, &changed); */
int32_t arca_file_refresh(arca_file_t *f, int32_t *changed);

/* The generation (number of commits) of the state the file shows. */
int32_t arca_file_generation(arca_file_t *f, uint64_t *out);

/* Open the root group; release *out with arca_group_close.
 *   arca_group_t *root; arca_file_root(f, &root); */
int32_t arca_file_root(arca_file_t *f, arca_group_t **out);

/* *writable = 1 if the file was opened for writing, else 0. */
int32_t arca_file_is_writable(arca_file_t *f, int32_t *writable);

/* The path the file was opened from (caller buffer, required length). */
int32_t arca_file_path(arca_file_t *f, char *buf, size_t cap, size_t *needed);

/* Object counts and byte accounting from a walk of the file.
 *   arca_stat_t s; arca_stat(f, &s); printf("%llu\n", (unsigned long long)s.datasets); */
int32_t arca_stat(arca_file_t *f, arca_stat_t *out);

/* Verify every structure and chunk (ARCA_ERR_CORRUPT on damage); `out`
 * may be NULL, else it receives the arca_stat figures. */
int32_t arca_file_check(arca_file_t *f, arca_stat_t *out);

/* Transactions: the changes between begin and end are committed together
 * or not at all. Work done before begin is committed first; transactions
 * nest, and the outermost end decides. end_transaction with commit 0 rolls
 * everything back to the state before the outermost begin; a commit of a
 * transaction a failure doomed rolls back and is ARCA_ERR_INVALID, and so
 * is one that ends with chunk space reserved and not sealed. A read-only
 * file is ARCA_ERR_READ_ONLY.
 *   arca_file_begin_transaction(f);
 *   int32_t rc = arca_dataset_write(ds, start, count, NULL, buf, size);
 *   arca_file_end_transaction(f, rc == ARCA_OK); */
int32_t arca_file_begin_transaction(arca_file_t *f);
int32_t arca_file_end_transaction(arca_file_t *f, int32_t commit);

/* ---- groups ---------------------------------------------------------- */
/* Paths are relative to `loc`, or absolute when they start with '/'. */

/* Create a group, and any missing parents. `out` may be NULL; otherwise
 * release *out with arca_group_close.
 *   arca_group_create(root, "run1/detector", NULL); */
int32_t arca_group_create(arca_group_t *loc, const char *path, arca_group_t **out);

/* As arca_group_create, for a group that lists its members and its
 * attributes in creation order (kept on reopen). */
int32_t arca_group_create_ordered(arca_group_t *loc, const char *path, arca_group_t **out);

/* Links. A soft link holds a path (absolute, or relative to its group),
 * followed when used; an external link a path in another file (named
 * relative to this file's directory), opened read-only; a hard link is a
 * second name: the object lives until its last name is deleted.
 *   arca_link_soft(root, "latest", "/runs/42");
 *   arca_link_external(root, "calib", "calib.arca", "/v3");
 *   arca_link_hard(root, "runs/42/frames", "frames_latest"); */
int32_t arca_link_soft(arca_group_t *loc, const char *path, const char *target);
int32_t arca_link_external(arca_group_t *loc, const char *path, const char *file,
                           const char *target);
int32_t arca_link_hard(arca_group_t *loc, const char *existing, const char *path);

/* What the link at `path` is, not following it: *kind = ARCA_LINK_*; the
 * target path (soft, external) and file (external) through caller buffers
 * with required lengths; every out-pointer may be NULL.
 *   int32_t k; char t[512];
 *   arca_link_info(root, "latest", &k, t, sizeof t, NULL, NULL, 0, NULL); */
int32_t arca_link_info(arca_group_t *loc, const char *path, int32_t *kind, char *target,
                       size_t target_cap, size_t *target_needed, char *file, size_t file_cap,
                       size_t *file_needed);

/* Object references: *id = the identity of the object at `path` (what an
 * ARCA_DTYPE_REFERENCE element holds, 0 = null); arca_dereference opens
 * the object an id leads to: a group (*kind ARCA_KIND_GROUP, *group) or a
 * dataset (ARCA_KIND_DATASET, *dataset), the other set to NULL; for a
 * committed datatype (ARCA_KIND_DATATYPE) both are NULL.
 *   uint64_t id; arca_object_id(root, "runs/42", &id);
 *   int32_t k; arca_group_t *g; arca_dataset_t *d;
 *   arca_dereference(root, id, &k, &g, &d); */
int32_t arca_object_id(arca_group_t *loc, const char *path, uint64_t *id);
int32_t arca_dereference(arca_group_t *loc, uint64_t id, int32_t *kind, arca_group_t **group,
                         arca_dataset_t **dataset);

/* Open a group (a dataset there is ARCA_ERR_NOT_FOUND). Release *out with
 * arca_group_close.
 *   arca_group_t *det; arca_group_open(root, "run1/detector", &det); */
int32_t arca_group_open(arca_group_t *loc, const char *path, arca_group_t **out);

/* Open a group, creating it if missing (a dataset there is
 * ARCA_ERR_INVALID). `out` may be NULL. */
int32_t arca_group_require(arca_group_t *loc, const char *path, arca_group_t **out);

/* Free a group handle; NULL is a no-op. */
int32_t arca_group_close(arca_group_t *g);

/* Delete the link at `path`; the object goes, with everything below it,
 * when this was its last name. A soft or external link goes alone.
 *   arca_delete(root, "run1/scratch"); */
int32_t arca_delete(arca_group_t *loc, const char *path);

/* Move or rename an object (the destination's parent must exist).
 *   arca_move(root, "run1/raw", "archive/raw"); */
int32_t arca_move(arca_group_t *loc, const char *from, const char *to);

/* Number of direct members. */
int32_t arca_group_count(arca_group_t *g, uint64_t *n);

/* The index-th direct member in name order: name through a caller buffer
 * (required length), kind (ARCA_KIND_*, may be NULL). Past the end is
 * ARCA_ERR_NOT_FOUND. Each call lists the group: for large groups prefer
 * arca_group_iterate.
 *   char name[256]; int32_t kind;
 *   for (uint64_t i = 0; i < n; i++)
 *       arca_group_member(root, i, name, sizeof name, NULL, &kind); */
int32_t arca_group_member(arca_group_t *g, uint64_t index, char *name, size_t cap,
                          size_t *needed, int32_t *kind);

/* Call cb(name, kind, user) for each direct member in name order. Returns
 * ARCA_OK, an error, or the callback's first nonzero value.
 *   static int32_t print(const char *n, int32_t k, void *u) { puts(n); return 0; }
 *   arca_group_iterate(root, print, NULL); */
int32_t arca_group_iterate(arca_group_t *g, arca_iterate_fn cb, void *user);

/* Like arca_group_iterate, but every object below `g`, named by its path
 * relative to `g`, depth first in name order, each group before what lies
 * below it ("a", "a/x", "a/x/y", "b", "b/z"), as h5py's visit. */
int32_t arca_group_visit(arca_group_t *g, arca_iterate_fn cb, void *user);

/* *kind = ARCA_KIND_GROUP, ARCA_KIND_DATASET or ARCA_KIND_DATATYPE; nothing there is
 * ARCA_ERR_NOT_FOUND. */
int32_t arca_kind(arca_group_t *loc, const char *path, int32_t *kind);

/* *exists = 1 if anything is at `path`, else 0. */
int32_t arca_exists(arca_group_t *loc, const char *path, int32_t *exists);

/* The absolute path `g` was opened by (caller buffer, required length). */
int32_t arca_group_path(arca_group_t *g, char *buf, size_t cap, size_t *needed);

/* ---- datasets -------------------------------------------------------- */

/* Defaults for a contiguous native-order dataset: no maxdims, chunks,
 * filters or fill value. `dims` is borrowed, not copied.
 *   uint64_t dims[2] = {100, 200};
 *   arca_dataset_opts_t o;
 *   arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 2, dims); */
int32_t arca_dataset_opts_init(arca_dataset_opts_t *o, arca_dtype_t dtype, int32_t rank,
                               const uint64_t *dims);

/* *size = bytes per element of `dtype` (str_len for ARCA_DTYPE_STRING). */
int32_t arca_dtype_size(arca_dtype_t dtype, uint32_t str_len, size_t *size);

/* *size = bytes per element of a type string (checked).
 *   size_t s; arca_type_size("[3]<f4", &s);   (12) */
int32_t arca_type_size(const char *type_str, size_t *size);

/* Create a dataset (missing parent groups are created). `out` may be
 * NULL; otherwise release *out with arca_dataset_close.
 *   uint64_t dims[2] = {0, 1024}, maxd[2] = {ARCA_UNLIMITED, 1024}, ch[2] = {64, 1024};
 *   arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
 *   arca_dataset_opts_t o;
 *   arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT32, 2, dims);
 *   o.maxdims = maxd; o.chunks = ch; o.filters = fl; o.nfilters = 2;
 *   arca_dataset_t *ds; arca_dataset_create(root, "frames", &o, &ds); */
int32_t arca_dataset_create(arca_group_t *loc, const char *path,
                            const arca_dataset_opts_t *opts, arca_dataset_t **out);

/* Open a dataset (a group there is ARCA_ERR_NOT_FOUND). Release *out with
 * arca_dataset_close. */
int32_t arca_dataset_open(arca_group_t *loc, const char *path, arca_dataset_t **out);

/* *layout = how the elements are stored: ARCA_LAYOUT_COMPACT, _CONTIGUOUS,
 * _CHUNKED, _VIRTUAL or _EXTERNAL. */
int32_t arca_dataset_layout(arca_dataset_t *ds, int32_t *layout);

/* Free a dataset handle; NULL is a no-op. */
int32_t arca_dataset_close(arca_dataset_t *ds);

/* *rank = number of dimensions (0 for a scalar). */
int32_t arca_dataset_rank(arca_dataset_t *ds, int32_t *rank);

/* Extents into dims and, unless NULL, limits into maxdims (ARCA_UNLIMITED
 * for none); both hold `cap` entries, at least the rank (for a scalar
 * both may be NULL).
 *   uint64_t d[ARCA_MAX_RANK]; arca_dataset_dims(ds, d, NULL, ARCA_MAX_RANK); */
int32_t arca_dataset_dims(arca_dataset_t *ds, uint64_t *dims, uint64_t *maxdims, size_t cap);

/* Element type code, byte order on disk and bytes per element; each
 * pointer may be NULL. */
int32_t arca_dataset_dtype(arca_dataset_t *ds, arca_dtype_t *dtype, int32_t *order,
                           size_t *elem_size);

/* Element type as a numpy-style string ("<f8", "|S16", "vlen:str", ...)
 * through a caller buffer (required length). */
int32_t arca_dataset_dtype_str(arca_dataset_t *ds, char *buf, size_t cap, size_t *needed);

/* *chunked = 1 and the chunk shape into `chunks` (cap >= rank entries;
 * may be NULL), or *chunked = 0 for contiguous storage. */
int32_t arca_dataset_chunks(arca_dataset_t *ds, uint64_t *chunks, size_t cap, int32_t *chunked);

/* The filter pipeline into `out` (cap entries; NULL only counts) and its
 * length into *n (may be NULL). */
int32_t arca_dataset_filters(arca_dataset_t *ds, arca_filter_t *out, size_t cap, size_t *n);

/* The fill value, one element in native order; buf_size >= element size. */
int32_t arca_dataset_fill_value(arca_dataset_t *ds, void *buf, size_t buf_size);

/* Bytes of file space holding the elements (after compression). */
int32_t arca_dataset_storage_size(arca_dataset_t *ds, uint64_t *bytes);

/* Read a hyperslab into `buf`: packed, row-major, native byte order.
 * start/count/step have one entry per dimension; NULL start = zeros, NULL
 * step = ones, NULL count = to the end. buf_size must be at least
 * product(count) * element size. Out of bounds is ARCA_ERR_INVALID;
 * variable-length datasets are ARCA_ERR_UNSUPPORTED.
 *   uint64_t start[2] = {10, 0}, count[2] = {5, 100}, step[2] = {2, 1};
 *   float out[500];
 *   arca_dataset_read(ds, start, count, step, out, sizeof out); */
int32_t arca_dataset_read(arca_dataset_t *ds, const uint64_t *start, const uint64_t *count,
                          const uint64_t *step, void *buf, size_t buf_size);

/* Write a hyperslab from `buf`; arguments as for arca_dataset_read.
 *   uint64_t start[2] = {0, 0}, count[2] = {1, 100}; float row[100];
 *   arca_dataset_write(ds, start, count, NULL, row, sizeof row); */
int32_t arca_dataset_write(arca_dataset_t *ds, const uint64_t *start, const uint64_t *count,
                           const uint64_t *step, const void *buf, size_t buf_size);

/* Types that hold variable-length values (a compound with string or
 * sequence members such as struct(24){"id"@0:<u8,"name"@8:vlen:str}, or a
 * variable-length type) cross as one buffer, the "rows" form: the selected
 * elements, row-major, numbers in native order, each variable-length
 * member a record of two little-endian uint64_t (offset, length) in bytes
 * of the values that follow the elements. arca_dataset_read/_write refuse
 * these types with ARCA_ERR_UNSUPPORTED.
 *
 * Write: arguments as for arca_dataset_write; a record outside the
 * values, items not whole or not UTF-8 for strings, or records sharing
 * bytes are ARCA_ERR_INVALID.
 *   unsigned char row[27] = {7}; uint64_t rec[2] = {0, 3}, one = 1;
 *   memcpy(row + 8, rec, 16); memcpy(row + 24, "Ada", 3);
 *   arca_dataset_write_rows(ds, NULL, &one, NULL, row, sizeof row); */
int32_t arca_dataset_write_rows(arca_dataset_t *ds, const uint64_t *start, const uint64_t *count,
                                const uint64_t *step, const void *rows, size_t rows_size);

/* Read: a buffer the library allocates (values packed in element order);
 * free it with arca_buffer_free(*rows, *rows_size). *rows is NULL on failure.
 *   void *rows; size_t n;
 *   if (arca_dataset_read_rows(ds, NULL, NULL, NULL, &rows, &n) == ARCA_OK)
 *       arca_buffer_free(rows, n); */
int32_t arca_dataset_read_rows(arca_dataset_t *ds, const uint64_t *start, const uint64_t *count,
                               const uint64_t *step, void **rows, size_t *rows_size);

/* Free a buffer from arca_dataset_read_rows, with its size; NULL is a no-op. */
void arca_buffer_free(void *p, size_t size);

/* Change the extents (rank entries, within maxdims; chunked datasets
 * only). Growing shows the fill value; shrinking drops elements.
 *   uint64_t nd[2] = {128, 1024}; arca_dataset_resize(ds, nd); */
int32_t arca_dataset_resize(arca_dataset_t *ds, const uint64_t *dims);

/* The absolute path `ds` was opened by (caller buffer, required length). */
int32_t arca_dataset_path(arca_dataset_t *ds, char *buf, size_t cap, size_t *needed);

/* ---- chunks written by other processes -------------------------------- */
/* The pieces of a parallel write (see arca_mpi.h): processes compress
 * their slabs of a chunked dataset themselves and write the chunks'
 * bytes through their own descriptors into space that the process holding
 * the file reserved; it then seals them into the dataset's index. In
 * short, on the holder:
 *   arca_file_begin_transaction(f);
 *   arca_dataset_reserve_chunks(ds, nchunks * chunk_bytes, &at);
 *   ... writers: arca_encode_slab[_desc], arca_write_out at `at` + ...
 *   arca_dataset_seal_chunks(ds, written, n);
 *   ... arca_dataset_write of the parts of chunks no writer had whole ...
 *   arca_file_end_transaction(f, 1); */

/* Reserve nbytes of the file for chunks of `ds` that others write, inside
 * a transaction: *addr is where the region begins. Writers put each chunk's
 * stored bytes anywhere inside without overlaps; a filtered chunk never
 * stores more than its raw size. Outside a transaction, a dataset that is
 * not chunked or 0 bytes: ARCA_ERR_INVALID.
 *   uint64_t at; arca_dataset_reserve_chunks(ds, 4 * 16 * 8 * sizeof(float), &at); */
int32_t arca_dataset_reserve_chunks(arca_dataset_t *ds, uint64_t nbytes, uint64_t *addr);

/* Index the n chunks written into the space reserved for `ds`, replacing
 * any stored before, and free the reserved bytes no chunk holds; call it
 * once, with every chunk, before the transaction ends. A chunk outside the
 * reserved space, overlapping another, named twice or off the chunk grid
 * is ARCA_ERR_INVALID, and nothing is indexed.
 *   uint64_t off[2] = {0, 0};
 *   arca_written_chunk_t w = {off, at, len, mask, crc};
 *   arca_dataset_seal_chunks(ds, &w, 1); */
int32_t arca_dataset_seal_chunks(arca_dataset_t *ds, const arca_written_chunk_t *chunks,
                                 size_t n);

/* Cut `slab`, the elements of the box start..start+count of the chunked
 * dataset `ds` (native order, row-major, exactly slab_size bytes), into
 * the chunks it covers whole, each through the dataset's filters, and name
 * the parts of chunks it covers only in part. A chunk running past the
 * extent is whole when the slab covers its part inside (the rest is the
 * fill value). Nothing is written. A box outside the extent, a wrong
 * slab_size or a contiguous dataset is ARCA_ERR_INVALID. Free *out with
 * arca_slab_free; it is NULL on failure.
 *   uint64_t start[2] = {16, 0}, count[2] = {32, 24};
 *   arca_slab_t *b; arca_encode_slab(ds, start, count, rows, sizeof rows, &b); */
int32_t arca_encode_slab(arca_dataset_t *ds, const uint64_t *start, const uint64_t *count,
                          const void *slab, size_t slab_size, arca_slab_t **out);

/* arca_encode_slab for a process without the file: the dataset is
 * described by `desc`, as the holder reads it (arca_dataset_dtype_str,
 * _dims, _chunks, _filters, _fill_value).
 *   uint64_t dims[2] = {100, 24}, ch[2] = {16, 8}; float fill = -1;
 *   arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
 *   arca_slab_desc_t d = {"<f4", 4, 2, dims, ch, fl, 2, &fill, sizeof fill};
 *   arca_slab_t *b; arca_encode_slab_desc(&d, start, count, rows, sizeof rows, &b); */
int32_t arca_encode_slab_desc(const arca_slab_desc_t *desc, const uint64_t *start,
                               const uint64_t *count, const void *slab, size_t slab_size,
                               arca_slab_t **out);

/* The whole chunks' stored bytes, back to back in chunk order: *bytes
 * (NULL when none; owned by the slab) and *len (may be NULL).
 *   const void *p; size_t n; arca_slab_bytes(b, &p, &n); */
int32_t arca_slab_bytes(const arca_slab_t *b, const void **bytes, size_t *len);

/* Number of whole chunks in the slab. */
int32_t arca_slab_nchunks(const arca_slab_t *b, size_t *n);

/* Whole chunk i (grid order; its bytes follow chunk i-1's): first element
 * into offset (rank entries), stored length, filter mask and CRC32C; each
 * out-pointer may be NULL. Past the end: ARCA_ERR_INVALID.
 *   uint64_t off[2], len; uint32_t mask, crc;
 *   arca_slab_chunk(b, 0, off, &len, &mask, &crc); */
int32_t arca_slab_chunk(const arca_slab_t *b, size_t i, uint64_t *offset, uint64_t *len,
                         uint32_t *mask, uint32_t *crc);

/* Number of parts of chunks the slab covers only in part. */
int32_t arca_slab_npartial(const arca_slab_t *b, size_t *n);

/* Part i as a box in the dataset's coordinates (rank entries each; either
 * may be NULL); its elements are those of the slab there.
 *   uint64_t s[2], c[2]; arca_slab_partial(b, 0, s, c); */
int32_t arca_slab_partial(const arca_slab_t *b, size_t i, uint64_t *start, uint64_t *count);

/* Free a slab; NULL is a no-op. Pointers from arca_slab_bytes die with it. */
void arca_slab_free(arca_slab_t *b);

/* Write len bytes at byte `at` of the file open as `fd` (all of them) and
 * start their writeback without waiting; the descriptor stays yours. A
 * failed write is ARCA_ERR_IO.
 *   int fd = open("run.arca", O_WRONLY);
 *   arca_write_out(fd, p, n, at); */
int32_t arca_write_out(int fd, const void *buf, size_t len, uint64_t at);

/* ---- attributes ------------------------------------------------------ */

/* The attributes of a group / dataset; release *out with arca_attrs_close.
 *   arca_attrs_t *a; arca_group_attrs(root, &a); */
int32_t arca_group_attrs(arca_group_t *g, arca_attrs_t **out);
int32_t arca_dataset_attrs(arca_dataset_t *ds, arca_attrs_t **out);

/* Free an attributes handle; NULL is a no-op. */
int32_t arca_attrs_close(arca_attrs_t *a);

/* Create or replace an attribute of `rank` dimensions `shape` (0 and NULL
 * for a scalar), elements in native order in `data`, exactly data_size
 * bytes, stored in byte order `order`. For ARCA_DTYPE_STRING the element
 * length is data_size / number of elements.
 *   double gain = 1.5;
 *   arca_attr_write(a, "gain", ARCA_DTYPE_FLOAT64, ARCA_ORDER_NATIVE, 0, NULL, &gain, sizeof gain);
 *   int32_t roi[4] = {0, 0, 64, 64}; uint64_t n = 4;
 *   arca_attr_write(a, "roi", ARCA_DTYPE_INT32, ARCA_ORDER_BIG, 1, &n, roi, sizeof roi); */
int32_t arca_attr_write(arca_attrs_t *a, const char *name, arca_dtype_t dtype, int32_t order,
                        int32_t rank, const uint64_t *shape, const void *data, size_t data_size);

/* Create or replace a scalar string attribute.
 *   arca_attr_write_string(a, "units", "m/s"); */
int32_t arca_attr_write_string(arca_attrs_t *a, const char *name, const char *value);

/* Create or replace an attribute of any fixed-size type given as a type
 * string; `data` holds the elements in native byte order, exactly
 * data_size bytes.
 *   struct { double t; int32_t n; int32_t pad; } row = {1.5, 7, 0};
 *   arca_attr_write_typed(a, "row", "struct(16){\"t\"@0:<f8,\"n\"@8:<i4}", 0, NULL,
 *                         &row, sizeof row); */
int32_t arca_attr_write_typed(arca_attrs_t *a, const char *name, const char *type_str,
                              int32_t rank, const uint64_t *shape, const void *data,
                              size_t data_size);

/* The type string of an attribute through a caller buffer (required
 * length in *needed). */
int32_t arca_attr_dtype_str(arca_attrs_t *a, const char *name, char *buf, size_t cap,
                            size_t *needed);

/* Type and shape of an attribute (missing: ARCA_ERR_NOT_FOUND).
 *   arca_attr_info_t i; arca_attr_info(a, "roi", &i);
 *   int32_t *roi = malloc(i.nbytes); arca_attr_read(a, "roi", roi, i.nbytes); */
int32_t arca_attr_info(arca_attrs_t *a, const char *name, arca_attr_info_t *info);

/* Read an attribute's elements in native order; buf_size >= nbytes. */
int32_t arca_attr_read(arca_attrs_t *a, const char *name, void *buf, size_t buf_size);

/* Read a string attribute into a caller buffer, NUL-terminated (required
 * length). A non-string attribute is ARCA_ERR_INVALID.
 *   char units[64]; arca_attr_read_string(a, "units", units, sizeof units, NULL); */
int32_t arca_attr_read_string(arca_attrs_t *a, const char *name, char *buf, size_t cap,
                              size_t *needed);

/* Read a string attribute into a new string that the caller frees with
 * arca_string_free (not free). *out is NULL on failure.
 *   char *s; if (arca_attr_read_string_alloc(a, "units", &s) == ARCA_OK) {
 *       puts(s); arca_string_free(s); } */
int32_t arca_attr_read_string_alloc(arca_attrs_t *a, const char *name, char **out);

/* Free a string from arca_attr_read_string_alloc; NULL is a no-op. */
void arca_string_free(char *s);

/* Delete an attribute (missing: ARCA_ERR_NOT_FOUND). */
int32_t arca_attr_delete(arca_attrs_t *a, const char *name);

/* Rename an attribute (existing `to`: ARCA_ERR_EXISTS). */
int32_t arca_attr_rename(arca_attrs_t *a, const char *from, const char *to);

/* *exists = 1 if the attribute exists, else 0. */
int32_t arca_attr_exists(arca_attrs_t *a, const char *name, int32_t *exists);

/* Number of attributes. */
int32_t arca_attr_count(arca_attrs_t *a, uint64_t *n);

/* Name of the index-th attribute, in creation order where the object tracks
 * it (arca_group_create_ordered, track_order), else in name order (caller buffer, required
 * length; past the end: ARCA_ERR_NOT_FOUND).
 *   char name[256];
 *   for (uint64_t i = 0; i < n; i++) arca_attr_name(a, i, name, sizeof name, NULL); */
int32_t arca_attr_name(arca_attrs_t *a, uint64_t index, char *buf, size_t cap, size_t *needed);

#ifdef __cplusplus
}
#endif

#endif /* ARCA_H */
