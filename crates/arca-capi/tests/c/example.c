/*
 * A small arca program: write a compressed 2-D dataset with an attribute,
 * read part of it back, list the file.
 *
 *   gcc -std=c11 -Icrates/arca-capi/include example.c target/release/libarca.a \
 *       -lpthread -ldl -lm -o example
 *   ./example [file.arca]
 */
#include "arca.h"

#include <stdio.h>
#include <stdlib.h>

/* Stop at the first failure, with the library's message. */
#define TRY(call)                                                              \
    do {                                                                       \
        int32_t rc_ = (call);                                                  \
        if (rc_ != ARCA_OK) {                                                  \
            fprintf(stderr, "%s failed: %s: %s\n", #call, arca_error_name(rc_), \
                    arca_last_error());                                        \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static int32_t print_member(const char *name, int32_t kind, void *user) {
    (void)user;
    printf("  %-8s %s\n", kind == ARCA_KIND_GROUP ? "group" : "dataset", name);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "example.arca";
    enum { ROWS = 100, COLS = 64 };

    /* ---- write ---- */
    arca_file_t *f;
    arca_group_t *root;
    TRY(arca_file_open(path, "w", &f));
    TRY(arca_file_root(f, &root));

    /* A float32 image stack that can grow along its first axis, chunked by
     * 10 rows and compressed with shuffle + zstd. */
    uint64_t dims[2] = {ROWS, COLS};
    uint64_t maxdims[2] = {ARCA_UNLIMITED, COLS};
    uint64_t chunks[2] = {10, COLS};
    arca_filter_t filters[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
    arca_dataset_opts_t opts;
    TRY(arca_dataset_opts_init(&opts, ARCA_DTYPE_FLOAT32, 2, dims));
    opts.maxdims = maxdims;
    opts.chunks = chunks;
    opts.filters = filters;
    opts.nfilters = 2;

    arca_dataset_t *ds;
    TRY(arca_dataset_create(root, "detector/frames", &opts, &ds));
    static float image[ROWS][COLS];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) image[i][j] = (float)(i * COLS + j);
    TRY(arca_dataset_write(ds, NULL, NULL, NULL, image, sizeof image));

    arca_attrs_t *attrs;
    TRY(arca_dataset_attrs(ds, &attrs));
    double exposure = 0.25;
    TRY(arca_attr_write(attrs, "exposure", ARCA_DTYPE_FLOAT64, ARCA_ORDER_NATIVE, 0, NULL,
                        &exposure, sizeof exposure));
    TRY(arca_attr_write_string(attrs, "units", "counts"));
    TRY(arca_attrs_close(attrs));
    TRY(arca_dataset_close(ds));
    TRY(arca_group_close(root));
    TRY(arca_file_close(f));

    /* ---- read ---- */
    TRY(arca_file_open(path, "r", &f));
    TRY(arca_file_root(f, &root));
    TRY(arca_dataset_open(root, "detector/frames", &ds));

    /* Every 20th row, columns 8..11. */
    uint64_t start[2] = {0, 8}, count[2] = {5, 4}, step[2] = {20, 1};
    float part[5][4];
    TRY(arca_dataset_read(ds, start, count, step, part, sizeof part));
    for (int i = 0; i < 5; i++)
        printf("row %3d: %6.0f %6.0f %6.0f %6.0f\n", i * 20, part[i][0], part[i][1], part[i][2],
               part[i][3]);

    TRY(arca_dataset_attrs(ds, &attrs));
    char units[32];
    TRY(arca_attr_read(attrs, "exposure", &exposure, sizeof exposure));
    TRY(arca_attr_read_string(attrs, "units", units, sizeof units, NULL));
    printf("exposure %.2f s, units %s\n", exposure, units);
    TRY(arca_attrs_close(attrs));
    TRY(arca_dataset_close(ds));

    printf("%s:\n", path);
    TRY(arca_group_visit(root, print_member, NULL));
    arca_stat_t st;
    TRY(arca_stat(f, &st));
    printf("%llu bytes of elements stored in %llu bytes\n",
           (unsigned long long)st.data_logical_bytes, (unsigned long long)st.data_bytes);

    /* A missing object is an error code and a message, not a crash. */
    int32_t rc = arca_dataset_open(root, "detector/missing", &ds);
    printf("opening a missing dataset: %s (%s)\n", arca_error_name(rc), arca_last_error());

    TRY(arca_group_close(root));
    TRY(arca_file_close(f));
    return 0;
}
