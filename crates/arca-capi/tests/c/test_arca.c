/*
 * Tests of the arca C API through the public header, linked against the
 * library: every function, its values and its error paths.
 */
#define _GNU_SOURCE
#include "arca.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static int checks = 0;

/* Evaluate a call and compare its status to the expected code. */
#define EXPECT_RC(call, want)                                                        \
    do {                                                                             \
        int32_t rc_ = (call);                                                        \
        checks++;                                                                    \
        if (rc_ != (want)) {                                                         \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s: %s\n", __FILE__, \
                    __LINE__, #call, arca_error_name(rc_), rc_, arca_error_name(want),  \
                    arca_last_error());                                              \
        }                                                                            \
    } while (0)

#define OK(call) EXPECT_RC(call, ARCA_OK)

#define CHECK(cond)                                                            \
    do {                                                                       \
        checks++;                                                              \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                      \
    } while (0)

static char dir[256];

static const char *path_in(const char *name) {
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* ---- errors and version --------------------------------------------- */

static void test_errors_and_version(void) {
    CHECK(strlen(arca_version()) > 0);
    CHECK(strcmp(arca_error_name(ARCA_OK), "ARCA_OK") == 0);
    CHECK(strcmp(arca_error_name(ARCA_ERR_NOT_FOUND), "ARCA_ERR_NOT_FOUND") == 0);
    CHECK(strcmp(arca_error_name(ARCA_ERR_PANIC), "ARCA_ERR_PANIC") == 0);
    CHECK(strcmp(arca_error_name(12345), "ARCA_ERR_UNKNOWN") == 0);
    CHECK(arca_last_error() != NULL);
}

/* ---- files ----------------------------------------------------------- */

static void test_files(void) {
    const char *p = path_in("files.arca");
    arca_file_t *f = (arca_file_t *)1;

    /* Opening a missing file read-only is an I/O error, and clears *out. */
    EXPECT_RC(arca_file_open(path_in("missing.arca"), "r", &f), ARCA_ERR_IO);
    CHECK(f == NULL);
    CHECK(strlen(arca_last_error()) > 0);
    EXPECT_RC(arca_file_open(path_in("missing.arca"), "r+", &f), ARCA_ERR_IO);
    EXPECT_RC(arca_file_open(p, "q", &f), ARCA_ERR_INVALID);
    CHECK(strstr(arca_last_error(), "mode") != NULL);
    /* An HDF5 (or netCDF-4) file says what it is and how to convert it. */
    {
        const char *h5 = path_in("not-arca.h5");
        FILE *fp = fopen(h5, "wb");
        CHECK(fp != NULL);
        static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
        static unsigned char rest[4088];
        CHECK(fwrite(sig, 1, 8, fp) == 8 && fwrite(rest, 1, sizeof rest, fp) == sizeof rest);
        CHECK(fclose(fp) == 0);
        EXPECT_RC(arca_file_open(h5, "r", &f), ARCA_ERR_UNSUPPORTED);
        CHECK(strstr(arca_last_error(), "HDF5") != NULL);
        CHECK(strstr(arca_last_error(), "arca import") != NULL);
    }
    EXPECT_RC(arca_file_open(NULL, "w", &f), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_open(p, NULL, &f), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_open(p, "w", NULL), ARCA_ERR_NULL);

    OK(arca_file_create(p, &f));
    CHECK(f != NULL);
    int32_t w = -1;
    OK(arca_file_is_writable(f, &w));
    CHECK(w == 1);
    size_t need = 0;
    OK(arca_file_path(f, NULL, 0, &need));
    CHECK(need == strlen(p) + 1);
    char small[4];
    EXPECT_RC(arca_file_path(f, small, sizeof small, &need), ARCA_ERR_INVALID);
    char full[512];
    OK(arca_file_path(f, full, sizeof full, NULL));
    CHECK(strcmp(full, p) == 0);
    OK(arca_file_flush(f));

    /* One writer at a time, even within a process. */
    arca_file_t *g = NULL;
    EXPECT_RC(arca_file_open(p, "a", &g), ARCA_ERR_LOCKED);
    CHECK(g == NULL);
    OK(arca_file_close(f));

    /* "w-" refuses an existing file; "a" opens it; "w" truncates it. */
    EXPECT_RC(arca_file_open(p, "w-", &f), ARCA_ERR_EXISTS);
    EXPECT_RC(arca_file_open(p, "x", &f), ARCA_ERR_EXISTS);
    OK(arca_file_open(path_in("new.arca"), "w-", &f));
    OK(arca_file_close(f));
    OK(arca_file_open(path_in("append.arca"), "a", &f));
    OK(arca_file_close(f));
    OK(arca_file_open(path_in("append.arca"), "a", &f));
    OK(arca_file_close(f));
    OK(arca_file_open(p, "r", &f));
    OK(arca_file_is_writable(f, &w));
    CHECK(w == 0);
    OK(arca_file_close(f));
    OK(arca_file_open(p, "r+", &f));
    OK(arca_file_close(f));

    /* A file that is not arca. */
    const char *junk = path_in("junk.arca");
    FILE *fp = fopen(junk, "wb");
    for (int i = 0; i < 10000; i++) fputc(i * 7, fp);
    fclose(fp);
    EXPECT_RC(arca_file_open(junk, "r", &f), ARCA_ERR_CORRUPT);
    CHECK(f == NULL);

    /* Closing NULL is a no-op. */
    OK(arca_file_close(NULL));
}

/* ---- groups ---------------------------------------------------------- */

struct names {
    char list[16][64];
    int32_t kinds[16];
    int n;
    int stop_after;
};

static int32_t collect(const char *name, int32_t kind, void *user) {
    struct names *ns = user;
    if (ns->n < 16) {
        snprintf(ns->list[ns->n], 64, "%s", name);
        ns->kinds[ns->n] = kind;
    }
    ns->n++;
    if (ns->stop_after && ns->n == ns->stop_after) return 42;
    return 0;
}

/* Soft, external and hard links, and creation order. */
static void test_links(void) {
    arca_file_t *f, *o;
    arca_group_t *root, *oroot, *steps;
    OK(arca_file_create(path_in("links_other.arca"), &o));
    OK(arca_file_root(o, &oroot));
    OK(arca_group_create(oroot, "calib/v3", NULL));
    OK(arca_group_close(oroot));
    OK(arca_file_close(o));

    OK(arca_file_create(path_in("links.arca"), &f));
    OK(arca_file_root(f, &root));
    uint64_t n4[1] = {4};
    arca_dataset_opts_t opts;
    OK(arca_dataset_opts_init(&opts, ARCA_DTYPE_INT32, 1, n4));
    OK(arca_dataset_create(root, "runs/42/frames", &opts, NULL));
    OK(arca_link_soft(root, "latest", "/runs/42"));
    OK(arca_link_soft(root, "dangling", "/nowhere"));
    OK(arca_link_external(root, "calib", "links_other.arca", "/calib"));
    OK(arca_link_hard(root, "runs/42/frames", "frames_alias"));
    EXPECT_RC(arca_link_hard(root, "missing", "x"), ARCA_ERR_NOT_FOUND);
    EXPECT_RC(arca_link_soft(root, "latest", "/x"), ARCA_ERR_EXISTS);
    arca_dataset_t *ds;
    OK(arca_dataset_open(root, "latest/frames", &ds));
    OK(arca_dataset_close(ds));
    arca_group_t *v3;
    OK(arca_group_open(root, "calib/v3", &v3));
    OK(arca_group_close(v3));
    EXPECT_RC(arca_dataset_open(root, "dangling", &ds), ARCA_ERR_NOT_FOUND);

    int32_t kind = 0;
    char t[64], file[64];
    size_t need = 0;
    OK(arca_link_info(root, "latest", &kind, t, sizeof t, &need, NULL, 0, NULL));
    CHECK(kind == ARCA_LINK_SOFT && strcmp(t, "/runs/42") == 0 && need == 9);
    OK(arca_link_info(root, "calib", &kind, t, sizeof t, NULL, file, sizeof file, NULL));
    CHECK(kind == ARCA_LINK_EXTERNAL && strcmp(file, "links_other.arca") == 0);
    OK(arca_link_info(root, "frames_alias", &kind, NULL, 0, NULL, NULL, 0, NULL));
    CHECK(kind == ARCA_LINK_HARD);
    EXPECT_RC(arca_link_info(root, "nope", &kind, NULL, 0, NULL, NULL, 0, NULL),
              ARCA_ERR_NOT_FOUND);

    /* Members: a dangling or external link is ARCA_KIND_LINK. */
    uint64_t count = 0;
    OK(arca_group_count(root, &count));
    CHECK(count == 5);
    char name[64];
    int32_t kinds[5];
    for (uint64_t i = 0; i < count; i++)
        OK(arca_group_member(root, i, name, sizeof name, NULL, &kinds[i]));
    /* calib, dangling, frames_alias, latest, runs */
    CHECK(kinds[0] == ARCA_KIND_LINK && kinds[1] == ARCA_KIND_LINK);
    CHECK(kinds[2] == ARCA_KIND_DATASET && kinds[3] == ARCA_KIND_GROUP);

    /* The object outlives its first name. */
    OK(arca_delete(root, "runs"));
    OK(arca_dataset_open(root, "frames_alias", &ds));
    OK(arca_dataset_close(ds));

    /* References: an id and the object it leads to. */
    uint64_t id = 0, refs[2] = {0, 0};
    OK(arca_object_id(root, "frames_alias", &id));
    CHECK(id != 0);
    uint64_t two[1] = {2};
    OK(arca_dataset_opts_init(&opts, ARCA_DTYPE_REFERENCE, 1, two));
    OK(arca_dataset_create(root, "refs", &opts, &ds));
    refs[1] = id;
    OK(arca_dataset_write(ds, NULL, NULL, NULL, refs, sizeof refs));
    OK(arca_dataset_close(ds));
    arca_group_t *rg = NULL;
    arca_dataset_t *rd = NULL;
    OK(arca_dereference(root, id, &kind, &rg, &rd));
    CHECK(kind == ARCA_KIND_DATASET && rg == NULL && rd != NULL);
    OK(arca_dataset_close(rd));
    EXPECT_RC(arca_dereference(root, 0, &kind, &rg, &rd), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dereference(root, 12345, &kind, &rg, &rd), ARCA_ERR_NOT_FOUND);

    OK(arca_group_create_ordered(root, "steps", &steps));
    OK(arca_group_create(steps, "b", NULL));
    OK(arca_group_create(steps, "a", NULL));
    OK(arca_group_member(steps, 0, name, sizeof name, NULL, NULL));
    CHECK(strcmp(name, "b") == 0);
    /* Attributes of an ordered group, and of a dataset asking for it. */
    arca_attrs_t *sa;
    OK(arca_group_attrs(steps, &sa));
    OK(arca_attr_write_string(sa, "zeta", "1"));
    OK(arca_attr_write_string(sa, "alpha", "2"));
    OK(arca_attr_name(sa, 0, name, sizeof name, NULL));
    CHECK(strcmp(name, "zeta") == 0);
    OK(arca_attrs_close(sa));
    uint64_t three = 3;
    arca_dataset_opts_t dopts;
    OK(arca_dataset_opts_init(&dopts, ARCA_DTYPE_UINT8, 1, &three));
    dopts.track_order = 1;
    arca_dataset_t *od;
    OK(arca_dataset_create(steps, "d", &dopts, &od));
    OK(arca_dataset_attrs(od, &sa));
    OK(arca_attr_write_string(sa, "y", "1"));
    OK(arca_attr_write_string(sa, "b", "2"));
    OK(arca_attr_name(sa, 0, name, sizeof name, NULL));
    CHECK(strcmp(name, "y") == 0);
    OK(arca_attrs_close(sa));
    OK(arca_dataset_close(od));
    OK(arca_group_close(steps));
    OK(arca_file_check(f, NULL));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

static void test_groups(void) {
    arca_file_t *f;
    arca_group_t *root, *g, *h;
    OK(arca_file_create(path_in("groups.arca"), &f));
    OK(arca_file_root(f, &root));
    char buf[256];
    OK(arca_group_path(root, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "/") == 0);

    OK(arca_group_create(root, "a/b/c", &g));
    OK(arca_group_path(g, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "/a/b/c") == 0);
    OK(arca_group_close(g));
    OK(arca_group_create(root, "z", NULL));
    EXPECT_RC(arca_group_create(root, "z", NULL), ARCA_ERR_EXISTS);
    OK(arca_group_open(root, "/a/b", &g));
    OK(arca_group_open(g, "c", &h));
    OK(arca_group_path(h, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "/a/b/c") == 0);
    OK(arca_group_close(h));
    h = (arca_group_t *)1;
    EXPECT_RC(arca_group_open(g, "nope", &h), ARCA_ERR_NOT_FOUND);
    CHECK(h == NULL);
    CHECK(strstr(arca_last_error(), "nope") != NULL);
    EXPECT_RC(arca_group_open(g, "c", NULL), ARCA_ERR_NULL);

    /* require: existing, new, and over a dataset. */
    OK(arca_group_require(root, "a/b", &h));
    OK(arca_group_close(h));
    OK(arca_group_require(root, "m", NULL));
    uint64_t one = 1;
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT32, 1, &one));
    OK(arca_dataset_create(root, "d", &o, NULL));
    EXPECT_RC(arca_group_require(root, "d", NULL), ARCA_ERR_INVALID);
    EXPECT_RC(arca_group_open(root, "d", &h), ARCA_ERR_NOT_FOUND);

    /* kind and exists */
    int32_t kind = 0, e = -1;
    OK(arca_kind(root, "a/b", &kind));
    CHECK(kind == ARCA_KIND_GROUP);
    OK(arca_kind(root, "d", &kind));
    CHECK(kind == ARCA_KIND_DATASET);
    EXPECT_RC(arca_kind(root, "none", &kind), ARCA_ERR_NOT_FOUND);
    EXPECT_RC(arca_kind(root, "d", NULL), ARCA_ERR_NULL);
    OK(arca_exists(root, "a/b/c", &e));
    CHECK(e == 1);
    OK(arca_exists(root, "a/x", &e));
    CHECK(e == 0);

    /* members by index: a, d, m, z */
    uint64_t n = 0;
    OK(arca_group_count(root, &n));
    CHECK(n == 4);
    const char *want[4] = {"a", "d", "m", "z"};
    int32_t want_kind[4] = {ARCA_KIND_GROUP, ARCA_KIND_DATASET, ARCA_KIND_GROUP, ARCA_KIND_GROUP};
    for (uint64_t i = 0; i < n; i++) {
        size_t need = 0;
        OK(arca_group_member(root, i, NULL, 0, &need, NULL));
        CHECK(need == strlen(want[i]) + 1);
        OK(arca_group_member(root, i, buf, sizeof buf, NULL, &kind));
        CHECK(strcmp(buf, want[i]) == 0);
        CHECK(kind == want_kind[i]);
    }
    EXPECT_RC(arca_group_member(root, 4, buf, sizeof buf, NULL, NULL), ARCA_ERR_NOT_FOUND);
    char tiny[1];
    EXPECT_RC(arca_group_member(root, 0, tiny, 1, NULL, NULL), ARCA_ERR_INVALID);

    /* callback iteration, whole and stopped early */
    struct names ns = {0};
    OK(arca_group_iterate(root, collect, &ns));
    CHECK(ns.n == 4);
    CHECK(strcmp(ns.list[0], "a") == 0 && strcmp(ns.list[3], "z") == 0);
    CHECK(ns.kinds[1] == ARCA_KIND_DATASET);
    memset(&ns, 0, sizeof ns);
    ns.stop_after = 2;
    EXPECT_RC(arca_group_iterate(root, collect, &ns), 42);
    CHECK(ns.n == 2);
    EXPECT_RC(arca_group_iterate(root, NULL, NULL), ARCA_ERR_NULL);

    /* recursive visit: pre-order, depth first, members in name order */
    memset(&ns, 0, sizeof ns);
    OK(arca_group_visit(root, collect, &ns));
    CHECK(ns.n == 6);
    const char *order[6] = {"a", "a/b", "a/b/c", "d", "m", "z"};
    for (int i = 0; i < 6; i++) CHECK(strcmp(ns.list[i], order[i]) == 0);
    CHECK(ns.kinds[3] == ARCA_KIND_DATASET && ns.kinds[2] == ARCA_KIND_GROUP);
    memset(&ns, 0, sizeof ns);
    ns.stop_after = 3;
    EXPECT_RC(arca_group_visit(root, collect, &ns), 42);
    CHECK(ns.n == 3);

    /* move, rename and delete */
    OK(arca_move(root, "a/b/c", "m/c2"));
    OK(arca_exists(root, "m/c2", &e));
    CHECK(e == 1);
    OK(arca_exists(root, "a/b/c", &e));
    CHECK(e == 0);
    OK(arca_move(root, "d", "d2"));
    OK(arca_kind(root, "d2", &kind));
    CHECK(kind == ARCA_KIND_DATASET);
    EXPECT_RC(arca_move(root, "nothing", "x"), ARCA_ERR_NOT_FOUND);
    EXPECT_RC(arca_move(root, "z", "m"), ARCA_ERR_EXISTS);
    EXPECT_RC(arca_move(root, "a", "a/b/inside"), ARCA_ERR_INVALID);
    OK(arca_delete(root, "a"));
    OK(arca_exists(root, "a/b", &e));
    CHECK(e == 0);
    EXPECT_RC(arca_delete(root, "a"), ARCA_ERR_NOT_FOUND);
    OK(arca_group_count(root, &n));
    CHECK(n == 3);
    /* The handle to the deleted group's child is stale but safe to close. */
    OK(arca_group_close(g));

    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

/* ---- datasets -------------------------------------------------------- */

static void test_numeric_types(arca_group_t *root) {
    /* Every numeric type round-trips, in both byte orders. */
    const arca_dtype_t types[] = {ARCA_DTYPE_BOOL,   ARCA_DTYPE_INT8,    ARCA_DTYPE_INT16,
                                  ARCA_DTYPE_INT32,  ARCA_DTYPE_INT64,   ARCA_DTYPE_UINT8,
                                  ARCA_DTYPE_UINT16, ARCA_DTYPE_UINT32,  ARCA_DTYPE_UINT64,
                                  ARCA_DTYPE_FLOAT32, ARCA_DTYPE_FLOAT64};
    const size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
    const int32_t orders[] = {ARCA_ORDER_LITTLE, ARCA_ORDER_BIG};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (int k = 0; k < 2; k++) {
            char name[64];
            snprintf(name, sizeof name, "types/t%d_%d", (int)types[t], orders[k]);
            uint64_t dims[1] = {10};
            arca_dataset_opts_t o;
            OK(arca_dataset_opts_init(&o, types[t], 1, dims));
            o.order = orders[k];
            arca_dataset_t *ds;
            OK(arca_dataset_create(root, name, &o, &ds));
            size_t size = 0;
            OK(arca_dtype_size(types[t], 0, &size));
            CHECK(size == sizes[t]);
            unsigned char in[80], out[80];
            for (size_t i = 0; i < 10 * size; i++) in[i] = (unsigned char)(i * 37 + 1);
            if (types[t] == ARCA_DTYPE_BOOL)
                for (size_t i = 0; i < 10; i++) in[i] = (unsigned char)(i % 2);
            if (types[t] == ARCA_DTYPE_FLOAT32) {
                float v[10];
                for (int i = 0; i < 10; i++) v[i] = (float)i * 1.25f - 3.0f;
                memcpy(in, v, sizeof v);
            }
            if (types[t] == ARCA_DTYPE_FLOAT64) {
                double v[10];
                for (int i = 0; i < 10; i++) v[i] = i * 2.5 - 7.0;
                memcpy(in, v, sizeof v);
            }
            OK(arca_dataset_write(ds, NULL, NULL, NULL, in, 10 * size));
            memset(out, 0, sizeof out);
            OK(arca_dataset_read(ds, NULL, NULL, NULL, out, sizeof out));
            CHECK(memcmp(in, out, 10 * size) == 0);
            arca_dtype_t dt;
            int32_t order;
            size_t es;
            OK(arca_dataset_dtype(ds, &dt, &order, &es));
            CHECK(dt == types[t]);
            CHECK(es == sizes[t]);
            CHECK(order == (sizes[t] > 1 ? orders[k] : ARCA_ORDER_NATIVE));
            OK(arca_dataset_close(ds));
        }
    }
    /* Big-endian values read back as native numbers, and say so. */
    uint64_t dims[1] = {3};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT32, 1, dims));
    o.order = ARCA_ORDER_BIG;
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "be", &o, &ds));
    int32_t v[3] = {1, -2, 0x01020304}, back[3] = {0};
    OK(arca_dataset_write(ds, NULL, NULL, NULL, v, sizeof v));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, back, sizeof back));
    CHECK(back[0] == 1 && back[1] == -2 && back[2] == 0x01020304);
    char ts[16];
    OK(arca_dataset_dtype_str(ds, ts, sizeof ts, NULL));
    CHECK(strcmp(ts, ">i4") == 0);
    OK(arca_dataset_close(ds));

    /* Unknown codes. */
    OK(arca_dataset_opts_init(&o, 99, 1, dims));
    EXPECT_RC(arca_dataset_create(root, "bad", &o, NULL), ARCA_ERR_INVALID);
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT32, 1, dims));
    o.order = 7;
    EXPECT_RC(arca_dataset_create(root, "bad", &o, NULL), ARCA_ERR_INVALID);
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_VLEN, 1, dims));
    EXPECT_RC(arca_dataset_create(root, "bad", &o, NULL), ARCA_ERR_UNSUPPORTED);
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_STRING, 1, dims));
    EXPECT_RC(arca_dataset_create(root, "bad", &o, NULL), ARCA_ERR_INVALID); /* str_len 0 */
    size_t s;
    EXPECT_RC(arca_dtype_size(0, 0, &s), ARCA_ERR_INVALID);
    OK(arca_dtype_size(ARCA_DTYPE_STRING, 9, &s));
    CHECK(s == 9);
}

static void test_chunked_2d(arca_group_t *root) {
    /* 12 x 10 float64 with every filter pipeline; strided hyperslabs. */
    const arca_filter_t pipes[][2] = {
        {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_GZIP, 6}},
        {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}},
        {{ARCA_FILTER_LZ4, 0}, {0, 0}},
        {{ARCA_FILTER_ZSTD, -3}, {0, 0}},
    };
    const size_t npipe[] = {2, 2, 1, 1};
    double all[12][10];
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 10; j++) all[i][j] = i * 100 + j + 0.5;
    for (int p = 0; p < 4; p++) {
        char name[32];
        snprintf(name, sizeof name, "grid%d", p);
        uint64_t dims[2] = {12, 10}, chunks[2] = {5, 4};
        arca_dataset_opts_t o;
        OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 2, dims));
        o.chunks = chunks;
        o.filters = pipes[p];
        o.nfilters = npipe[p];
        arca_dataset_t *ds;
        OK(arca_dataset_create(root, name, &o, &ds));
        OK(arca_dataset_write(ds, NULL, NULL, NULL, all, sizeof all));

        /* rows 1,4,7,10 x columns 2,5,8 */
        uint64_t start[2] = {1, 2}, count[2] = {4, 3}, step[2] = {3, 3};
        double sub[4][3];
        OK(arca_dataset_read(ds, start, count, step, sub, sizeof sub));
        int good = 1;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++)
                if (sub[i][j] != all[1 + 3 * i][2 + 3 * j]) good = 0;
        CHECK(good);

        /* NULL count reads to the end: rows 9..11, columns 6..9 */
        uint64_t s2[2] = {9, 6};
        double tail[3][4];
        OK(arca_dataset_read(ds, s2, NULL, NULL, tail, sizeof tail));
        CHECK(tail[0][0] == all[9][6] && tail[2][3] == all[11][9]);

        /* a strided write, read back through the whole array */
        double patch[2][2] = {{-1, -2}, {-3, -4}};
        uint64_t ps[2] = {0, 0}, pc[2] = {2, 2}, pst[2] = {11, 9};
        OK(arca_dataset_write(ds, ps, pc, pst, patch, sizeof patch));
        double back[12][10];
        OK(arca_dataset_read(ds, NULL, NULL, NULL, back, sizeof back));
        CHECK(back[0][0] == -1 && back[0][9] == -2 && back[11][0] == -3 && back[11][9] == -4);
        CHECK(back[5][5] == all[5][5]);

        /* creation options read back */
        uint64_t c[ARCA_MAX_RANK];
        int32_t chunked = -1;
        OK(arca_dataset_chunks(ds, c, ARCA_MAX_RANK, &chunked));
        CHECK(chunked == 1 && c[0] == 5 && c[1] == 4);
        arca_filter_t fl[8];
        size_t nf = 0;
        OK(arca_dataset_filters(ds, fl, 8, &nf));
        CHECK(nf == npipe[p]);
        CHECK(fl[0].id == pipes[p][0].id);
        if (npipe[p] == 2) CHECK(fl[1].id == pipes[p][1].id && fl[1].level == pipes[p][1].level);
        if (pipes[p][0].id == ARCA_FILTER_ZSTD) CHECK(fl[0].level == -3);
        EXPECT_RC(arca_dataset_filters(ds, fl, 0, &nf), npipe[p] ? ARCA_ERR_INVALID : ARCA_OK);
        OK(arca_dataset_filters(ds, NULL, 0, &nf));
        uint64_t stored = 0;
        OK(arca_dataset_storage_size(ds, &stored));
        CHECK(stored > 0);
        OK(arca_dataset_close(ds));
    }

    /* Bad pipelines. */
    uint64_t dims[1] = {8};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT16, 1, dims));
    arca_filter_t two[2] = {{ARCA_FILTER_GZIP, 1}, {ARCA_FILTER_ZSTD, 1}};
    o.filters = two;
    o.nfilters = 2;
    EXPECT_RC(arca_dataset_create(root, "badpipe", &o, NULL), ARCA_ERR_INVALID);
    arca_filter_t lvl[1] = {{ARCA_FILTER_GZIP, 12}};
    o.filters = lvl;
    o.nfilters = 1;
    EXPECT_RC(arca_dataset_create(root, "badpipe", &o, NULL), ARCA_ERR_INVALID);
    lvl[0].level = -1;
    EXPECT_RC(arca_dataset_create(root, "badpipe", &o, NULL), ARCA_ERR_INVALID);
    arca_filter_t unk[1] = {{77, 0}};
    o.filters = unk;
    EXPECT_RC(arca_dataset_create(root, "badpipe", &o, NULL), ARCA_ERR_INVALID);
    o.filters = NULL; /* NULL with a count */
    EXPECT_RC(arca_dataset_create(root, "badpipe", &o, NULL), ARCA_ERR_NULL);
    int32_t exists = 1;
    OK(arca_exists(root, "badpipe", &exists));
    CHECK(exists == 0);
}

static void test_resize_and_fill(arca_group_t *root) {
    uint64_t dims[2] = {0, 4}, maxd[2] = {ARCA_UNLIMITED, 4}, chunks[2] = {3, 4};
    int32_t fill = -7;
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT32, 2, dims));
    o.maxdims = maxd;
    o.chunks = chunks;
    o.fill_value = &fill;
    o.fill_size = sizeof fill;
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "log", &o, &ds));
    int32_t rank = -1;
    OK(arca_dataset_rank(ds, &rank));
    CHECK(rank == 2);
    uint64_t d[ARCA_MAX_RANK], m[ARCA_MAX_RANK];
    OK(arca_dataset_dims(ds, d, m, ARCA_MAX_RANK));
    CHECK(d[0] == 0 && d[1] == 4 && m[0] == ARCA_UNLIMITED && m[1] == 4);
    EXPECT_RC(arca_dataset_dims(ds, d, NULL, 1), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_dims(ds, NULL, NULL, 2), ARCA_ERR_NULL);
    int32_t f2 = 0;
    OK(arca_dataset_fill_value(ds, &f2, sizeof f2));
    CHECK(f2 == -7);
    EXPECT_RC(arca_dataset_fill_value(ds, &f2, 2), ARCA_ERR_INVALID);

    /* append rows in three steps */
    for (int step = 0; step < 3; step++) {
        uint64_t nd[2] = {(uint64_t)(step + 1) * 2, 4};
        OK(arca_dataset_resize(ds, nd));
        int32_t rows[2][4];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++) rows[i][j] = step * 100 + i * 10 + j;
        uint64_t start[2] = {(uint64_t)step * 2, 0}, count[2] = {2, 4};
        OK(arca_dataset_write(ds, start, count, NULL, rows, sizeof rows));
    }
    OK(arca_dataset_dims(ds, d, NULL, 2));
    CHECK(d[0] == 6);
    /* grow past the data: the new rows show the fill value */
    uint64_t grown[2] = {8, 4};
    OK(arca_dataset_resize(ds, grown));
    int32_t all[8][4];
    OK(arca_dataset_read(ds, NULL, NULL, NULL, all, sizeof all));
    CHECK(all[0][0] == 0 && all[3][2] == 112 && all[5][3] == 213);
    CHECK(all[6][0] == -7 && all[7][3] == -7);
    /* shrink, then grow back: the cut rows are gone */
    uint64_t shrunk[2] = {1, 4};
    OK(arca_dataset_resize(ds, shrunk));
    OK(arca_dataset_resize(ds, grown));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, all, sizeof all));
    CHECK(all[0][3] == 3 && all[1][0] == -7 && all[5][3] == -7);
    uint64_t wide[2] = {8, 5};
    EXPECT_RC(arca_dataset_resize(ds, wide), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_resize(ds, NULL), ARCA_ERR_NULL);
    OK(arca_dataset_close(ds));

    /* wrong fill size */
    uint64_t one[1] = {4};
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT64, 1, one));
    o.fill_value = &fill;
    o.fill_size = sizeof fill;
    EXPECT_RC(arca_dataset_create(root, "badfill", &o, NULL), ARCA_ERR_INVALID);

    /* contiguous datasets cannot be resized and report no chunks */
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT32, 1, one));
    OK(arca_dataset_create(root, "fixed", &o, &ds));
    EXPECT_RC(arca_dataset_resize(ds, one), ARCA_ERR_INVALID);
    int32_t chunked = -1;
    OK(arca_dataset_chunks(ds, NULL, 0, &chunked));
    CHECK(chunked == 0);
    float zeros[4] = {1, 1, 1, 1};
    OK(arca_dataset_read(ds, NULL, NULL, NULL, zeros, sizeof zeros));
    CHECK(zeros[0] == 0 && zeros[3] == 0);
    OK(arca_dataset_close(ds));
}

static void test_scalar_and_strings(arca_group_t *root) {
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 0, NULL));
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "pi", &o, &ds));
    double pi = 3.14159, back = 0;
    OK(arca_dataset_write(ds, NULL, NULL, NULL, &pi, sizeof pi));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, &back, sizeof back));
    CHECK(back == pi);
    int32_t rank = -1;
    OK(arca_dataset_rank(ds, &rank));
    CHECK(rank == 0);
    OK(arca_dataset_dims(ds, NULL, NULL, 0));
    OK(arca_dataset_close(ds));

    uint64_t dims[1] = {3};
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_STRING, 1, dims));
    o.str_len = 6;
    OK(arca_dataset_create(root, "labels", &o, &ds));
    const char in[18] = "alpha\0beta\0\0gamma\0";
    char out[18];
    OK(arca_dataset_write(ds, NULL, NULL, NULL, in, sizeof in));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, out, sizeof out));
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK(strcmp(out + 12, "gamma") == 0);
    arca_dtype_t dt;
    size_t es;
    OK(arca_dataset_dtype(ds, &dt, NULL, &es));
    CHECK(dt == ARCA_DTYPE_STRING && es == 6);
    OK(arca_dataset_close(ds));
}

static void test_bad_hyperslabs(arca_group_t *root) {
    uint64_t dims[2] = {4, 5};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_UINT16, 2, dims));
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "slab", &o, &ds));
    uint16_t buf[20] = {0};
    uint64_t start[2] = {3, 0}, count[2] = {2, 5}, step[2] = {1, 1};
    EXPECT_RC(arca_dataset_read(ds, start, count, step, buf, sizeof buf), ARCA_ERR_INVALID);
    CHECK(strstr(arca_last_error(), "bounds") != NULL);
    EXPECT_RC(arca_dataset_write(ds, start, count, step, buf, sizeof buf), ARCA_ERR_INVALID);
    uint64_t zstep[2] = {0, 1};
    start[0] = 0;
    EXPECT_RC(arca_dataset_read(ds, start, count, zstep, buf, sizeof buf), ARCA_ERR_INVALID);
    uint64_t step3[2] = {3, 1}, step4[2] = {4, 1};
    OK(arca_dataset_read(ds, start, count, step3, buf, sizeof buf)); /* rows 0 and 3 */
    EXPECT_RC(arca_dataset_read(ds, start, count, step4, buf, sizeof buf), ARCA_ERR_INVALID);
    /* the buffer is smaller than the selection */
    EXPECT_RC(arca_dataset_read(ds, NULL, NULL, NULL, buf, sizeof buf - 1), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_write(ds, NULL, NULL, NULL, buf, 10), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_read(ds, NULL, NULL, NULL, NULL, sizeof buf), ARCA_ERR_NULL);
    /* start beyond the extent with count "to the end" */
    uint64_t far[2] = {9, 0};
    EXPECT_RC(arca_dataset_read(ds, far, NULL, NULL, buf, sizeof buf), ARCA_ERR_INVALID);
    /* an empty selection is fine */
    uint64_t none[2] = {0, 5};
    OK(arca_dataset_read(ds, NULL, none, NULL, NULL, 0));
    /* counts whose product overflows */
    uint64_t huge[2] = {UINT64_MAX / 2, 4};
    EXPECT_RC(arca_dataset_read(ds, NULL, huge, NULL, buf, sizeof buf), ARCA_ERR_INVALID);
    OK(arca_dataset_close(ds));
    EXPECT_RC(arca_dataset_open(root, "nope", &ds), ARCA_ERR_NOT_FOUND);
    CHECK(ds == NULL);
    EXPECT_RC(arca_dataset_open(root, "/", &ds), ARCA_ERR_NOT_FOUND);
}

/* Layouts: chosen by size, or asked for; a bad choice is refused. */
static void test_layouts(arca_group_t *root) {
    uint64_t small[1] = {4}, large[1] = {1000};
    arca_dataset_opts_t o;
    arca_dataset_t *ds;
    int32_t layout = -1;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 1, small));
    CHECK(o.layout == ARCA_LAYOUT_AUTO);
    OK(arca_dataset_create(root, "lay_small", &o, &ds));
    OK(arca_dataset_layout(ds, &layout));
    CHECK(layout == ARCA_LAYOUT_COMPACT);
    double v[4] = {1, 2, 3, 4}, back[4] = {0};
    OK(arca_dataset_write(ds, NULL, NULL, NULL, v, sizeof v));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, back, sizeof back));
    CHECK(back[3] == 4);
    OK(arca_dataset_close(ds));
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 1, large));
    OK(arca_dataset_create(root, "lay_large", &o, &ds));
    OK(arca_dataset_layout(ds, &layout));
    CHECK(layout == ARCA_LAYOUT_CONTIGUOUS);
    OK(arca_dataset_close(ds));
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 1, small));
    o.layout = ARCA_LAYOUT_CHUNKED;
    OK(arca_dataset_create(root, "lay_chunked", &o, &ds));
    OK(arca_dataset_layout(ds, &layout));
    CHECK(layout == ARCA_LAYOUT_CHUNKED);
    OK(arca_dataset_close(ds));
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT64, 1, large));
    o.layout = ARCA_LAYOUT_COMPACT; /* 8000 bytes: too large for a header */
    EXPECT_RC(arca_dataset_create(root, "bad", &o, NULL), ARCA_ERR_INVALID);
    o.layout = 9;
    EXPECT_RC(arca_dataset_create(root, "bad", &o, NULL), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_layout(NULL, &layout), ARCA_ERR_NULL);
}

/* Compound, array, enum, complex and half-precision types through type strings. */
struct row {
    double t;
    int32_t id;
    uint8_t flag; /* an enum */
    uint8_t pad[3];
    float xy[2];
    double complex_part[2];
};
#define ROW_TYPE                                                                     \
    "struct(40){\"t\"@0:<f8,\"id\"@8:>i4,\"flag\"@12:enum(|u1){\"OFF\":0,\"ON\":1}," \
    "\"xy\"@16:[2]<f4,\"z\"@24:<c16}"

static void test_structured_types(arca_group_t *root) {
    size_t size = 0;
    OK(arca_type_size(ROW_TYPE, &size));
    CHECK(size == sizeof(struct row));
    EXPECT_RC(arca_type_size("struct(4){\"a\"@2:<f4}", &size), ARCA_ERR_INVALID);
    EXPECT_RC(arca_type_size("nonsense", &size), ARCA_ERR_INVALID);

    uint64_t n[1] = {5}, ch[1] = {2};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_COMPOUND, 1, n));
    EXPECT_RC(arca_dataset_create(root, "rows", &o, NULL), ARCA_ERR_INVALID); /* needs members */
    o.type_str = ROW_TYPE;
    o.chunks = ch;
    arca_filter_t fl[1] = {{ARCA_FILTER_ZSTD, 3}};
    o.filters = fl;
    o.nfilters = 1;
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "rows", &o, &ds));
    struct row rows[5], back[5];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 5; i++) {
        rows[i].t = i * 0.5;
        rows[i].id = -i;
        rows[i].flag = (uint8_t)(i % 2);
        rows[i].xy[0] = (float)i;
        rows[i].xy[1] = (float)-i;
        rows[i].complex_part[0] = i;
        rows[i].complex_part[1] = 2.0 * i;
    }
    OK(arca_dataset_write(ds, NULL, NULL, NULL, rows, sizeof rows));
    memset(back, 0xff, sizeof back);
    OK(arca_dataset_read(ds, NULL, NULL, NULL, back, sizeof back));
    for (int i = 0; i < 5; i++) {
        CHECK(back[i].t == rows[i].t && back[i].id == rows[i].id && back[i].flag == rows[i].flag);
        CHECK(back[i].xy[1] == rows[i].xy[1] && back[i].complex_part[1] == rows[i].complex_part[1]);
    }
    arca_dtype_t code;
    int32_t order;
    size_t elem;
    OK(arca_dataset_dtype(ds, &code, &order, &elem));
    CHECK(code == ARCA_DTYPE_COMPOUND && elem == sizeof(struct row));
    char t[256];
    size_t needed = 0;
    OK(arca_dataset_dtype_str(ds, t, sizeof t, &needed));
    CHECK(strcmp(t, ROW_TYPE) == 0);

    /* The same row as an attribute, and a half-precision array. */
    arca_attrs_t *a;
    OK(arca_dataset_attrs(ds, &a));
    OK(arca_attr_write_typed(a, "first", ROW_TYPE, 0, NULL, &rows[1], sizeof rows[1]));
    EXPECT_RC(arca_attr_write_typed(a, "short", ROW_TYPE, 0, NULL, &rows[1], 8), ARCA_ERR_INVALID);
    EXPECT_RC(arca_attr_write_typed(a, "v", "vlen:str", 0, NULL, "", 0), ARCA_ERR_UNSUPPORTED);
    uint16_t halves[3] = {0x3c00, 0xc000, 0x3800}; /* 1, -2, 0.5 */
    uint64_t three = 3;
    OK(arca_attr_write(a, "h", ARCA_DTYPE_FLOAT16, ARCA_ORDER_BIG, 1, &three, halves, sizeof halves));
    struct row one;
    OK(arca_attr_read(a, "first", &one, sizeof one));
    CHECK(one.id == -1 && one.xy[0] == 1.0f);
    OK(arca_attr_dtype_str(a, "h", t, sizeof t, NULL));
    CHECK(strcmp(t, ">f2") == 0);
    arca_attr_info_t info;
    OK(arca_attr_info(a, "h", &info));
    CHECK(info.dtype == ARCA_DTYPE_FLOAT16 && info.order == ARCA_ORDER_BIG && info.elem_size == 2);
    uint16_t hb[3];
    OK(arca_attr_read(a, "h", hb, sizeof hb));
    CHECK(hb[1] == 0xc000);
    OK(arca_attrs_close(a));
    OK(arca_dataset_close(ds));

    /* Complex numbers by code. */
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_COMPLEX64, 1, n));
    o.order = ARCA_ORDER_BIG;
    OK(arca_dataset_create(root, "z", &o, &ds));
    float z[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, zb[10];
    OK(arca_dataset_write(ds, NULL, NULL, NULL, z, sizeof z));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, zb, sizeof zb));
    CHECK(memcmp(z, zb, sizeof z) == 0);
    OK(arca_dataset_dtype_str(ds, t, sizeof t, NULL));
    CHECK(strcmp(t, ">c8") == 0);
    OK(arca_dataset_close(ds));
}

/* Every kind of type through the C API: random bytes (a seeded generator)
 * written to contiguous and chunked, compressed datasets and attributes,
 * read back equal after a reopen. Elements cross in native order, so any
 * bit pattern must come back. */
static const char *const TYPE_STRINGS[] = {
    "|b1", "|i1", ">u1", "<i2", ">u2", "<i4", ">u4", "<i8", ">i8", "<f2", ">f2", "<f4", ">f8",
    "<c8", ">c16", "|S5", "|V3", "opaque(6,\"blob\")", "enum(<i2){\"a\":-1,\"b\":2}",
    "[2,3]>f4", "[4]<c8", "ref",
    "struct(24){\"x\"@0:<f8,\"y\"@8:>i4,\"z\"@16:[2]<f2,\"ok\"@22:|b1}",
    "struct(13){\"in\"@1:struct(8){\"p\"@0:>u4,\"q\"@4:<f4},\"s\"@9:|S4}",
};

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void test_random_types(void) {
    size_t ntypes = sizeof TYPE_STRINGS / sizeof TYPE_STRINGS[0];
    uint64_t seed = 20261125;
    uint64_t n[1] = {37}, ch[1] = {8};
    unsigned char *want[sizeof TYPE_STRINGS / sizeof TYPE_STRINGS[0]];
    size_t sizes[sizeof TYPE_STRINGS / sizeof TYPE_STRINGS[0]];
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_create(path_in("types.arca"), &f));
    OK(arca_file_root(f, &root));
    for (size_t t = 0; t < ntypes; t++) {
        OK(arca_type_size(TYPE_STRINGS[t], &sizes[t]));
        size_t bytes = sizes[t] * n[0];
        want[t] = malloc(bytes);
        CHECK(want[t] != NULL);
        for (size_t i = 0; i < bytes; i++) want[t][i] = (unsigned char)lcg(&seed);
        char name[32];
        for (int chunked = 0; chunked < 2; chunked++) {
            arca_dataset_opts_t o;
            OK(arca_dataset_opts_init(&o, ARCA_DTYPE_UINT8, 1, n));
            o.type_str = TYPE_STRINGS[t];
            arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 1}};
            if (chunked) {
                o.chunks = ch;
                o.filters = fl;
                o.nfilters = 2;
            }
            snprintf(name, sizeof name, "t%zu_%d", t, chunked);
            arca_dataset_t *ds;
            OK(arca_dataset_create(root, name, &o, &ds));
            OK(arca_dataset_write(ds, NULL, NULL, NULL, want[t], bytes));
            OK(arca_dataset_close(ds));
        }
        arca_attrs_t *a;
        OK(arca_group_attrs(root, &a));
        snprintf(name, sizeof name, "a%zu", t);
        OK(arca_attr_write_typed(a, name, TYPE_STRINGS[t], 1, n, want[t], bytes));
        OK(arca_attrs_close(a));
    }
    OK(arca_group_close(root));
    OK(arca_file_close(f));

    OK(arca_file_open(path_in("types.arca"), "r", &f));
    OK(arca_file_root(f, &root));
    for (size_t t = 0; t < ntypes; t++) {
        size_t bytes = sizes[t] * n[0];
        unsigned char *got = malloc(bytes);
        CHECK(got != NULL);
        char name[32], ts[256];
        for (int chunked = 0; chunked < 2; chunked++) {
            snprintf(name, sizeof name, "t%zu_%d", t, chunked);
            arca_dataset_t *ds;
            OK(arca_dataset_open(root, name, &ds));
            memset(got, 0xA5, bytes);
            OK(arca_dataset_read(ds, NULL, NULL, NULL, got, bytes));
            CHECK(memcmp(got, want[t], bytes) == 0);
            OK(arca_dataset_dtype_str(ds, ts, sizeof ts, NULL));
            CHECK(strcmp(ts, TYPE_STRINGS[t]) == 0); /* each is in canonical form */
            OK(arca_dataset_close(ds));
        }
        arca_attrs_t *a;
        OK(arca_group_attrs(root, &a));
        snprintf(name, sizeof name, "a%zu", t);
        memset(got, 0xA5, bytes);
        OK(arca_attr_read(a, name, got, bytes));
        CHECK(memcmp(got, want[t], bytes) == 0);
        OK(arca_attrs_close(a));
        free(got);
        free(want[t]);
    }
    OK(arca_file_check(f, NULL));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

/* A compound with a string and a sequence member, through the rows form. */
#define EVENT_TYPE "struct(40){\"t\"@0:<f8,\"name\"@8:vlen:str,\"hits\"@24:vlen:<u2}"

static void put_record(unsigned char *at, uint64_t off, uint64_t len) {
    memcpy(at, &off, 8);
    memcpy(at + 8, &len, 8);
}

static void test_rows(void) {
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_create(path_in("rows.arca"), &f));
    OK(arca_file_root(f, &root));
    uint64_t n[1] = {3};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_COMPOUND, 1, n));
    o.type_str = EVENT_TYPE;
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "events", &o, &ds));
    /* Three elements; values: "north", hits {3, 9}, "", {}, "é", {1}. */
    unsigned char buf[120 + 5 + 4 + 2 + 2];
    memset(buf, 0, sizeof buf);
    const char *names[3] = {"north", "", "\xc3\xa9"};
    uint16_t hits[3][2] = {{3, 9}, {0, 0}, {1, 0}};
    size_t nh[3] = {2, 0, 1};
    size_t at = 120;
    for (int i = 0; i < 3; i++) {
        double t = 0.5 * i;
        memcpy(buf + 40 * i, &t, 8);
        size_t l = strlen(names[i]);
        put_record(buf + 40 * i + 8, at - 120, l);
        memcpy(buf + at, names[i], l);
        at += l;
        put_record(buf + 40 * i + 24, at - 120, 2 * nh[i]);
        memcpy(buf + at, hits[i], 2 * nh[i]);
        at += 2 * nh[i];
    }
    CHECK(at == sizeof buf);
    OK(arca_dataset_write_rows(ds, NULL, NULL, NULL, buf, at));
    double tmp[15];
    EXPECT_RC(arca_dataset_read(ds, NULL, NULL, NULL, tmp, sizeof tmp), ARCA_ERR_UNSUPPORTED);
    /* A record past the values is refused and changes nothing. */
    unsigned char bad[40 + 2] = {0};
    put_record(bad + 8, 0, 5);
    uint64_t one = 1;
    EXPECT_RC(arca_dataset_write_rows(ds, NULL, &one, NULL, bad, sizeof bad), ARCA_ERR_INVALID);
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(f));

    OK(arca_file_open(path_in("rows.arca"), "r", &f));
    OK(arca_file_root(f, &root));
    OK(arca_dataset_open(root, "events", &ds));
    void *rows = NULL;
    size_t len = 0;
    OK(arca_dataset_read_rows(ds, NULL, NULL, NULL, &rows, &len));
    CHECK(len == sizeof buf && memcmp(rows, buf, len) == 0);
    arca_buffer_free(rows, len);
    uint64_t start[1] = {2};
    OK(arca_dataset_read_rows(ds, start, &one, NULL, &rows, &len));
    CHECK(len == 40 + 2 + 2 && memcmp((char *)rows + 40, "\xc3\xa9", 2) == 0);
    arca_buffer_free(rows, len);
    EXPECT_RC(arca_dataset_read_rows(ds, NULL, NULL, NULL, NULL, &len), ARCA_ERR_NULL);
    arca_buffer_free(NULL, 0);
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

static void test_datasets(void) {
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_create(path_in("datasets.arca"), &f));
    OK(arca_file_root(f, &root));
    test_numeric_types(root);
    test_chunked_2d(root);
    test_resize_and_fill(root);
    test_scalar_and_strings(root);
    test_bad_hyperslabs(root);
    test_layouts(root);
    test_structured_types(root);
    OK(arca_file_check(f, NULL));
    OK(arca_group_close(root));
    OK(arca_file_close(f));

    /* Everything survives a reopen. */
    OK(arca_file_open(path_in("datasets.arca"), "r", &f));
    OK(arca_file_root(f, &root));
    arca_dataset_t *ds;
    OK(arca_dataset_open(root, "/log", &ds));
    int32_t all[8][4];
    OK(arca_dataset_read(ds, NULL, NULL, NULL, all, sizeof all));
    CHECK(all[0][3] == 3 && all[7][3] == -7);
    OK(arca_dataset_close(ds));
    OK(arca_dataset_open(root, "grid1", &ds));
    double v = 0;
    uint64_t s[2] = {5, 5}, c[2] = {1, 1};
    OK(arca_dataset_read(ds, s, c, NULL, &v, sizeof v));
    CHECK(v == 505.5);
    char p[64];
    OK(arca_dataset_path(ds, p, sizeof p, NULL));
    CHECK(strcmp(p, "/grid1") == 0);
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

/* ---- attributes ------------------------------------------------------ */

static void check_attrs(arca_attrs_t *a) {
    double gain = 0;
    OK(arca_attr_read(a, "gain", &gain, sizeof gain));
    CHECK(gain == 1.5);
    arca_attr_info_t info;
    OK(arca_attr_info(a, "roi", &info));
    CHECK(info.dtype == ARCA_DTYPE_INT32 && info.order == ARCA_ORDER_BIG);
    CHECK(info.rank == 2 && info.shape[0] == 2 && info.shape[1] == 2);
    CHECK(info.nelems == 4 && info.elem_size == 4 && info.nbytes == 16);
    int32_t roi[4] = {0};
    OK(arca_attr_read(a, "roi", roi, sizeof roi));
    CHECK(roi[0] == 1 && roi[1] == -2 && roi[2] == 300000 && roi[3] == -400000);
    uint64_t big = 0;
    OK(arca_attr_read(a, "big", &big, sizeof big));
    CHECK(big == UINT64_MAX - 1);
    uint8_t flag = 9;
    OK(arca_attr_read(a, "flag", &flag, sizeof flag));
    CHECK(flag == 1);
    char units[16];
    size_t need = 0;
    OK(arca_attr_read_string(a, "units", NULL, 0, &need));
    CHECK(need == 4);
    OK(arca_attr_read_string(a, "units", units, sizeof units, NULL));
    CHECK(strcmp(units, "m/s") == 0);
    EXPECT_RC(arca_attr_read_string(a, "units", units, 3, NULL), ARCA_ERR_INVALID);
    char *s = NULL;
    OK(arca_attr_read_string_alloc(a, "units", &s));
    CHECK(s && strcmp(s, "m/s") == 0);
    arca_string_free(s);
    OK(arca_attr_info(a, "units", &info));
    CHECK(info.dtype == ARCA_DTYPE_STRING && info.rank == 0 && info.nbytes == 3);
    float fs[3];
    OK(arca_attr_read(a, "fs", fs, sizeof fs));
    CHECK(fs[0] == 0.5f && fs[2] == -2.0f);
}

static void test_attributes(void) {
    arca_file_t *f;
    arca_group_t *root;
    arca_dataset_t *ds;
    arca_attrs_t *ga, *da;
    const char *p = path_in("attrs.arca");
    OK(arca_file_create(p, &f));
    OK(arca_file_root(f, &root));
    uint64_t n1 = 1;
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT8, 1, &n1));
    OK(arca_dataset_create(root, "g/ds", &o, &ds));
    OK(arca_group_attrs(root, &ga));
    OK(arca_dataset_attrs(ds, &da));

    arca_attrs_t *both[2] = {ga, da};
    for (int k = 0; k < 2; k++) {
        arca_attrs_t *a = both[k];
        double gain = 1.5;
        OK(arca_attr_write(a, "gain", ARCA_DTYPE_FLOAT64, ARCA_ORDER_NATIVE, 0, NULL, &gain,
                           sizeof gain));
        int32_t roi[4] = {1, -2, 300000, -400000};
        uint64_t shape[2] = {2, 2};
        OK(arca_attr_write(a, "roi", ARCA_DTYPE_INT32, ARCA_ORDER_BIG, 2, shape, roi,
                           sizeof roi));
        uint64_t big = UINT64_MAX - 1;
        OK(arca_attr_write(a, "big", ARCA_DTYPE_UINT64, ARCA_ORDER_LITTLE, 0, NULL, &big,
                           sizeof big));
        uint8_t flag = 1;
        OK(arca_attr_write(a, "flag", ARCA_DTYPE_BOOL, ARCA_ORDER_NATIVE, 0, NULL, &flag, 1));
        float fs[3] = {0.5f, 1.0f, -2.0f};
        uint64_t n3 = 3;
        OK(arca_attr_write(a, "fs", ARCA_DTYPE_FLOAT32, ARCA_ORDER_NATIVE, 1, &n3, fs,
                           sizeof fs));
        OK(arca_attr_write_string(a, "units", "m/s"));
        /* an array of fixed-length strings */
        const char names[8] = "abcdwxyz";
        uint64_t n2 = 2;
        OK(arca_attr_write(a, "names", ARCA_DTYPE_STRING, ARCA_ORDER_NATIVE, 1, &n2, names, 8));
        arca_attr_info_t info;
        OK(arca_attr_info(a, "names", &info));
        CHECK(info.elem_size == 4 && info.nelems == 2);
        EXPECT_RC(arca_attr_write(a, "names", ARCA_DTYPE_STRING, ARCA_ORDER_NATIVE, 1, &n2,
                                  names, 7),
                  ARCA_ERR_INVALID);
        check_attrs(a);

        /* errors */
        EXPECT_RC(arca_attr_write(a, "gain", ARCA_DTYPE_FLOAT64, ARCA_ORDER_NATIVE, 0, NULL,
                                  &gain, 4),
                  ARCA_ERR_INVALID);
        EXPECT_RC(arca_attr_write(a, "x", ARCA_DTYPE_INT32, ARCA_ORDER_NATIVE, 40, shape, roi,
                                  sizeof roi),
                  ARCA_ERR_INVALID);
        EXPECT_RC(arca_attr_write(a, "", ARCA_DTYPE_INT32, ARCA_ORDER_NATIVE, 0, NULL, roi, 4),
                  ARCA_ERR_INVALID);
        EXPECT_RC(arca_attr_write(a, "x", ARCA_DTYPE_INT32, ARCA_ORDER_NATIVE, 0, NULL, NULL, 4),
                  ARCA_ERR_NULL);
        EXPECT_RC(arca_attr_read(a, "missing", &gain, sizeof gain), ARCA_ERR_NOT_FOUND);
        EXPECT_RC(arca_attr_read(a, "roi", roi, 8), ARCA_ERR_INVALID);
        char buf[16];
        EXPECT_RC(arca_attr_read_string(a, "gain", buf, sizeof buf, NULL), ARCA_ERR_INVALID);
        arca_attr_info_t info2;
        EXPECT_RC(arca_attr_info(a, "missing", &info2), ARCA_ERR_NOT_FOUND);
        EXPECT_RC(arca_attr_info(a, "gain", NULL), ARCA_ERR_NULL);

        /* names, count, exists, rename, delete */
        uint64_t n = 0;
        OK(arca_attr_count(a, &n));
        CHECK(n == 7);
        const char *want[7] = {"big", "flag", "fs", "gain", "names", "roi", "units"};
        for (uint64_t i = 0; i < n; i++) {
            OK(arca_attr_name(a, i, buf, sizeof buf, NULL));
            CHECK(strcmp(buf, want[i]) == 0);
        }
        EXPECT_RC(arca_attr_name(a, 7, buf, sizeof buf, NULL), ARCA_ERR_NOT_FOUND);
        int32_t e = -1;
        OK(arca_attr_exists(a, "gain", &e));
        CHECK(e == 1);
        OK(arca_attr_rename(a, "gain", "gain2"));
        OK(arca_attr_exists(a, "gain", &e));
        CHECK(e == 0);
        EXPECT_RC(arca_attr_rename(a, "gain2", "roi"), ARCA_ERR_EXISTS);
        EXPECT_RC(arca_attr_rename(a, "gone", "x"), ARCA_ERR_NOT_FOUND);
        OK(arca_attr_rename(a, "gain2", "gain"));
        OK(arca_attr_write_string(a, "tmp", ""));
        OK(arca_attr_read_string(a, "tmp", buf, sizeof buf, NULL));
        CHECK(buf[0] == '\0');
        OK(arca_attr_delete(a, "tmp"));
        EXPECT_RC(arca_attr_delete(a, "tmp"), ARCA_ERR_NOT_FOUND);
        OK(arca_attr_count(a, &n));
        CHECK(n == 7);
    }
    OK(arca_attrs_close(ga));
    OK(arca_attrs_close(da));
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(f));

    /* Reopen read-only: values intact, writes refused. */
    OK(arca_file_open(p, "r", &f));
    OK(arca_file_root(f, &root));
    OK(arca_group_attrs(root, &ga));
    check_attrs(ga);
    OK(arca_dataset_open(root, "g/ds", &ds));
    OK(arca_dataset_attrs(ds, &da));
    check_attrs(da);
    double x = 2;
    EXPECT_RC(arca_attr_write(ga, "new", ARCA_DTYPE_FLOAT64, ARCA_ORDER_NATIVE, 0, NULL, &x,
                              sizeof x),
              ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_attr_write_string(da, "units", "km"), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_attr_delete(ga, "gain"), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_attr_rename(ga, "gain", "g"), ARCA_ERR_READ_ONLY);
    OK(arca_attrs_close(ga));
    OK(arca_attrs_close(da));
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

/* ---- read-only files, stat, closed files ----------------------------- */

static void test_read_only_and_stat(void) {
    const char *p = path_in("ro.arca");
    arca_file_t *f;
    arca_group_t *root;
    arca_dataset_t *ds;
    OK(arca_file_create(p, &f));
    OK(arca_file_root(f, &root));
    uint64_t dims[1] = {100}, maxd[1] = {ARCA_UNLIMITED}, ch[1] = {10};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT64, 1, dims));
    o.maxdims = maxd;
    o.chunks = ch;
    OK(arca_dataset_create(root, "g1/g2/data", &o, &ds));
    int64_t v[100];
    for (int i = 0; i < 100; i++) v[i] = i * i;
    OK(arca_dataset_write(ds, NULL, NULL, NULL, v, sizeof v));
    OK(arca_dataset_close(ds));
    arca_attrs_t *a;
    OK(arca_group_attrs(root, &a));
    OK(arca_attr_write_string(a, "title", "ro test"));
    OK(arca_attrs_close(a));
    arca_stat_t s;
    OK(arca_stat(f, &s));
    CHECK(s.groups == 3 && s.datasets == 1 && s.attributes == 1 && s.chunks == 10);
    CHECK(s.file_bytes ==
          s.superblock_bytes + s.metadata_bytes + s.data_bytes + s.unused_bytes);
    CHECK(s.data_logical_bytes == 800);
    EXPECT_RC(arca_stat(f, NULL), ARCA_ERR_NULL);
    OK(arca_group_close(root));
    OK(arca_file_close(f));

    OK(arca_file_open(p, "r", &f));
    OK(arca_file_root(f, &root));
    arca_stat_t s2;
    OK(arca_file_check(f, &s2));
    CHECK(s2.groups == 3 && s2.datasets == 1 && s2.chunks == 10);
    OK(arca_dataset_open(root, "g1/g2/data", &ds));
    int64_t back[100];
    OK(arca_dataset_read(ds, NULL, NULL, NULL, back, sizeof back));
    CHECK(back[99] == 99 * 99);
    EXPECT_RC(arca_dataset_write(ds, NULL, NULL, NULL, v, sizeof v), ARCA_ERR_READ_ONLY);
    uint64_t nd[1] = {200};
    EXPECT_RC(arca_dataset_resize(ds, nd), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_group_create(root, "new", NULL), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_group_require(root, "new", NULL), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_dataset_create(root, "new", &o, NULL), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_delete(root, "g1"), ARCA_ERR_READ_ONLY);
    EXPECT_RC(arca_move(root, "g1", "g9"), ARCA_ERR_READ_ONLY);
    OK(arca_file_flush(f)); /* nothing to do, not an error */

    /* Handles outlive their file's close but then fail cleanly. */
    OK(arca_file_close(f));
    uint64_t n;
    EXPECT_RC(arca_group_count(root, &n), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_read(ds, NULL, NULL, NULL, back, sizeof back), ARCA_ERR_INVALID);
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
}

/* A reader beside a writer keeps its snapshot until it refreshes (each
 * handle has its own locks, as another process would). */
static void test_reader_beside_writer(void) {
    const char *p = path_in("live.arca");
    arca_file_t *w, *r;
    arca_group_t *wroot, *rroot, *g;
    OK(arca_file_create(p, &w));
    OK(arca_file_flush(w));
    OK(arca_file_open(p, "r", &r));
    uint64_t g0 = 0, g1 = 0, n = 9;
    OK(arca_file_generation(r, &g0));
    OK(arca_file_root(w, &wroot));
    OK(arca_file_root(r, &rroot));
    OK(arca_group_create(wroot, "step1", &g));
    OK(arca_group_close(g));
    OK(arca_file_flush(w));
    OK(arca_group_count(rroot, &n));
    CHECK(n == 0); /* the snapshot as of the open */
    int32_t changed = -1;
    OK(arca_file_refresh(r, &changed));
    CHECK(changed == 1);
    OK(arca_group_count(rroot, &n));
    CHECK(n == 1);
    OK(arca_file_refresh(r, &changed));
    CHECK(changed == 0);
    OK(arca_file_refresh(r, NULL));
    OK(arca_file_generation(r, &g1));
    CHECK(g1 > g0);
    OK(arca_file_refresh(w, &changed)); /* writers: nothing to do */
    CHECK(changed == 0);
    EXPECT_RC(arca_file_refresh(NULL, &changed), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_generation(r, NULL), ARCA_ERR_NULL);
    OK(arca_group_close(rroot));
    OK(arca_group_close(wroot));
    OK(arca_file_close(r));
    OK(arca_file_close(w));
}

/* ---- NULL handles and out-pointers ----------------------------------- */

static int32_t never(const char *name, int32_t kind, void *user) {
    (void)name;
    (void)kind;
    (void)user;
    return 1;
}

static void test_null_handles(void) {
    char buf[8];
    size_t need;
    uint64_t n;
    int32_t i;
    double d;
    arca_group_t *g = (arca_group_t *)1;
    arca_dataset_t *ds = (arca_dataset_t *)1;
    arca_attrs_t *a = (arca_attrs_t *)1;
    arca_stat_t s;
    arca_attr_info_t info;
    arca_dataset_opts_t o;
    uint64_t dims[1] = {1};
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT8, 1, dims));

    EXPECT_RC(arca_file_flush(NULL), ARCA_ERR_NULL);
    CHECK(strstr(arca_last_error(), "NULL") != NULL);
    EXPECT_RC(arca_file_root(NULL, &g), ARCA_ERR_NULL);
    CHECK(g == NULL);
    EXPECT_RC(arca_file_is_writable(NULL, &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_path(NULL, buf, sizeof buf, &need), ARCA_ERR_NULL);
    EXPECT_RC(arca_stat(NULL, &s), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_check(NULL, &s), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_create(NULL, "x", NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_open(NULL, "x", &g), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_require(NULL, "x", &g), ARCA_ERR_NULL);
    EXPECT_RC(arca_delete(NULL, "x"), ARCA_ERR_NULL);
    EXPECT_RC(arca_move(NULL, "x", "y"), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_count(NULL, &n), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_member(NULL, 0, buf, sizeof buf, NULL, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_iterate(NULL, never, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_visit(NULL, never, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_kind(NULL, "x", &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_exists(NULL, "x", &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_path(NULL, buf, sizeof buf, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_create(NULL, "x", &o, &ds), ARCA_ERR_NULL);
    CHECK(ds == NULL);
    EXPECT_RC(arca_dataset_open(NULL, "x", &ds), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_rank(NULL, &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_dims(NULL, &n, NULL, 1), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_dtype(NULL, &i, &i, &need), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_dtype_str(NULL, buf, sizeof buf, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_chunks(NULL, &n, 1, &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_filters(NULL, NULL, 0, &need), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_fill_value(NULL, &d, sizeof d), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_storage_size(NULL, &n), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_read(NULL, NULL, NULL, NULL, &d, sizeof d), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_write(NULL, NULL, NULL, NULL, &d, sizeof d), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_resize(NULL, dims), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_path(NULL, buf, sizeof buf, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_attrs(NULL, &a), ARCA_ERR_NULL);
    CHECK(a == NULL);
    EXPECT_RC(arca_dataset_attrs(NULL, &a), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_write(NULL, "x", ARCA_DTYPE_FLOAT64, 0, 0, NULL, &d, sizeof d),
              ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_write_string(NULL, "x", "y"), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_info(NULL, "x", &info), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_read(NULL, "x", &d, sizeof d), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_read_string(NULL, "x", buf, sizeof buf, NULL), ARCA_ERR_NULL);
    char *str = (char *)1;
    EXPECT_RC(arca_attr_read_string_alloc(NULL, "x", &str), ARCA_ERR_NULL);
    CHECK(str == NULL);
    EXPECT_RC(arca_attr_delete(NULL, "x"), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_rename(NULL, "x", "y"), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_exists(NULL, "x", &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_count(NULL, &n), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_name(NULL, 0, buf, sizeof buf, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_opts_init(NULL, ARCA_DTYPE_INT8, 1, dims), ARCA_ERR_NULL);
    EXPECT_RC(arca_dtype_size(ARCA_DTYPE_INT8, 0, NULL), ARCA_ERR_NULL);

    /* NULL names and out-pointers on live handles. */
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_create(path_in("null.arca"), &f));
    OK(arca_file_root(f, &root));
    EXPECT_RC(arca_group_create(root, NULL, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_move(root, "a", NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_dataset_create(root, "x", NULL, NULL), ARCA_ERR_NULL);
    o.dims = NULL; /* rank 1 with no dims */
    EXPECT_RC(arca_dataset_create(root, "x", &o, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_root(f, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_count(root, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_group_attrs(root, NULL), ARCA_ERR_NULL);
    arca_attrs_t *ra;
    OK(arca_group_attrs(root, &ra));
    EXPECT_RC(arca_attr_exists(ra, NULL, &i), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_read_string_alloc(ra, "x", NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_attr_write_string(ra, "x", NULL), ARCA_ERR_NULL);
    /* invalid UTF-8 names are refused, not mangled */
    EXPECT_RC(arca_attr_write_string(ra, "\xff\xfe", "v"), ARCA_ERR_INVALID);
    OK(arca_attrs_close(ra));
    OK(arca_group_close(root));
    OK(arca_file_close(f));

    /* Closing NULL is a no-op everywhere. */
    OK(arca_group_close(NULL));
    OK(arca_dataset_close(NULL));
    OK(arca_attrs_close(NULL));
    arca_string_free(NULL);
}

/* ---- threads ----------------------------------------------------------- */

struct reader {
    arca_group_t *root;
    int id;
    int bad;
};

/* Each thread reads through its own dataset handle into the shared file,
 * and fails one call on purpose: its error message must be its own. */
static void *read_many(void *arg) {
    struct reader *r = arg;
    arca_dataset_t *ds;
    if (arca_dataset_open(r->root, "shared", &ds) != ARCA_OK) {
        r->bad++;
        return NULL;
    }
    char missing[32];
    snprintf(missing, sizeof missing, "missing-%d", r->id);
    for (int k = 0; k < 200; k++) {
        uint64_t start[1] = {(uint64_t)((k * 7 + r->id) % 1000)}, count[1] = {1};
        int32_t v = -1;
        if (arca_dataset_read(ds, start, count, NULL, &v, sizeof v) != ARCA_OK ||
            v != (int32_t)start[0] * 3)
            r->bad++;
        arca_group_t *g;
        if (arca_group_open(r->root, missing, &g) != ARCA_ERR_NOT_FOUND ||
            strstr(arca_last_error(), missing) == NULL)
            r->bad++;
    }
    arca_dataset_close(ds);
    return NULL;
}

static void test_threads(void) {
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_create(path_in("threads.arca"), &f));
    OK(arca_file_root(f, &root));
    uint64_t dims[1] = {1000}, ch[1] = {64};
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_INT32, 1, dims));
    o.chunks = ch;
    arca_dataset_t *ds;
    OK(arca_dataset_create(root, "shared", &o, &ds));
    static int32_t v[1000];
    for (int i = 0; i < 1000; i++) v[i] = i * 3;
    OK(arca_dataset_write(ds, NULL, NULL, NULL, v, sizeof v));
    OK(arca_dataset_close(ds));
    pthread_t t[4];
    struct reader r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (struct reader){root, i, 0};
        CHECK(pthread_create(&t[i], NULL, read_many, &r[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        CHECK(r[i].bad == 0);
    }
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

/* ---- chunks written by other processes -------------------------------- */

enum { PROWS = 50, PCOLS = 24 };

static float pvalue(uint64_t i) { return (float)((i * 7919) % 2001) / 8.0f - 125.0f; }

/* Cut rows r0..r1 into chunks (from the dataset or from a description),
 * write the whole ones through `fd` at *at, record them in w[*nw] (their
 * offsets in offs), and write the parts of shared chunks through `ds`
 * inside the open transaction. */
static void put_block(arca_dataset_t *ds, const arca_slab_desc_t *desc, int fd, uint64_t r0,
                      uint64_t r1, uint64_t *at, arca_written_chunk_t *w, uint64_t (*offs)[2],
                      size_t *nw, const float *all) {
    uint64_t start[2] = {r0, 0}, count[2] = {r1 - r0, PCOLS};
    const float *rows = all + r0 * PCOLS;
    size_t size = (size_t)(r1 - r0) * PCOLS * sizeof(float);
    arca_slab_t *b = NULL;
    if (desc)
        OK(arca_encode_slab_desc(desc, start, count, rows, size, &b));
    else
        OK(arca_encode_slab(ds, start, count, rows, size, &b));
    if (!b) return;
    const void *bytes = NULL;
    size_t len = 0, n = 0, np = 0;
    OK(arca_slab_bytes(b, &bytes, &len));
    OK(arca_write_out(fd, bytes, len, *at));
    OK(arca_slab_nchunks(b, &n));
    uint64_t pos = *at;
    for (size_t i = 0; i < n; i++) {
        arca_written_chunk_t *c = &w[*nw];
        OK(arca_slab_chunk(b, i, offs[*nw], &c->len, &c->mask, &c->crc));
        c->offset = offs[*nw];
        c->addr = pos;
        pos += c->len;
        (*nw)++;
    }
    CHECK(pos - *at == len);
    *at = pos;
    OK(arca_slab_npartial(b, &np));
    for (size_t i = 0; i < np; i++) {
        uint64_t s[2], c[2];
        OK(arca_slab_partial(b, i, s, c));
        float *part = malloc(c[0] * c[1] * sizeof(float));
        for (uint64_t r = 0; r < c[0]; r++)
            memcpy(part + r * c[1], all + (s[0] + r) * PCOLS + s[1], c[1] * sizeof(float));
        OK(arca_dataset_write(ds, s, c, NULL, part, c[0] * c[1] * sizeof(float)));
        free(part);
    }
    arca_slab_free(b);
}

static void test_parallel_chunks(void) {
    const char *p = path_in("parallel.arca");
    arca_file_t *f;
    arca_group_t *root;
    OK(arca_file_open(p, "w", &f));
    OK(arca_file_root(f, &root));
    uint64_t dims[2] = {PROWS, PCOLS}, chunks[2] = {16, 8};
    arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
    float fill = -1.0f;
    arca_dataset_opts_t o;
    OK(arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT32, 2, dims));
    o.chunks = chunks;
    o.filters = fl;
    o.nfilters = 2;
    o.fill_value = &fill;
    o.fill_size = sizeof fill;
    o.order = ARCA_ORDER_BIG;
    static float all[PROWS * PCOLS];
    for (uint64_t i = 0; i < PROWS * PCOLS; i++) all[i] = pvalue(i);
    arca_dataset_t *serial, *ds;
    OK(arca_dataset_create(root, "serial", &o, &serial));
    OK(arca_dataset_write(serial, NULL, NULL, NULL, all, sizeof all));
    OK(arca_dataset_create(root, "parallel", &o, &ds));
    int fd = open(p, O_WRONLY);
    CHECK(fd >= 0);

    /* Rows 0..21 cut by the dataset, rows 21..50 from a description:
     * 3 + 6 whole chunks (rows 48..50 run past the extent). */
    arca_slab_desc_t d = {">f4", 0, 2, dims, chunks, fl, 2, &fill, sizeof fill};
    arca_written_chunk_t w[16];
    uint64_t offs[16][2];
    size_t nw = 0;
    uint64_t at = 0;
    OK(arca_file_begin_transaction(f));
    OK(arca_dataset_reserve_chunks(ds, 9 * 16 * 8 * sizeof(float), &at));
    uint64_t room = at;
    put_block(ds, NULL, fd, 0, 21, &at, w, offs, &nw, all);
    put_block(ds, &d, fd, 21, PROWS, &at, w, offs, &nw, all);
    CHECK(nw == 9);
    CHECK(at - room <= 9 * 16 * 8 * sizeof(float));
    OK(arca_dataset_seal_chunks(ds, w, nw));
    OK(arca_file_end_transaction(f, 1));
    static float a[PROWS * PCOLS], b[PROWS * PCOLS];
    OK(arca_dataset_read(ds, NULL, NULL, NULL, a, sizeof a));
    OK(arca_dataset_read(serial, NULL, NULL, NULL, b, sizeof b));
    CHECK(memcmp(a, all, sizeof a) == 0);
    CHECK(memcmp(a, b, sizeof a) == 0);
    uint64_t sa, sb;
    OK(arca_dataset_storage_size(ds, &sa));
    OK(arca_dataset_storage_size(serial, &sb));
    CHECK(sa == sb);

    /* Reserved and not sealed: the commit rolls back, the data stays. */
    OK(arca_file_begin_transaction(f));
    OK(arca_dataset_reserve_chunks(ds, 4096, &at));
    EXPECT_RC(arca_file_end_transaction(f, 1), ARCA_ERR_INVALID);
    CHECK(strstr(arca_last_error(), "rolled back") != NULL);
    /* Outside a transaction; a chunk outside the space; bad arguments. */
    EXPECT_RC(arca_dataset_reserve_chunks(ds, 4096, &at), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_seal_chunks(ds, w, 1), ARCA_ERR_INVALID);
    EXPECT_RC(arca_file_end_transaction(f, 0), ARCA_ERR_INVALID);
    OK(arca_file_begin_transaction(f));
    OK(arca_dataset_reserve_chunks(ds, 4096, &at));
    arca_written_chunk_t far = {offs[0], at + 4096, 16, 0, 0};
    EXPECT_RC(arca_dataset_seal_chunks(ds, &far, 1), ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_seal_chunks(ds, NULL, 1), ARCA_ERR_NULL);
    OK(arca_file_end_transaction(f, 0));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, a, sizeof a));
    CHECK(memcmp(a, all, sizeof a) == 0);
    arca_slab_t *blk = (arca_slab_t *)1;
    uint64_t s0[2] = {0, 0}, c0[2] = {16, PCOLS}, bad[2] = {40, 0};
    EXPECT_RC(arca_encode_slab(ds, bad, c0, all, 16 * PCOLS * sizeof(float), &blk),
              ARCA_ERR_INVALID);
    CHECK(blk == NULL);
    EXPECT_RC(arca_encode_slab(ds, s0, c0, all, 4, &blk), ARCA_ERR_INVALID);
    EXPECT_RC(arca_encode_slab(NULL, s0, c0, all, 4, &blk), ARCA_ERR_NULL);
    EXPECT_RC(arca_encode_slab_desc(NULL, s0, c0, all, 4, &blk), ARCA_ERR_NULL);
    d.elem_size = 8;
    EXPECT_RC(arca_encode_slab_desc(&d, s0, c0, all, 16 * PCOLS * sizeof(float), &blk),
              ARCA_ERR_INVALID);
    EXPECT_RC(arca_dataset_reserve_chunks(NULL, 1, &at), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_begin_transaction(NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_file_end_transaction(NULL, 1), ARCA_ERR_NULL);
    size_t n;
    EXPECT_RC(arca_slab_nchunks(NULL, &n), ARCA_ERR_NULL);
    EXPECT_RC(arca_slab_npartial(NULL, &n), ARCA_ERR_NULL);
    EXPECT_RC(arca_slab_chunk(NULL, 0, NULL, NULL, NULL, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_slab_partial(NULL, 0, NULL, NULL), ARCA_ERR_NULL);
    EXPECT_RC(arca_slab_bytes(NULL, NULL, NULL), ARCA_ERR_NULL);
    arca_slab_free(NULL);
    EXPECT_RC(arca_write_out(-1, all, 4, 0), ARCA_ERR_INVALID);
    EXPECT_RC(arca_write_out(fd, NULL, 4, 0), ARCA_ERR_NULL);
    CHECK(close(fd) == 0);

    OK(arca_file_check(f, NULL));
    OK(arca_dataset_close(ds));
    OK(arca_dataset_close(serial));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
    /* Reopened, the chunks written through the descriptor read back. */
    OK(arca_file_open(p, "r", &f));
    OK(arca_file_root(f, &root));
    OK(arca_dataset_open(root, "parallel", &ds));
    OK(arca_dataset_read(ds, NULL, NULL, NULL, a, sizeof a));
    CHECK(memcmp(a, all, sizeof a) == 0);
    OK(arca_file_check(f, NULL));
    OK(arca_dataset_close(ds));
    OK(arca_group_close(root));
    OK(arca_file_close(f));
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/arca-capi-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_errors_and_version();
    test_files();
    test_groups();
    test_links();
    test_random_types();
    test_datasets();
    test_rows();
    test_attributes();
    test_read_only_and_stat();
    test_reader_beside_writer();
    test_null_handles();
    test_threads();
    test_parallel_chunks();

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (failures) {
        fprintf(stderr, "test_arca: %d of %d checks FAILED\n", failures, checks);
        return 1;
    }
    printf("test_arca: all %d checks passed\n", checks);
    return 0;
}
