/*
 * Collective writes through arca_mpi.h, run under mpirun (make
 * capi-mpi-test: -n 2 and -n 4 --oversubscribe):
 *
 *   mpirun -n 4 test_mpi OUTDIR
 *
 * Scenarios, each in its own file of OUTDIR:
 *   chunked     shuffle+zstd float32 (and a big-endian gzip twin) with a
 *               fill value, 50 rows per rank in 16-row chunks, so that ranks
 *               share chunks and the last rows are never written; each rank
 *               reads its part back; rank 0 compares the whole file value
 *               for value with a serial write through arca.h
 *   slabs       one chunk row per slab, so that ranks' chunks interleave in
 *               the file, and a last chunk running past the extent
 *   contiguous  a contiguous dataset, written by rank 0 for everyone
 *   grow        a time series grown step by step with a group, attributes
 *   fail        a box out of the extent on the last rank, a NULL buffer on
 *               rank 1, a missing dataset (rank 0), a read-only file: every
 *               rank gets the error naming the failing ranks, and nothing
 *               changes
 *   fail-late   the last rank's second slab write fails after every rank
 *               wrote some chunks into the reserved room: every rank gets
 *               the error, nothing changes and the room is given back.
 *               The test is linked with -Wl,--wrap=arca_write_out, so that
 *               arca_mpi's writes go through __wrap_arca_write_out below.
 * Rank 0 prints "test_mpi: N ranks: all M checks passed" when every check
 * on every rank passed; the exit status is nonzero otherwise.
 */
#define _POSIX_C_SOURCE 200809L
#include "arca_mpi.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures = 0;
static int checks = 0;
static int me = 0, nranks = 1;

#define EXPECT_RC(call, want)                                                              \
    do {                                                                                   \
        int32_t rc_ = (call);                                                              \
        checks++;                                                                          \
        if (rc_ != (want)) {                                                               \
            failures++;                                                                    \
            fprintf(stderr, "rank %d: %s:%d: %s returned %s, expected %s: %s | %s\n", me,  \
                    __FILE__, __LINE__, #call, arca_error_name(rc_), arca_error_name(want), \
                    arca_mpi_last_error(), arca_last_error());                             \
        }                                                                                  \
    } while (0)

#define OK(call) EXPECT_RC(call, ARCA_OK)

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        checks++;                                                                        \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", me, __FILE__, __LINE__, \
                    #cond);                                                              \
        }                                                                                \
    } while (0)

enum { ROWS = 50, COLS = 24, EXTRA = 5, STEPS = 5 };

static const char *outdir;

static const char *path_of(const char *name) {
    static char buf[4][1024];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", outdir, name);
    return buf[k];
}

/* Rank r's local data at a step: ROWS x COLS values from a seeded generator. */
static void local_data(int r, int step, float *out) {
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(100 * step + r + 1);
    for (int i = 0; i < ROWS * COLS; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        out[i] = (float)((int)((s >> 33) % 2001) - 1000) / 8.0f;
    }
}

/* Options for a float32 dataset of `rows` rows. */
static void float_opts(arca_dataset_opts_t *o, uint64_t *dims, uint64_t rows) {
    dims[0] = rows;
    dims[1] = COLS;
    arca_dataset_opts_init(o, ARCA_DTYPE_FLOAT32, 2, dims);
}

static const float FILL = -1.0f;
static uint64_t CHUNKS[2] = {16, 8};
static arca_filter_t ZSTD[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
static arca_filter_t GZIP[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_GZIP, 4}};

static void chunked_opts(arca_dataset_opts_t *o, uint64_t *dims, uint64_t rows,
                         arca_filter_t *fl, int32_t order) {
    float_opts(o, dims, rows);
    o->chunks = CHUNKS;
    o->filters = fl;
    o->nfilters = 2;
    o->fill_value = &FILL;
    o->fill_size = sizeof FILL;
    o->order = order;
}

/* Rank 0: the same datasets written serially through arca.h, each rank's
 * local data in turn; `make` creates them. */
typedef void (*make_fn)(arca_dataset_opts_t *o, uint64_t *dims, int which);

static void serial(const char *path, const char *const *names, int n, make_fn make) {
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_open(path, "w", &f));
    OK(arca_file_root(f, &root));
    float *b = malloc(sizeof(float) * ROWS * COLS);
    for (int k = 0; k < n; k++) {
        arca_dataset_opts_t o;
        uint64_t dims[2];
        arca_dataset_t *ds;
        make(&o, dims, k);
        OK(arca_dataset_create(root, names[k], &o, &ds));
        for (int r = 0; r < nranks; r++) {
            uint64_t start[2] = {(uint64_t)r * ROWS, 0}, count[2] = {ROWS, COLS};
            local_data(r, 0, b);
            OK(arca_dataset_write(ds, start, count, NULL, b, sizeof(float) * ROWS * COLS));
        }
        OK(arca_dataset_close(ds));
    }
    free(b);
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

/* Rank 0: the datasets of two files are equal value for value (and
 * stored in as many bytes), and the first file checks. */
static void same(const char *a_path, const char *b_path, const char *const *names, int n,
                 uint64_t rows) {
    arca_file_t *fa, *fb;
    arca_group_t *ra, *rb;
    OK(arca_file_open(a_path, "r", &fa));
    OK(arca_file_open(b_path, "r", &fb));
    OK(arca_file_root(fa, &ra));
    OK(arca_file_root(fb, &rb));
    size_t bytes = sizeof(float) * rows * COLS;
    float *a = malloc(bytes), *b = malloc(bytes), *want = malloc(bytes);
    for (uint64_t i = 0; i < rows * COLS; i++) want[i] = FILL;
    for (int r = 0; r < nranks; r++) local_data(r, 0, want + (size_t)r * ROWS * COLS);
    for (int k = 0; k < n; k++) {
        arca_dataset_t *da, *db;
        OK(arca_dataset_open(ra, names[k], &da));
        OK(arca_dataset_open(rb, names[k], &db));
        uint64_t dims[2];
        OK(arca_dataset_dims(da, dims, NULL, 2));
        CHECK(dims[0] == rows && dims[1] == COLS);
        OK(arca_dataset_read(da, NULL, NULL, NULL, a, bytes));
        OK(arca_dataset_read(db, NULL, NULL, NULL, b, bytes));
        CHECK(memcmp(a, b, bytes) == 0);
        CHECK(memcmp(a, want, bytes) == 0);
        uint64_t sa = 0, sb = 1;
        OK(arca_dataset_storage_size(da, &sa));
        OK(arca_dataset_storage_size(db, &sb));
        CHECK(sa == sb);
        OK(arca_dataset_close(da));
        OK(arca_dataset_close(db));
    }
    OK(arca_file_check(fa, NULL));
    free(a);
    free(b);
    free(want);
    OK(arca_group_close(ra));
    OK(arca_group_close(rb));
    OK(arca_file_close(fa));
    OK(arca_file_close(fb));
}

/* Every rank writes its local data to each dataset, reads it back and checks. */
static void write_mine(arca_mpi_file_t *f, const char *name, const float *mine) {
    uint64_t start[2] = {(uint64_t)me * ROWS, 0}, count[2] = {ROWS, COLS};
    OK(arca_mpi_write(f, name, start, count, mine));
    static float back[ROWS * COLS];
    memset(back, 0, sizeof back);
    OK(arca_mpi_read(f, name, start, count, back));
    CHECK(memcmp(back, mine, sizeof back) == 0);
}

/* ---- chunked and slabs ---------------------------------------------- */

static const char *const CHUNKED_NAMES[2] = {"x", "big/x"};

static void make_chunked(arca_dataset_opts_t *o, uint64_t *dims, int which) {
    uint64_t rows = (uint64_t)nranks * ROWS + EXTRA;
    if (which == 0)
        chunked_opts(o, dims, rows, ZSTD, ARCA_ORDER_NATIVE);
    else
        chunked_opts(o, dims, rows, GZIP, ARCA_ORDER_BIG);
}

static void test_chunked(void) {
    const char *p = path_of("chunked.arca");
    arca_mpi_file_t *f;
    OK(arca_mpi_file_open(p, "w", MPI_COMM_WORLD, &f));
    CHECK((arca_mpi_file_arca(f) != NULL) == (me == 0));
    static float mine[ROWS * COLS];
    local_data(me, 0, mine);
    for (int k = 0; k < 2; k++) {
        arca_dataset_opts_t o;
        uint64_t dims[2];
        make_chunked(&o, dims, k);
        OK(arca_mpi_dataset_create(f, CHUNKED_NAMES[k], &o));
        write_mine(f, CHUNKED_NAMES[k], mine);
    }
    uint64_t d[2] = {0, 0};
    int32_t r = 0;
    OK(arca_mpi_dataset_dims(f, "x", d, 2, &r));
    CHECK(r == 2 && d[0] == (uint64_t)nranks * ROWS + EXTRA && d[1] == COLS);
    /* The rows no rank wrote read as the fill value, on every rank. */
    uint64_t s[2] = {(uint64_t)nranks * ROWS, 0}, c[2] = {EXTRA, COLS};
    static float tail[EXTRA * COLS];
    OK(arca_mpi_read(f, "x", s, c, tail));
    for (int i = 0; i < EXTRA * COLS; i++) CHECK(tail[i] == FILL);
    OK(arca_mpi_file_close(f));
    if (me == 0) {
        const char *ref = path_of("chunked-serial.arca");
        serial(ref, CHUNKED_NAMES, 2, make_chunked);
        same(p, ref, CHUNKED_NAMES, 2, (uint64_t)nranks * ROWS + EXTRA);
    }
}

static const char *const SLAB_NAMES[1] = {"x"};

static void make_slabs(arca_dataset_opts_t *o, uint64_t *dims, int which) {
    (void)which;
    chunked_opts(o, dims, (uint64_t)nranks * ROWS, ZSTD, ARCA_ORDER_NATIVE);
}

static void test_slabs(void) {
    const char *p = path_of("slabs.arca");
    arca_mpi_file_t *f;
    OK(arca_mpi_file_open(p, "w", MPI_COMM_WORLD, &f));
    OK(arca_mpi_file_set_slab_bytes(f, 16 * COLS * sizeof(float))); /* one chunk row */
    EXPECT_RC(arca_mpi_file_set_slab_bytes(f, 0), ARCA_ERR_INVALID);
    static float mine[ROWS * COLS];
    local_data(me, 0, mine);
    arca_dataset_opts_t o;
    uint64_t dims[2];
    make_slabs(&o, dims, 0);
    OK(arca_mpi_dataset_create(f, "x", &o));
    write_mine(f, "x", mine);
    OK(arca_mpi_file_close(f));
    if (me == 0) {
        const char *ref = path_of("slabs-serial.arca");
        serial(ref, SLAB_NAMES, 1, make_slabs);
        same(p, ref, SLAB_NAMES, 1, (uint64_t)nranks * ROWS);
    }
}

/* ---- contiguous ------------------------------------------------------ */

static void make_contiguous(arca_dataset_opts_t *o, uint64_t *dims, int which) {
    (void)which;
    float_opts(o, dims, (uint64_t)nranks * ROWS);
    o->layout = ARCA_LAYOUT_CONTIGUOUS;
}

static void test_contiguous(void) {
    const char *p = path_of("contiguous.arca");
    arca_mpi_file_t *f;
    OK(arca_mpi_file_open(p, "w", MPI_COMM_WORLD, &f));
    static float mine[ROWS * COLS];
    local_data(me, 0, mine);
    arca_dataset_opts_t o;
    uint64_t dims[2];
    make_contiguous(&o, dims, 0);
    OK(arca_mpi_dataset_create(f, "x", &o));
    write_mine(f, "x", mine);
    OK(arca_mpi_file_close(f));
    if (me == 0) {
        const char *ref = path_of("contiguous-serial.arca");
        serial(ref, SLAB_NAMES, 1, make_contiguous);
        same(p, ref, SLAB_NAMES, 1, (uint64_t)nranks * ROWS);
    }
}

/* ---- grow ------------------------------------------------------------ */

static void test_grow(void) {
    const char *p = path_of("grow.arca");
    arca_mpi_file_t *f;
    OK(arca_mpi_file_open(p, "w", MPI_COMM_WORLD, &f));
    OK(arca_mpi_group_create(f, "run/steps"));
    int32_t n = nranks;
    OK(arca_mpi_attr_write(f, "/", "ranks", ARCA_DTYPE_INT32, ARCA_ORDER_NATIVE, 0, NULL, &n,
                           sizeof n));
    uint64_t width = (uint64_t)COLS * nranks;
    uint64_t dims[2] = {0, width}, maxd[2] = {ARCA_UNLIMITED, width}, ch[2] = {1, COLS};
    arca_filter_t gz = {ARCA_FILTER_GZIP, 4};
    arca_dataset_opts_t o;
    arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT32, 2, dims);
    o.maxdims = maxd;
    o.chunks = ch;
    o.filters = &gz;
    o.nfilters = 1;
    OK(arca_mpi_dataset_create(f, "run/t", &o));
    static float b[ROWS * COLS];
    for (int step = 0; step < STEPS; step++) {
        uint64_t nd[2] = {(uint64_t)step + 1, width};
        OK(arca_mpi_dataset_resize(f, "run/t", nd));
        uint64_t d[2];
        OK(arca_mpi_dataset_dims(f, "run/t", d, 2, NULL));
        CHECK(d[0] == (uint64_t)step + 1);
        local_data(me, step, b);
        uint64_t start[2] = {(uint64_t)step, (uint64_t)me * COLS}, count[2] = {1, COLS};
        OK(arca_mpi_write(f, "run/t", start, count, b));
    }
    int32_t steps = STEPS;
    OK(arca_mpi_attr_write(f, "run/t", "steps", ARCA_DTYPE_INT32, ARCA_ORDER_BIG, 0, NULL,
                           &steps, sizeof steps));
    OK(arca_mpi_attr_write_string(f, "run/t", "units", "K"));
    EXPECT_RC(arca_mpi_attr_write(f, "run/none", "x", ARCA_DTYPE_INT32, ARCA_ORDER_NATIVE, 0,
                                  NULL, &steps, sizeof steps),
              ARCA_ERR_NOT_FOUND);
    CHECK(strstr(arca_mpi_last_error(), "rank 0") != NULL);
    OK(arca_mpi_file_close(f));
    if (me != 0) return;
    arca_file_t *a;
    arca_group_t *root;
    arca_dataset_t *ds;
    arca_attrs_t *at;
    OK(arca_file_open(p, "r", &a));
    OK(arca_file_root(a, &root));
    int32_t exists = 0, v = 0;
    OK(arca_exists(root, "run/steps", &exists));
    CHECK(exists == 1);
    OK(arca_group_attrs(root, &at));
    OK(arca_attr_read(at, "ranks", &v, sizeof v));
    CHECK(v == nranks);
    OK(arca_attrs_close(at));
    OK(arca_dataset_open(root, "run/t", &ds));
    uint64_t d[2];
    OK(arca_dataset_dims(ds, d, NULL, 2));
    CHECK(d[0] == STEPS && d[1] == width);
    OK(arca_dataset_attrs(ds, &at));
    OK(arca_attr_read(at, "steps", &v, sizeof v));
    CHECK(v == STEPS);
    char units[8];
    OK(arca_attr_read_string(at, "units", units, sizeof units, NULL));
    CHECK(strcmp(units, "K") == 0);
    OK(arca_attrs_close(at));
    float *t = malloc(sizeof(float) * STEPS * width);
    OK(arca_dataset_read(ds, NULL, NULL, NULL, t, sizeof(float) * STEPS * width));
    for (int step = 0; step < STEPS; step++)
        for (int r = 0; r < nranks; r++) {
            local_data(r, step, b);
            CHECK(memcmp(t + step * width + (uint64_t)r * COLS, b, COLS * sizeof(float)) == 0);
        }
    free(t);
    OK(arca_file_check(a, NULL));
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(a));
}

/* ---- failures ---------------------------------------------------------- */

static int names_rank(int r) {
    char want[32];
    snprintf(want, sizeof want, "rank %d: ", r);
    return strstr(arca_mpi_last_error(), want) != NULL;
}

static void test_fail(void) {
    const char *p = path_of("fail.arca");
    arca_mpi_file_t *f;
    OK(arca_mpi_file_open(p, "w", MPI_COMM_WORLD, &f));
    arca_dataset_opts_t o;
    uint64_t dims[2];
    chunked_opts(&o, dims, (uint64_t)nranks * ROWS, ZSTD, ARCA_ORDER_NATIVE);
    OK(arca_mpi_dataset_create(f, "x", &o));
    static float mine[ROWS * COLS], twice[ROWS * COLS], back[ROWS * COLS];
    local_data(me, 0, mine);
    for (int i = 0; i < ROWS * COLS; i++) twice[i] = 2 * mine[i];
    write_mine(f, "x", mine);
    uint64_t start[2] = {(uint64_t)me * ROWS, 0}, count[2] = {ROWS, COLS};

    /* The last rank's box leaves the extent by one row. */
    uint64_t bad[2] = {start[0] + (me == nranks - 1), 0};
    EXPECT_RC(arca_mpi_write(f, "x", bad, count, twice), ARCA_ERR_INVALID);
    CHECK(names_rank(nranks - 1));
    CHECK(strstr(arca_mpi_last_error(), "extent") != NULL);
    CHECK(strncmp(arca_mpi_last_error(), "write failed: ", 14) == 0);
    for (int r = 0; r < nranks - 1; r++) CHECK(!names_rank(r));
    /* Rank 1 gives no data. */
    EXPECT_RC(arca_mpi_write(f, "x", start, count, me == 1 ? NULL : twice), ARCA_ERR_NULL);
    CHECK(names_rank(1) && !names_rank(0));
    /* No such dataset: rank 0 fails, everyone hears of it. */
    EXPECT_RC(arca_mpi_write(f, "missing", start, count, twice), ARCA_ERR_NOT_FOUND);
    CHECK(names_rank(0));
    EXPECT_RC(arca_mpi_read(f, "missing", start, count, back), ARCA_ERR_NOT_FOUND);
    /* A read of a box out of the extent on the last rank. */
    EXPECT_RC(arca_mpi_read(f, "x", bad, count, back), ARCA_ERR_INVALID);
    CHECK(names_rank(nranks - 1));
    /* Nothing changed. */
    memset(back, 0, sizeof back);
    OK(arca_mpi_read(f, "x", start, count, back));
    CHECK(memcmp(back, mine, sizeof back) == 0);
    /* A dataset that exists already. */
    EXPECT_RC(arca_mpi_dataset_create(f, "x", &o), ARCA_ERR_EXISTS);
    CHECK(names_rank(0));
    EXPECT_RC(arca_mpi_write(NULL, "x", start, count, twice), ARCA_ERR_NULL);
    OK(arca_mpi_file_close(f));

    /* Read-only: reads work, writes fail everywhere. */
    OK(arca_mpi_file_open(p, "r", MPI_COMM_WORLD, &f));
    EXPECT_RC(arca_mpi_write(f, "x", start, count, twice), ARCA_ERR_READ_ONLY);
    CHECK(names_rank(0));
    memset(back, 0, sizeof back);
    OK(arca_mpi_read(f, "x", start, count, back));
    CHECK(memcmp(back, mine, sizeof back) == 0);
    OK(arca_mpi_file_close(f));
    /* A file that is not there. */
    arca_mpi_file_t *g = (arca_mpi_file_t *)1;
    EXPECT_RC(arca_mpi_file_open(path_of("missing.arca"), "r", MPI_COMM_WORLD, &g), ARCA_ERR_IO);
    CHECK(g == NULL);
    CHECK(names_rank(0));
    OK(arca_mpi_file_close(NULL));
    if (me == 0) {
        arca_file_t *a;
        OK(arca_file_open(p, "r", &a));
        OK(arca_file_check(a, NULL));
        OK(arca_file_close(a));
    }
}

/* ---- a write failing late ---------------------------------------------- */

/* Writes to go before one fails (-1: none fails). */
static int writes_left = -1;

int32_t __real_arca_write_out(int fd, const void *buf, size_t len, uint64_t at);

int32_t __wrap_arca_write_out(int fd, const void *buf, size_t len, uint64_t at) {
    if (writes_left >= 0 && writes_left-- == 0) {
        /* A real failure from the OS: a descriptor open for reading. */
        int ro = open("/dev/null", O_RDONLY);
        int32_t rc = __real_arca_write_out(ro, buf, len, at);
        close(ro);
        return rc;
    }
    return __real_arca_write_out(fd, buf, len, at);
}

static void test_fail_late(void) {
    const char *p = path_of("fail-late.arca");
    arca_mpi_file_t *f;
    OK(arca_mpi_file_open(p, "w", MPI_COMM_WORLD, &f));
    OK(arca_mpi_file_set_slab_bytes(f, 16 * COLS * sizeof(float))); /* one chunk row */
    arca_dataset_opts_t o;
    uint64_t dims[2];
    chunked_opts(&o, dims, (uint64_t)nranks * ROWS, ZSTD, ARCA_ORDER_NATIVE);
    OK(arca_mpi_dataset_create(f, "x", &o));
    static float mine[ROWS * COLS], twice[ROWS * COLS], back[ROWS * COLS];
    local_data(me, 0, mine);
    for (int i = 0; i < ROWS * COLS; i++) twice[i] = 2 * mine[i];
    write_mine(f, "x", mine);
    MPI_Barrier(MPI_COMM_WORLD);
    struct stat before;
    CHECK(stat(p, &before) == 0);
    if (me == nranks - 1) writes_left = 1;
    uint64_t start[2] = {(uint64_t)me * ROWS, 0}, count[2] = {ROWS, COLS};
    EXPECT_RC(arca_mpi_write(f, "x", start, count, twice), ARCA_ERR_IO);
    CHECK(names_rank(nranks - 1));
    for (int r = 0; r < nranks - 1; r++) CHECK(!names_rank(r));
    writes_left = -1;
    memset(back, 0, sizeof back);
    OK(arca_mpi_read(f, "x", start, count, back));
    CHECK(memcmp(back, mine, sizeof back) == 0);
    /* The handle goes on working. */
    write_mine(f, "x", twice);
    write_mine(f, "x", mine);
    OK(arca_mpi_file_close(f));
    if (me == 0) {
        arca_file_t *a;
        OK(arca_file_open(p, "r", &a));
        OK(arca_file_check(a, NULL));
        OK(arca_file_close(a));
        /* The room reserved for the failed write is free again. */
        struct stat after;
        CHECK(stat(p, &after) == 0);
        CHECK(after.st_size <= before.st_size + 64 * 1024);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2) {
        if (me == 0) fprintf(stderr, "usage: mpirun -n N test_mpi OUTDIR\n");
        MPI_Finalize();
        return 2;
    }
    outdir = argv[1];
    test_chunked();
    test_slabs();
    test_contiguous();
    test_grow();
    test_fail();
    test_fail_late();
    int all[2] = {failures, checks}, sum[2];
    MPI_Reduce(all, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(sum, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (me == 0) {
        if (sum[0])
            fprintf(stderr, "test_mpi: %d ranks: %d of %d checks FAILED\n", nranks, sum[0], sum[1]);
        else
            printf("test_mpi: %d ranks: all %d checks passed\n", nranks, sum[1]);
    }
    MPI_Finalize();
    return sum[0] ? 1 : 0;
}
