/*
 * arca_mpi.c - collective writes of one arca file from every rank of an
 * MPI job (include/arca_mpi.h), on top of libarca's C API.
 *
 * Rank 0 holds the file through arca; every rank of a writable file has
 * an O_WRONLY descriptor for the chunks it compresses itself, and one MPI
 * window (an int64 on rank 0) is the counter that packs them into the room
 * rank 0 reserved. Every failure is agreed on by all ranks before the next
 * step (agree()), so that no rank goes on alone and rank 0 can roll back.
 */
#define _POSIX_C_SOURCE 200809L

#include "arca_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Raw bytes a rank compresses before it writes them out: big enough that a
 * write is one large syscall, small enough to overlap the other ranks. */
#define SLAB_BYTES ((size_t)8 << 20)
/* The largest message sent at once (MPI counts are int). */
#define PIECE ((size_t)1 << 30)
/* Filter stages a dataset can have in a description. */
#define MAX_FILTERS 16
/* One rank's message in an agreement. */
#define MSG_LEN 480

enum { TAG_HEAD = 11, TAG_RECS, TAG_BOX, TAG_DATA, TAG_STATUS };

struct arca_mpi_file {
    MPI_Comm comm;
    int rank, size;
    arca_file_t *f;     /* rank 0 */
    arca_group_t *root; /* rank 0 */
    int writable;
    int fd; /* every rank of a writable file */
    MPI_Win win;
    int has_win;
    size_t slab_bytes;
};

/* ---- errors --------------------------------------------------------- */

static _Thread_local char last_error[8192];

const char *arca_mpi_last_error(void) { return last_error; }

/* A rank's outcome of one step. */
typedef struct {
    int32_t rc;
    char msg[MSG_LEN];
} status_t;

static void fail(status_t *st, int32_t rc, const char *fmt, ...) {
    if (st->rc != ARCA_OK) return; /* the first failure is the one to tell */
    st->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
}

/* Record a failed arca call with its message. */
static int32_t check(status_t *st, int32_t rc) {
    if (rc != ARCA_OK) fail(st, rc, "%s", arca_last_error());
    return rc;
}

static void append(size_t *at, const char *fmt, ...) {
    if (*at >= sizeof last_error - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_error + *at, sizeof last_error - *at, fmt, ap);
    va_end(ap);
    if (n > 0) *at += (size_t)n;
    if (*at >= sizeof last_error - 1) {
        *at = sizeof last_error - 1;
        memcpy(last_error + sizeof last_error - 4, "...", 4);
    }
}

/* Every rank learns whether any failed; if so, every rank returns the code
 * of the lowest failing rank and has every failing rank's message. */
static int32_t agree(MPI_Comm comm, const status_t *st, const char *what) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = st->rc != ARCA_OK ? rank : size, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return ARCA_OK;
    status_t *all = malloc((size_t)size * sizeof *all);
    if (!all) MPI_Abort(comm, 1);
    MPI_Allgather(st, (int)sizeof *st, MPI_BYTE, all, (int)sizeof *st, MPI_BYTE, comm);
    size_t at = 0;
    append(&at, "%s failed: ", what);
    const char *sep = "";
    for (int r = 0; r < size; r++) {
        if (all[r].rc == ARCA_OK) continue;
        all[r].msg[MSG_LEN - 1] = 0;
        append(&at, "%srank %d: %s", sep, r, all[r].msg);
        sep = "; ";
    }
    int32_t rc = all[first].rc;
    free(all);
    return rc;
}

/* A failure before any communication (a NULL handle): this rank only. */
static int32_t local_fail(int32_t rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- messages of any size ------------------------------------------- */

static void send_bytes(const void *p, size_t n, int to, int tag, MPI_Comm comm) {
    const char *c = p;
    while (n) {
        size_t k = n < PIECE ? n : PIECE;
        MPI_Send(c, (int)k, MPI_BYTE, to, tag, comm);
        c += k;
        n -= k;
    }
}

static void recv_bytes(void *p, size_t n, int from, int tag, MPI_Comm comm) {
    char *c = p;
    while (n) {
        size_t k = n < PIECE ? n : PIECE;
        MPI_Recv(c, (int)k, MPI_BYTE, from, tag, comm, MPI_STATUS_IGNORE);
        c += k;
        n -= k;
    }
}

/* ---- small helpers -------------------------------------------------- */

/* a * b, or 0 with *over set when it overflows. */
static uint64_t mul(uint64_t a, uint64_t b, int *over) {
    if (a && b > UINT64_MAX / a) {
        *over = 1;
        return 0;
    }
    return a * b;
}

/* Bytes of a box of `count` elements of `elem` bytes; -1 if too large. */
static int box_bytes(int rank, const uint64_t *count, uint64_t elem, size_t *out) {
    int over = 0;
    uint64_t n = elem;
    for (int i = 0; i < rank; i++) n = mul(n, count[i], &over);
    if (over || n > (uint64_t)SIZE_MAX / 2) return -1;
    *out = (size_t)n;
    return 0;
}

static void fmt_u64s(char *buf, size_t cap, const uint64_t *v, int n) {
    size_t at = 0;
    at += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%llu", i ? ", " : "",
                               (unsigned long long)v[i]);
    if (at < cap) snprintf(buf + at, cap - at, "]");
}

/* Copy the box `s`..`s + c` (dataset coordinates) out of local data holding
 * the box `bs`..`bs + bc`, row-major, into `out`. */
static void copy_out(int rank, size_t elem, const unsigned char *local, const uint64_t *bs,
                     const uint64_t *bc, const uint64_t *s, const uint64_t *c,
                     unsigned char *out) {
    if (rank == 0) {
        memcpy(out, local, elem);
        return;
    }
    for (int i = 0; i < rank; i++)
        if (c[i] == 0) return;
    size_t run = elem * (size_t)c[rank - 1];
    uint64_t idx[ARCA_MAX_RANK] = {0}; /* position in c, last axis fixed at 0 */
    for (;;) {
        size_t from = 0;
        for (int i = 0; i < rank; i++) from = from * (size_t)bc[i] + (size_t)(s[i] - bs[i] + idx[i]);
        memcpy(out, local + from * elem, run);
        out += run;
        int i = rank - 2;
        for (; i >= 0; i--) {
            if (++idx[i] < c[i]) break;
            idx[i] = 0;
        }
        if (i < 0) return;
    }
}

/* How many chunks of the grid the box covers whole (a chunk running past
 * the extent counts when its part inside is covered). */
static uint64_t whole_chunks(int rank, const uint64_t *start, const uint64_t *count,
                             const uint64_t *dims, const uint64_t *chunks) {
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        uint64_t a = start[i], c = count[i], d = dims[i], k = chunks[i];
        if (c == 0) return 0;
        uint64_t first = (a + k - 1) / k;
        uint64_t end = a + c;
        uint64_t last = end < d ? end / k : (d + k - 1) / k;
        n *= last > first ? last - first : 0;
    }
    return n;
}

/* A growable byte buffer; an allocation failure aborts the job. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} buf_t;

static void *put_bytes(buf_t *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "arca_mpi: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        b->p = p;
        b->cap = cap;
    }
    void *at = b->p + b->len;
    if (src) memcpy(at, src, n);
    b->len += n;
    return at;
}

/* ---- the file ------------------------------------------------------- */

static void release(arca_mpi_file_t *m) {
    if (m->fd >= 0) close(m->fd);
    if (m->has_win) MPI_Win_free(&m->win);
    arca_group_close(m->root);
    arca_file_close(m->f);
    MPI_Comm_free(&m->comm);
    free(m);
}

int32_t arca_mpi_file_open(const char *path, const char *mode, MPI_Comm comm,
                           arca_mpi_file_t **out) {
    if (out) *out = NULL;
    arca_mpi_file_t *m = calloc(1, sizeof *m);
    if (!m) MPI_Abort(comm, 1);
    m->fd = -1;
    m->slab_bytes = SLAB_BYTES;
    MPI_Comm_dup(comm, &m->comm);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    status_t st = {ARCA_OK, ""};
    if (!out) fail(&st, ARCA_ERR_NULL, "out is NULL");
    if (m->rank == 0 && st.rc == ARCA_OK && check(&st, arca_file_open(path, mode, &m->f)) == ARCA_OK &&
        check(&st, arca_file_root(m->f, &m->root)) == ARCA_OK)
        check(&st, arca_file_is_writable(m->f, &m->writable));
    int32_t rc = agree(m->comm, &st, "open");
    if (rc != ARCA_OK) {
        release(m);
        return rc;
    }
    /* Rank 0's path and whether it may write. */
    uint64_t head[2] = {(uint64_t)m->writable, m->rank == 0 ? strlen(path) + 1 : 0};
    MPI_Bcast(head, 2, MPI_UINT64_T, 0, m->comm);
    m->writable = (int)head[0];
    if (m->writable) {
        char *p = malloc(head[1]);
        if (!p) MPI_Abort(m->comm, 1);
        if (m->rank == 0) memcpy(p, path, head[1]);
        MPI_Bcast(p, (int)head[1], MPI_CHAR, 0, m->comm);
        m->fd = open(p, O_WRONLY | O_CLOEXEC);
        if (m->fd < 0) fail(&st, ARCA_ERR_IO, "opening %s for writing: %s", p, strerror(errno));
        free(p);
        rc = agree(m->comm, &st, "open");
        if (rc != ARCA_OK) {
            release(m);
            return rc;
        }
        void *base = NULL;
        MPI_Win_allocate(m->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0, (int)sizeof(int64_t),
                         MPI_INFO_NULL, m->comm, &base, &m->win);
        m->has_win = 1;
        if (m->rank == 0) {
            /* Only differences of the counter matter; start it anywhere. */
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, m->win);
            *(int64_t *)base = 0;
            MPI_Win_unlock(0, m->win);
        }
        MPI_Barrier(m->comm);
    }
    *out = m;
    return ARCA_OK;
}

int32_t arca_mpi_file_close(arca_mpi_file_t *m) {
    if (!m) return ARCA_OK;
    status_t st = {ARCA_OK, ""};
    if (m->fd >= 0 && close(m->fd) != 0)
        fail(&st, ARCA_ERR_IO, "closing the descriptor: %s", strerror(errno));
    m->fd = -1;
    if (m->has_win) MPI_Win_free(&m->win); /* collective: every rank is done */
    m->has_win = 0;
    if (m->rank == 0) {
        check(&st, arca_group_close(m->root));
        m->root = NULL;
        check(&st, arca_file_close(m->f));
        m->f = NULL;
    }
    int32_t rc = agree(m->comm, &st, "close");
    release(m);
    return rc;
}

arca_file_t *arca_mpi_file_arca(arca_mpi_file_t *m) { return m ? m->f : NULL; }

int32_t arca_mpi_file_set_slab_bytes(arca_mpi_file_t *m, size_t bytes) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    if (bytes == 0) return local_fail(ARCA_ERR_INVALID, "slabs of 0 bytes");
    m->slab_bytes = bytes;
    return ARCA_OK;
}

/* Add n to the shared counter; the value before. */
static int64_t counter_add(arca_mpi_file_t *m, int64_t n) {
    int64_t got = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, m->win);
    MPI_Fetch_and_op(&n, &got, MPI_INT64_T, 0, 0, MPI_SUM, m->win);
    MPI_Win_unlock(0, m->win);
    return got;
}

/* ---- metadata, on rank 0 -------------------------------------------- */

/* Open the group or dataset at `path` for its attributes. */
static int32_t open_attrs(arca_mpi_file_t *m, const char *path, arca_attrs_t **a) {
    if (!path) return local_fail(ARCA_ERR_NULL, "obj_path is NULL");
    if (strcmp(path, "/") == 0 || path[0] == 0) return arca_group_attrs(m->root, a);
    int32_t kind, rc = arca_kind(m->root, path, &kind);
    if (rc != ARCA_OK) return rc;
    if (kind == ARCA_KIND_DATASET) {
        arca_dataset_t *ds;
        rc = arca_dataset_open(m->root, path, &ds);
        if (rc == ARCA_OK) rc = arca_dataset_attrs(ds, a);
        arca_dataset_close(ds);
        return rc;
    }
    arca_group_t *g;
    rc = arca_group_open(m->root, path, &g);
    if (rc == ARCA_OK) rc = arca_group_attrs(g, a);
    arca_group_close(g);
    return rc;
}

int32_t arca_mpi_group_create(arca_mpi_file_t *m, const char *path) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    status_t st = {ARCA_OK, ""};
    if (m->rank == 0) check(&st, arca_group_create(m->root, path, NULL));
    return agree(m->comm, &st, "group_create");
}

int32_t arca_mpi_dataset_create(arca_mpi_file_t *m, const char *path,
                                const arca_dataset_opts_t *opts) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    status_t st = {ARCA_OK, ""};
    if (m->rank == 0) check(&st, arca_dataset_create(m->root, path, opts, NULL));
    return agree(m->comm, &st, "dataset_create");
}

int32_t arca_mpi_dataset_resize(arca_mpi_file_t *m, const char *path, const uint64_t *dims) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    status_t st = {ARCA_OK, ""};
    if (m->rank == 0) {
        arca_dataset_t *ds = NULL;
        if (check(&st, arca_dataset_open(m->root, path, &ds)) == ARCA_OK)
            check(&st, arca_dataset_resize(ds, dims));
        arca_dataset_close(ds);
    }
    return agree(m->comm, &st, "dataset_resize");
}

int32_t arca_mpi_attr_write(arca_mpi_file_t *m, const char *obj_path, const char *name,
                            arca_dtype_t dtype, int32_t order, int32_t rank,
                            const uint64_t *shape, const void *data, size_t data_size) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    status_t st = {ARCA_OK, ""};
    if (m->rank == 0) {
        arca_attrs_t *a = NULL;
        if (check(&st, open_attrs(m, obj_path, &a)) == ARCA_OK)
            check(&st, arca_attr_write(a, name, dtype, order, rank, shape, data, data_size));
        arca_attrs_close(a);
    }
    return agree(m->comm, &st, "attr_write");
}

int32_t arca_mpi_attr_write_string(arca_mpi_file_t *m, const char *obj_path, const char *name,
                                   const char *value) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    status_t st = {ARCA_OK, ""};
    if (m->rank == 0) {
        arca_attrs_t *a = NULL;
        if (check(&st, open_attrs(m, obj_path, &a)) == ARCA_OK)
            check(&st, arca_attr_write_string(a, name, value));
        arca_attrs_close(a);
    }
    return agree(m->comm, &st, "attr_write_string");
}

/* ---- what every rank knows of a dataset ----------------------------- */

/* Fixed part, broadcast from rank 0; the fill value and the type string
 * follow it. */
typedef struct {
    int32_t rc;
    int32_t rank;
    int32_t chunked;
    int32_t direct; /* ranks compress and write their whole chunks */
    uint64_t elem;
    uint64_t dims[ARCA_MAX_RANK];
    uint64_t chunks[ARCA_MAX_RANK];
    uint32_t nfilters;
    arca_filter_t filters[MAX_FILTERS];
    uint64_t fill_size;
    uint64_t type_len; /* with its NUL */
} head_t;

typedef struct {
    head_t h;
    unsigned char *fill;
    char *type;
} desc_t;

/* Rank 0 opens the dataset and reads what the others need. */
static void describe_root(arca_mpi_file_t *m, const char *path, int for_write,
                          arca_dataset_t **ds, desc_t *d, status_t *st) {
    head_t *h = &d->h;
    if (for_write && !m->writable) {
        fail(st, ARCA_ERR_READ_ONLY, "the file is open read-only");
        return;
    }
    if (check(st, arca_dataset_open(m->root, path, ds)) != ARCA_OK) return;
    size_t elem = 0, nf = 0;
    if (check(st, arca_dataset_rank(*ds, &h->rank)) || check(st, arca_dataset_dtype(*ds, NULL, NULL, &elem)) ||
        check(st, arca_dataset_dims(*ds, h->dims, NULL, ARCA_MAX_RANK)) ||
        check(st, arca_dataset_chunks(*ds, h->chunks, ARCA_MAX_RANK, &h->chunked)))
        return;
    h->elem = elem;
    if (!for_write || !h->chunked) return;
    if (check(st, arca_dataset_filters(*ds, NULL, 0, &nf))) return;
    h->direct = nf <= MAX_FILTERS;
    if (h->direct && check(st, arca_dataset_filters(*ds, h->filters, MAX_FILTERS, &nf))) return;
    h->nfilters = (uint32_t)nf;
    for (size_t i = 0; h->direct && i < nf; i++)
        if (h->filters[i].id == ARCA_FILTER_HDF5) h->direct = 0; /* kept as stored: rank 0 */
    if (!h->direct) return;
    size_t need = 0;
    if (check(st, arca_dataset_dtype_str(*ds, NULL, 0, &need))) return;
    d->type = malloc(need);
    d->fill = malloc(elem ? elem : 1);
    if (!d->type || !d->fill) MPI_Abort(m->comm, 1);
    if (check(st, arca_dataset_dtype_str(*ds, d->type, need, NULL)) ||
        check(st, arca_dataset_fill_value(*ds, d->fill, elem)))
        return;
    h->type_len = need;
    h->fill_size = elem;
}

/* Every rank gets rank 0's description; a failure there fails the call
 * on every rank. On rank 0, *ds is the open dataset. */
static int32_t describe(arca_mpi_file_t *m, const char *path, int for_write, arca_dataset_t **ds,
                        desc_t *d, const char *what) {
    status_t st = {ARCA_OK, ""};
    memset(d, 0, sizeof *d);
    *ds = NULL;
    if (m->rank == 0) {
        describe_root(m, path, for_write, ds, d, &st);
        d->h.rc = st.rc;
        if (st.rc != ARCA_OK) {
            d->h.type_len = d->h.fill_size = 0;
        }
    }
    MPI_Bcast(&d->h, (int)sizeof d->h, MPI_BYTE, 0, m->comm);
    if (d->h.rc != ARCA_OK) {
        arca_dataset_close(*ds);
        *ds = NULL;
        free(d->fill);
        free(d->type);
        d->fill = NULL;
        d->type = NULL;
        return agree(m->comm, &st, what);
    }
    if (d->h.fill_size) {
        if (m->rank != 0 && !(d->fill = malloc(d->h.fill_size))) MPI_Abort(m->comm, 1);
        MPI_Bcast(d->fill, (int)d->h.fill_size, MPI_BYTE, 0, m->comm);
    }
    if (d->h.type_len) {
        if (m->rank != 0 && !(d->type = malloc(d->h.type_len))) MPI_Abort(m->comm, 1);
        MPI_Bcast(d->type, (int)d->h.type_len, MPI_CHAR, 0, m->comm);
    }
    return ARCA_OK;
}

static void desc_free(arca_dataset_t *ds, desc_t *d) {
    arca_dataset_close(ds);
    free(d->fill);
    free(d->type);
}

/* Check a rank's box against the extent; its bytes into *bytes. */
static void check_box(const head_t *h, const uint64_t *start, const uint64_t *count,
                      const void *buf, size_t *bytes, status_t *st) {
    *bytes = 0;
    if (h->rank > 0 && (!start || !count)) {
        fail(st, ARCA_ERR_NULL, "%s is NULL", start ? "count" : "start");
        return;
    }
    for (int i = 0; i < h->rank; i++) {
        if (start[i] > h->dims[i] || count[i] > h->dims[i] - start[i]) {
            char s[256], c[256], d[256];
            fmt_u64s(s, sizeof s, start, h->rank);
            fmt_u64s(c, sizeof c, count, h->rank);
            fmt_u64s(d, sizeof d, h->dims, h->rank);
            fail(st, ARCA_ERR_INVALID, "the box at %s of %s leaves the extent %s", s, c, d);
            return;
        }
    }
    if (box_bytes(h->rank, count, h->elem, bytes) != 0) {
        fail(st, ARCA_ERR_INVALID, "the box is too large for memory");
        return;
    }
    if (*bytes && !buf) fail(st, ARCA_ERR_NULL, "the buffer is NULL");
}

/* ---- writes --------------------------------------------------------- */

/* What a rank sends rank 0 after it wrote its chunks: the chunks (each
 * rank + 3 uint64: offset, addr, len, mask << 32 | crc) and the parts of
 * chunks it covers in part (each a box, then its elements). */
typedef struct {
    buf_t recs;
    uint64_t nrecs;
    buf_t parts; /* per part: start, count (rank uint64 each), elements */
    uint64_t nparts;
    /* Local data that goes whole to rank 0 (no copy). */
    const void *whole;
} out_t;

static void add_part(out_t *o, int rank, size_t elem, const unsigned char *local,
                     const uint64_t *bs, const uint64_t *bc, const uint64_t *s,
                     const uint64_t *c) {
    put_bytes(&o->parts, s, (size_t)rank * 8);
    put_bytes(&o->parts, c, (size_t)rank * 8);
    size_t n = elem;
    for (int i = 0; i < rank; i++) n *= (size_t)c[i];
    unsigned char *at = put_bytes(&o->parts, NULL, n);
    copy_out(rank, elem, local, bs, bc, s, c, at);
    o->nparts++;
}

/* Step 3 for one rank: cut the local data into slabs of whole chunk rows,
 * compress each and write it into the room at a place taken from the
 * counter. `share` is the most this rank's chunks may take. */
static void write_slabs(arca_mpi_file_t *m, const desc_t *d, const uint64_t *start,
                        const uint64_t *count, const unsigned char *local, uint64_t addr,
                        int64_t base, uint64_t share, out_t *o, status_t *st) {
    const head_t *h = &d->h;
    int rank = h->rank;
    for (int i = 0; i < rank; i++)
        if (count[i] == 0) return;
    arca_slab_desc_t bd = {d->type, (size_t)h->elem, rank, h->dims, h->chunks, h->filters,
                            h->nfilters, d->fill, (size_t)h->fill_size};
    size_t row = (size_t)h->elem;
    for (int i = 1; i < rank; i++) row *= (size_t)count[i];
    uint64_t c0 = h->chunks[0];
    uint64_t per = row && c0 ? m->slab_bytes / (row * c0) : 1;
    uint64_t rows = (per ? per : 1) * c0;
    uint64_t lo = start[0], hi = start[0] + count[0], used = 0;
    for (uint64_t a = lo; a < hi && st->rc == ARCA_OK;) {
        uint64_t b = (a / rows + 1) * rows;
        if (b > hi) b = hi;
        uint64_t s[ARCA_MAX_RANK], c[ARCA_MAX_RANK];
        memcpy(s, start, (size_t)rank * 8);
        memcpy(c, count, (size_t)rank * 8);
        s[0] = a;
        c[0] = b - a;
        arca_slab_t *blk = NULL;
        const unsigned char *slab = local + (size_t)(a - lo) * row;
        if (check(st, arca_encode_slab_desc(&bd, s, c, slab, (size_t)(b - a) * row, &blk)) != ARCA_OK)
            break;
        size_t np = 0, nc = 0, len = 0;
        const void *bytes = NULL;
        arca_slab_npartial(blk, &np);
        for (size_t i = 0; i < np; i++) {
            uint64_t ps[ARCA_MAX_RANK], pc[ARCA_MAX_RANK];
            arca_slab_partial(blk, i, ps, pc);
            add_part(o, rank, (size_t)h->elem, local, start, count, ps, pc);
        }
        arca_slab_nchunks(blk, &nc);
        arca_slab_bytes(blk, &bytes, &len);
        if (nc) {
            used += len;
            if (used > share) {
                fail(st, ARCA_ERR_OTHER, "chunks of %llu bytes exceed the %llu reserved for them",
                     (unsigned long long)used, (unsigned long long)share);
            } else {
                uint64_t at = addr + (uint64_t)(counter_add(m, (int64_t)len) - base);
                if (check(st, arca_write_out(m->fd, bytes, len, at)) == ARCA_OK) {
                    for (size_t i = 0; i < nc; i++) {
                        uint64_t *r = put_bytes(&o->recs, NULL, (size_t)(rank + 3) * 8);
                        uint64_t l;
                        uint32_t mask, crc;
                        arca_slab_chunk(blk, i, r, &l, &mask, &crc);
                        r[rank] = at;
                        r[rank + 1] = l;
                        r[rank + 2] = (uint64_t)mask << 32 | crc;
                        at += l;
                        o->nrecs++;
                    }
                }
            }
        }
        arca_slab_free(blk);
        a = b;
    }
}

/* Rank 0 writes one part of the dataset (a box and its elements). */
static void root_write(arca_dataset_t *ds, const uint64_t *s, const uint64_t *c,
                       const void *data, size_t n, status_t *st) {
    if (st->rc != ARCA_OK || n == 0) return;
    check(st, arca_dataset_write(ds, s, c, NULL, data, n));
}

/* Rank 0 writes the parts in `p` (as out_t.parts packs them). */
static void root_parts(arca_dataset_t *ds, const head_t *h, const unsigned char *p,
                       uint64_t nparts, status_t *st) {
    int rank = h->rank;
    for (uint64_t i = 0; i < nparts; i++) {
        const uint64_t *s = (const uint64_t *)p, *c = s + rank;
        size_t n = 0;
        box_bytes(rank, c, h->elem, &n);
        p += (size_t)rank * 16;
        root_write(ds, s, c, p, n, st);
        p += n;
    }
}

/* Step 4: rank 0 gathers every rank's chunks and parts, writes the parts
 * and seals the chunks; the others send theirs. */
static void gather_and_seal(arca_mpi_file_t *m, const desc_t *d, arca_dataset_t *ds, out_t *o,
                            const uint64_t *start, const uint64_t *count, size_t bytes,
                            int reserved, status_t *st) {
    const head_t *h = &d->h;
    int rank = h->rank;
    size_t rec = (size_t)(rank + 3) * 8;
    if (m->rank != 0) {
        uint64_t head[4] = {o->nrecs, o->nparts, o->parts.len, o->whole ? bytes : 0};
        MPI_Send(head, 4, MPI_UINT64_T, 0, TAG_HEAD, m->comm);
        send_bytes(o->recs.p, o->nrecs * rec, 0, TAG_RECS, m->comm);
        send_bytes(o->parts.p, o->parts.len, 0, TAG_DATA, m->comm);
        if (o->whole && bytes) {
            uint64_t box[2 * ARCA_MAX_RANK];
            memcpy(box, start, (size_t)rank * 8);
            memcpy(box + rank, count, (size_t)rank * 8);
            MPI_Send(box, 2 * rank, MPI_UINT64_T, 0, TAG_BOX, m->comm);
            send_bytes(o->whole, bytes, 0, TAG_DATA, m->comm);
        }
        return;
    }
    /* Rank 0: its own, then every other rank's in turn. Every message is
     * received even after a failure, so that no rank waits forever. */
    buf_t all = {0};
    uint64_t nall = o->nrecs;
    put_bytes(&all, o->recs.p, o->nrecs * rec);
    root_parts(ds, h, o->parts.p, o->nparts, st);
    if (o->whole) root_write(ds, start, count, o->whole, bytes, st);
    for (int r = 1; r < m->size; r++) {
        uint64_t head[4];
        MPI_Recv(head, 4, MPI_UINT64_T, r, TAG_HEAD, m->comm, MPI_STATUS_IGNORE);
        recv_bytes(put_bytes(&all, NULL, head[0] * rec), head[0] * rec, r, TAG_RECS, m->comm);
        nall += head[0];
        unsigned char *p = malloc(head[2] ? head[2] : 1);
        if (!p) MPI_Abort(m->comm, 1);
        recv_bytes(p, head[2], r, TAG_DATA, m->comm);
        root_parts(ds, h, p, head[1], st);
        free(p);
        if (head[3]) {
            uint64_t box[2 * ARCA_MAX_RANK];
            MPI_Recv(box, 2 * rank, MPI_UINT64_T, r, TAG_BOX, m->comm, MPI_STATUS_IGNORE);
            void *data = malloc(head[3]);
            if (!data) MPI_Abort(m->comm, 1);
            recv_bytes(data, head[3], r, TAG_DATA, m->comm);
            root_write(ds, box, box + rank, data, head[3], st);
            free(data);
        }
    }
    if (reserved && st->rc == ARCA_OK) {
        arca_written_chunk_t *w = malloc((nall ? nall : 1) * sizeof *w);
        if (!w) MPI_Abort(m->comm, 1);
        for (uint64_t i = 0; i < nall; i++) {
            const uint64_t *r = (const uint64_t *)(all.p + i * rec);
            w[i].offset = r;
            w[i].addr = r[rank];
            w[i].len = r[rank + 1];
            w[i].mask = (uint32_t)(r[rank + 2] >> 32);
            w[i].crc = (uint32_t)r[rank + 2];
        }
        check(st, arca_dataset_seal_chunks(ds, w, (size_t)nall));
        free(w);
    }
    free(all.p);
}

int32_t arca_mpi_write(arca_mpi_file_t *m, const char *path, const uint64_t *start,
                       const uint64_t *count, const void *local) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    arca_dataset_t *ds;
    desc_t d;
    int32_t rc = describe(m, path, 1, &ds, &d, "write");
    if (rc != ARCA_OK) return rc;
    const head_t *h = &d.h;

    /* Step 1: check the box; count the whole chunks. */
    status_t st = {ARCA_OK, ""};
    size_t bytes = 0;
    uint64_t whole = 0, total = 0;
    check_box(h, start, count, local, &bytes, &st);
    if (st.rc == ARCA_OK && h->direct) whole = whole_chunks(h->rank, start, count, h->dims, h->chunks);
    rc = agree(m->comm, &st, "write");
    if (rc != ARCA_OK) {
        desc_free(ds, &d);
        return rc;
    }
    MPI_Reduce(&whole, &total, 1, MPI_UINT64_T, MPI_SUM, 0, m->comm);

    /* Step 2: rank 0 reserves room for every rank's whole chunks. */
    uint64_t chunk_bytes = h->elem;
    for (int i = 0; i < h->rank && h->direct; i++) chunk_bytes *= h->chunks[i];
    uint64_t room[3] = {0, 0, 0}; /* addr, counter base, reserved */
    int in_tx = 0;
    if (m->rank == 0) {
        if (check(&st, arca_file_begin_transaction(m->f)) == ARCA_OK) {
            in_tx = 1;
            int over = 0;
            uint64_t n = mul(total, chunk_bytes, &over);
            if (over) {
                fail(&st, ARCA_ERR_INVALID, "%llu chunks of %llu bytes: too many to reserve",
                     (unsigned long long)total, (unsigned long long)chunk_bytes);
            } else if (n && check(&st, arca_dataset_reserve_chunks(ds, n, &room[0])) == ARCA_OK) {
                room[1] = (uint64_t)counter_add(m, 0);
                room[2] = 1;
            }
        }
    }
    rc = agree(m->comm, &st, "write");
    if (rc != ARCA_OK) {
        if (in_tx) arca_file_end_transaction(m->f, 0);
        desc_free(ds, &d);
        return rc;
    }
    MPI_Bcast(room, 3, MPI_UINT64_T, 0, m->comm);

    /* Step 3: every rank compresses and writes its whole chunks. */
    out_t o = {{0}, 0, {0}, 0, NULL};
    if (h->direct)
        write_slabs(m, &d, start, count, local, room[0], (int64_t)room[1], whole * chunk_bytes, &o,
                    &st);
    else
        o.whole = local;
    rc = agree(m->comm, &st, "write");
    if (rc == ARCA_OK) {
        /* Step 4: rank 0 indexes the chunks, merges the rest and commits. */
        gather_and_seal(m, &d, ds, &o, start, count, bytes, (int)room[2], &st);
        if (m->rank == 0) {
            in_tx = 0;
            if (st.rc == ARCA_OK)
                check(&st, arca_file_end_transaction(m->f, 1));
            else
                arca_file_end_transaction(m->f, 0);
        }
        rc = agree(m->comm, &st, "write");
    }
    if (in_tx) arca_file_end_transaction(m->f, 0);
    free(o.recs.p);
    free(o.parts.p);
    desc_free(ds, &d);
    return rc;
}

/* ---- reads ---------------------------------------------------------- */

int32_t arca_mpi_dataset_dims(arca_mpi_file_t *m, const char *path, uint64_t *dims, size_t cap,
                              int32_t *rank) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    arca_dataset_t *ds;
    desc_t d;
    int32_t rc = describe(m, path, 0, &ds, &d, "dataset_dims");
    if (rc != ARCA_OK) return rc;
    status_t st = {ARCA_OK, ""};
    if (dims && cap < (size_t)d.h.rank)
        fail(&st, ARCA_ERR_INVALID, "array of %zu entries; the rank is %d", cap, (int)d.h.rank);
    else if (dims)
        memcpy(dims, d.h.dims, (size_t)d.h.rank * 8);
    if (rank) *rank = d.h.rank;
    desc_free(ds, &d);
    return agree(m->comm, &st, "dataset_dims");
}

int32_t arca_mpi_read(arca_mpi_file_t *m, const char *path, const uint64_t *start,
                      const uint64_t *count, void *out) {
    if (!m) return local_fail(ARCA_ERR_NULL, "file is NULL");
    arca_dataset_t *ds;
    desc_t d;
    int32_t rc = describe(m, path, 0, &ds, &d, "read");
    if (rc != ARCA_OK) return rc;
    const head_t *h = &d.h;
    status_t st = {ARCA_OK, ""};
    size_t bytes = 0;
    check_box(h, start, count, out, &bytes, &st);
    rc = agree(m->comm, &st, "read");
    if (rc != ARCA_OK) {
        desc_free(ds, &d);
        return rc;
    }
    int rank = h->rank;
    if (m->rank == 0) {
        if (bytes) check(&st, arca_dataset_read(ds, start, count, NULL, out, bytes));
        for (int r = 1; r < m->size; r++) {
            uint64_t box[2 * ARCA_MAX_RANK];
            MPI_Recv(box, 2 * rank, MPI_UINT64_T, r, TAG_BOX, m->comm, MPI_STATUS_IGNORE);
            size_t n = 0;
            box_bytes(rank, box + rank, h->elem, &n);
            void *buf = NULL;
            if (st.rc == ARCA_OK && n) {
                buf = malloc(n);
                if (!buf) MPI_Abort(m->comm, 1);
                check(&st, arca_dataset_read(ds, box, box + rank, NULL, buf, n));
            }
            int32_t ok = st.rc;
            MPI_Send(&ok, 1, MPI_INT32_T, r, TAG_STATUS, m->comm);
            if (ok == ARCA_OK) send_bytes(buf, n, r, TAG_DATA, m->comm);
            free(buf);
        }
    } else {
        uint64_t box[2 * ARCA_MAX_RANK];
        memcpy(box, start, (size_t)rank * 8);
        memcpy(box + rank, count, (size_t)rank * 8);
        MPI_Send(box, 2 * rank, MPI_UINT64_T, 0, TAG_BOX, m->comm);
        int32_t ok;
        MPI_Recv(&ok, 1, MPI_INT32_T, 0, TAG_STATUS, m->comm, MPI_STATUS_IGNORE);
        if (ok == ARCA_OK) recv_bytes(out, bytes, 0, TAG_DATA, m->comm);
    }
    desc_free(ds, &d);
    return agree(m->comm, &st, "read");
}
