/*
 * arca_mpi.h - collective writes of one arca file from every rank of an MPI
 * job, for C programs. The semantics are those of Python's arca.mpi.
 *
 * Build mpi/arca_mpi.c with mpicc into libarca_mpi.a (`make capi-mpi-build`
 * gives target/capi-c/libarca_mpi.a) and link it before libarca:
 *   mpicc -std=c11 -Icrates/arca-capi/include prog.c target/capi-c/libarca_mpi.a \
 *       target/release/libarca.a -lpthread -ldl -lm -o prog
 *
 * How it works
 * ------------
 * Rank 0 holds the file through arca and alone changes metadata; every
 * rank of a writable file also opens it with a plain O_WRONLY descriptor.
 * A collective write (arca_mpi_write) of a chunked dataset runs in four
 * steps:
 *   1. each rank checks its box and counts the chunks it covers whole (a
 *      chunk running past the extent counts when its part inside is
 *      covered); rank 0 gets the counts;
 *   2. rank 0 begins a transaction and reserves room for all of them at
 *      their raw size (the most they can take: a filtered chunk never
 *      stores more), and tells every rank where it is;
 *   3. each rank cuts its local data into slabs of whole chunk rows (about
 *      8 MiB of elements each), compresses each slab's chunks
 *      (arca_encode_slab_desc), takes its place in the room with one
 *      atomic add on a counter in an MPI window on rank 0, and writes it at
 *      once (arca_write_out), so ranks pack their chunks tightly without
 *      waiting for each other;
 *   4. rank 0 gathers every rank's chunks and the parts of chunks no rank
 *      covers whole (with their elements), indexes the chunks
 *      (arca_dataset_seal_chunks, which frees the room left over), writes
 *      the parts (merging chunks shared between ranks) and commits once.
 * A contiguous dataset (or one with filters of an imported HDF5 file) is
 * written by rank 0: every rank's local data travels to it.
 *
 * Conventions
 * -----------
 * - Every function taking an arca_mpi_file_t is collective: every rank of
 *   the communicator calls it, in the same order. Object paths, options
 *   and attribute values are those of rank 0 (the others' are ignored and
 *   may be NULL); boxes and local data are each rank's own.
 * - Status codes are those of arca.h. A failure on any rank, at any step,
 *   makes the call return the same code on every rank (the code of the
 *   lowest failing rank), and arca_mpi_last_error() on every rank names
 *   each failing rank with its message:
 *     "write failed: rank 3: the box at [151, 0] of [50, 24] leaves the
 *      extent [200, 24]"
 *   A write that fails is rolled back: the file is as it was before.
 * - A NULL arca_mpi_file_t fails at once with ARCA_ERR_NULL, on that rank
 *   alone (pass NULL on every rank or on none).
 * - Elements are packed, row-major, native byte order, as in arca.h.
 *   Boxes are start and count arrays of one entry per dimension; ranks'
 *   boxes in one write must not overlap.
 */
#ifndef ARCA_MPI_H
#define ARCA_MPI_H

#include <mpi.h>

#include "arca.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A file opened collectively by every rank of a communicator. */
typedef struct arca_mpi_file arca_mpi_file_t;

/* Message of the most recent failed arca_mpi call on this thread ("" if
 * none), the same on every rank. Owned by the library; valid until the
 * next failing arca_mpi call on this thread.
 *   if (rc != ARCA_OK) fprintf(stderr, "%s\n", arca_mpi_last_error()); */
const char *arca_mpi_last_error(void);

/* Open the file at `path` on every rank of `comm` (collective). `mode` is
 * one of arca_file_open's; rank 0 opens the file through arca, and when it
 * is writable every rank opens a descriptor to write chunks through and
 * an MPI window (one int64 on rank 0) serves as the shared counter that
 * packs them. The communicator is duplicated; free yours when you like.
 * On success *out is a new handle: release it with arca_mpi_file_close on
 * every rank; on failure *out is NULL on every rank.
 *   arca_mpi_file_t *f;
 *   if (arca_mpi_file_open("run.arca", "w", MPI_COMM_WORLD, &f) != ARCA_OK)
 *       fprintf(stderr, "%s\n", arca_mpi_last_error()); */
int32_t arca_mpi_file_open(const char *path, const char *mode, MPI_Comm comm,
                           arca_mpi_file_t **out);

/* Close on every rank (collective): the descriptors and the window are
 * freed and rank 0 closes the file, which commits. The handle is freed
 * whatever the status; NULL on every rank is a no-op.
 *   arca_mpi_file_close(f); */
int32_t arca_mpi_file_close(arca_mpi_file_t *f);

/* The file as rank 0 holds it, for reads and calls this header does not
 * offer (not collective): NULL on the other ranks and for NULL. Owned by
 * `f`; do not close it.
 *   arca_file_t *a = arca_mpi_file_arca(f);
 *   if (a) arca_file_check(a, NULL); */
arca_file_t *arca_mpi_file_arca(arca_mpi_file_t *f);

/* How many bytes of elements a rank compresses and writes at a time in
 * arca_mpi_write (default 8 MiB, rounded to whole chunk rows, at least
 * one). Not collective: each rank sets its own. 0 is ARCA_ERR_INVALID.
 *   arca_mpi_file_set_slab_bytes(f, 64 << 20); */
int32_t arca_mpi_file_set_slab_bytes(arca_mpi_file_t *f, size_t bytes);

/* Create a group, and any missing parents (collective; rank 0's path).
 *   arca_mpi_group_create(f, "run/steps"); */
int32_t arca_mpi_group_create(arca_mpi_file_t *f, const char *path);

/* Create a dataset with arca_dataset_create's options (collective; rank
 * 0's path and options).
 *   uint64_t dims[2] = {200, 24}, ch[2] = {16, 8};
 *   arca_filter_t fl[2] = {{ARCA_FILTER_SHUFFLE, 0}, {ARCA_FILTER_ZSTD, 3}};
 *   arca_dataset_opts_t o;
 *   arca_dataset_opts_init(&o, ARCA_DTYPE_FLOAT32, 2, dims);
 *   o.chunks = ch; o.filters = fl; o.nfilters = 2;
 *   arca_mpi_dataset_create(f, "x", &o); */
int32_t arca_mpi_dataset_create(arca_mpi_file_t *f, const char *path,
                                const arca_dataset_opts_t *opts);

/* Change a dataset's extents (collective; rank 0's path and dims, one
 * entry per dimension, within maxdims; chunked datasets only).
 *   uint64_t nd[2] = {step + 1, 96}; arca_mpi_dataset_resize(f, "run/t", nd); */
int32_t arca_mpi_dataset_resize(arca_mpi_file_t *f, const char *path, const uint64_t *dims);

/* A dataset's rank and extents on every rank (collective): *rank (may be
 * NULL) and `dims` (cap entries, at least the rank; may be NULL).
 *   uint64_t d[ARCA_MAX_RANK]; int32_t r;
 *   arca_mpi_dataset_dims(f, "run/t", d, ARCA_MAX_RANK, &r); */
int32_t arca_mpi_dataset_dims(arca_mpi_file_t *f, const char *path, uint64_t *dims, size_t cap,
                              int32_t *rank);

/* Create or replace attribute `name` of the group or dataset at
 * `obj_path` ("/" for the root), with arca_attr_write's arguments
 * (collective; rank 0's arguments).
 *   int32_t n = size;
 *   arca_mpi_attr_write(f, "/", "ranks", ARCA_DTYPE_INT32, ARCA_ORDER_NATIVE, 0, NULL,
 *                       &n, sizeof n); */
int32_t arca_mpi_attr_write(arca_mpi_file_t *f, const char *obj_path, const char *name,
                            arca_dtype_t dtype, int32_t order, int32_t rank,
                            const uint64_t *shape, const void *data, size_t data_size);

/* Create or replace a scalar string attribute (collective; rank 0's
 * arguments).
 *   arca_mpi_attr_write_string(f, "run/t", "units", "K"); */
int32_t arca_mpi_attr_write_string(arca_mpi_file_t *f, const char *obj_path, const char *name,
                                   const char *value);

/* Collective write: each rank writes `local`, the elements of its own box
 * start..start+count, into the dataset at `path` (see "How it works").
 * Boxes must not overlap; a rank may pass an empty box (a count of 0).
 * The whole write is one transaction: on any failure, on any rank, every
 * rank gets the error and the file is as before.
 *   uint64_t start[2] = {50 * rank, 0}, count[2] = {50, 24};
 *   arca_mpi_write(f, "x", start, count, rows); */
int32_t arca_mpi_write(arca_mpi_file_t *f, const char *path, const uint64_t *start,
                       const uint64_t *count, const void *local);

/* Collective read: each rank gets the elements of its own box into `out`
 * (product(count) * element size bytes); rank 0 reads every rank's box
 * and sends it.
 *   float back[50 * 24];
 *   arca_mpi_read(f, "x", start, count, back); */
int32_t arca_mpi_read(arca_mpi_file_t *f, const char *path, const uint64_t *start,
                      const uint64_t *count, void *out);

#ifdef __cplusplus
}
#endif

#endif /* ARCA_MPI_H */
