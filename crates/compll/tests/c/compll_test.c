/* C test of compll.h: the global arena, contexts, user callbacks, misuse.
 * Built twice by `make compll-c-test`: against the library and with
 * -DCOMPLL_NOLIB (plain calloc/free). Prints "N passed, N failed". */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "compll.h"

static int passed, failed;
#define CHECK(cond) do { if (cond) passed++; else { failed++; fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)

static unsigned int copy_compress(const unsigned char *src, unsigned int len,
                                  unsigned char *dst, unsigned int dst_len) {
    if (len > dst_len) return 0;
    memcpy(dst, src, len);
    return len;
}
static void copy_decompress(const unsigned char *src, unsigned int len,
                            unsigned char *dst, unsigned int dst_len) {
    memcpy(dst, src, len < dst_len ? len : dst_len);
}

struct node { compll_t next; unsigned int value; char name[20]; };

static void test_global(void) {
    CHECK(compll_init(4096, 8, 2, copy_compress, copy_decompress) == 0);
    enum { N = 5000 };
    static compll_t nodes[N];
    compll_t head = 0;
    for (int i = 0; i < N; i++) {
        compll_t n = compll_alloc(sizeof(struct node));
        nodes[i] = n;
        if (!n) { CHECK(n != 0); return; }
        const struct node *r = compll_read(n);
        CHECK(r->value == 0 && r->next == 0); /* zeroed */
        struct node *w = compll_write(n);
        w->next = head;
        w->value = (unsigned)i;
        snprintf(w->name, sizeof w->name, "node-%d", i);
        head = n;
    }
    /* walk the list: the blocks have been compressed and decompressed */
    unsigned long long sum = 0; int count = 0, names_ok = 1;
    for (compll_t c = head; c; ) {
        const struct node *r = compll_read(c);
        char want[20];
        snprintf(want, sizeof want, "node-%u", r->value);
        if (strcmp(want, r->name) != 0) names_ok = 0;
        sum += r->value; count++;
        c = r->next;
    }
    CHECK(count == N);
    CHECK(sum == (unsigned long long)N * (N - 1) / 2);
    CHECK(names_ok);
    /* two pointers alive in one expression */
    ((struct node *)compll_write(nodes[0]))->value = ((const struct node *)compll_read(nodes[1]))->value + 100;
    CHECK(((const struct node *)compll_read(nodes[0]))->value == 101);
    for (int i = 0; i < N; i += 2) CHECK(compll_free(nodes[i]) == 0);
    for (int i = 1; i < N; i += 2) CHECK(compll_free(nodes[i]) == 0);
#ifndef COMPLL_NOLIB
    /* misuse is reported, not undefined */
    CHECK(compll_free(nodes[0]) != 0);     /* double free */
    CHECK(compll_read(nodes[3]) == NULL);  /* freed */
    CHECK(compll_read(0) == NULL);
    CHECK(compll_write(123456789ULL) == NULL);
    CHECK(compll_init(10, 8, 2, NULL, NULL) != 0);              /* bad block size */
    CHECK(compll_init(4096, 3, 2, NULL, NULL) != 0);            /* bad alignment */
    CHECK(compll_init(4096, 8, 2, copy_compress, NULL) != 0);   /* half a codec */
#endif
    compll_shutdown();
}

static void test_contexts(void) {
    const char *codecs[] = { "lz4", "zstd-1", "zlib-5", "copy", "zstd-3-dict" };
    compll_ctx *ctx[5];
    compll_t big[5];
    for (int k = 0; k < 5; k++) {
        ctx[k] = compll_ctx_new_codec(8192, 16, 3, codecs[k]);
        CHECK(ctx[k] != NULL);
    }
    for (int k = 0; k < 5; k++) {
        /* a node larger than a block gets a block of its own */
        big[k] = compll_ctx_alloc(ctx[k], 100000);
        CHECK(big[k] != 0);
        unsigned char *p = compll_ctx_write(ctx[k], big[k]);
        for (int i = 0; i < 100000; i++) p[i] = (unsigned char)(i * (k + 1));
    }
    for (int k = 0; k < 5; k++) {
        compll_t small[300];
        for (int i = 0; i < 300; i++) {
            small[i] = compll_ctx_alloc(ctx[k], 1 + (unsigned)(i % 200));
            unsigned char *p = compll_ctx_write(ctx[k], small[i]);
            memset(p, i & 0xff, 1 + (size_t)(i % 200));
#ifndef COMPLL_NOLIB
            CHECK(compll_ctx_size(ctx[k], small[i]) >= 1u + (unsigned)(i % 200));
#endif
        }
        int ok = 1;
        for (int i = 0; i < 300; i++) {
            const unsigned char *p = compll_ctx_read(ctx[k], small[i]);
            for (int j = 0; j < 1 + i % 200; j++) if (p[j] != (unsigned char)(i & 0xff)) ok = 0;
        }
        CHECK(ok);
        const unsigned char *b = compll_ctx_read(ctx[k], big[k]);
        int bok = 1;
        for (int i = 0; i < 100000; i++) if (b[i] != (unsigned char)(i * (k + 1))) bok = 0;
        CHECK(bok);
        struct compll_stats st;
        CHECK(compll_ctx_stats(ctx[k], &st) == 0);
#ifndef COMPLL_NOLIB
        CHECK(st.live_nodes == 301);
        CHECK(st.compressions > 0);
#endif
        for (int i = 0; i < 300; i++) CHECK(compll_ctx_free(ctx[k], small[i]) == 0);
        CHECK(compll_ctx_free(ctx[k], big[k]) == 0);
    }
#ifndef COMPLL_NOLIB
    CHECK(compll_ctx_new_codec(8192, 8, 3, "rar") == NULL);
    CHECK(compll_ctx_alloc(NULL, 10) == 0);
    CHECK(compll_ctx_read(NULL, 1) == NULL);
#endif
    for (int k = 0; k < 5; k++) compll_ctx_destroy(ctx[k]);
}

/* The fast configuration: fields grouped, a compressor thread with read-ahead,
 * a growing cache; a list written, walked backwards (read-ahead) and torn down
 * with compll_ctx_read_free. */
static void test_config(void) {
    struct compll_config cfg;
    compll_config_default(&cfg);
#ifndef COMPLL_NOLIB
    CHECK(cfg.block_size == 32768 && cfg.alignment == 8 && cfg.uncomp_count == 10);
    CHECK(strcmp(cfg.codec, "zstd-1") == 0 && cfg.background == 0 && cfg.readahead == 0);
    CHECK(cfg.background_from == 0 && cfg.target_ratio == 0.0);
#endif
    cfg.block_size = 4096;
    cfg.uncomp_count = 2;
    cfg.codec = "zstd-1-m5-b2";
    cfg.group_fields = 16;
    cfg.background = 2;
    cfg.readahead = 4;
    cfg.cache_growth = 8;
    cfg.background_from = 4;
    compll_ctx *ctx = compll_ctx_new_config(&cfg);
    CHECK(ctx != NULL);
    enum { N = 3000 };
    static compll_t node[N];
    /* node i: [next: 8 bytes][i: 8 bytes][i & 0xff x 40] */
    for (int i = 0; i < N; i++) {
        node[i] = compll_ctx_alloc(ctx, 56);
        unsigned char *p = compll_ctx_write(ctx, node[i]);
        unsigned long long next = i ? (unsigned long long)node[i - 1] : 0, v = (unsigned long long)i;
        memcpy(p, &next, 8);
        memcpy(p + 8, &v, 8);
        memset(p + 16, i & 0xff, 40);
    }
    compll_ctx_settle(ctx);
    int ok = 1;
    for (int i = N - 1; i >= 0; i--) {
        const unsigned char *p = compll_ctx_read(ctx, node[i]);
        unsigned long long v;
        memcpy(&v, p + 8, 8);
        if (v != (unsigned long long)i || p[55] != (unsigned char)(i & 0xff)) ok = 0;
    }
    CHECK(ok);
    struct compll_stats st;
    CHECK(compll_ctx_stats(ctx, &st) == 0);
#ifndef COMPLL_NOLIB
    CHECK(st.live_nodes == N);
    CHECK(st.compressions > 0 && st.decompressions > 0);
    unsigned char junk[8];
    unsigned int size0 = compll_ctx_size(ctx, node[0]);
    CHECK(size0 >= 56);
    CHECK(compll_ctx_read_free(ctx, node[0], size0 - 4, junk, 8) == 1); /* past the node */
    CHECK(compll_ctx_read(ctx, node[0]) != NULL);                /* still there */
    CHECK(compll_ctx_read_free(ctx, 123456789ULL, 0, junk, 8) == 1);
    cfg.codec = "rar";
    CHECK(compll_ctx_new_config(&cfg) == NULL);
    cfg.codec = "zstd-1";
    cfg.readahead = 65;
    CHECK(compll_ctx_new_config(&cfg) == NULL);
    CHECK(compll_ctx_new_config(NULL) == NULL);
#endif
    /* tear the list down from its head, reading each link as the node goes */
    compll_t cur = node[N - 1];
    int freed = 0;
    while (cur && freed < N) {
        unsigned long long next = 0;
        int r = compll_ctx_read_free(ctx, cur, 0, &next, 8);
        CHECK(r == 0);
        if (r != 0) break;
        cur = (compll_t)next;
        freed++;
    }
    CHECK(freed == N);
#ifndef COMPLL_NOLIB
    CHECK(compll_ctx_stats(ctx, &st) == 0);
    CHECK(st.live_nodes == 0);
    CHECK(compll_ctx_read(ctx, node[5]) == NULL);
#endif
    compll_ctx_destroy(ctx);
}

/* A memory target: compressible nodes end up partly in lz4 form, the newer
 * counters of compll_stats are filled, and a target below 1 is refused. */
static void test_target(void) {
    struct compll_config cfg;
    compll_config_default(&cfg);
    cfg.block_size = 4096;
    cfg.uncomp_count = 2;
    cfg.codec = "zstd-1";
    cfg.background = 2;
    cfg.readahead = 4;
    cfg.target_ratio = 2.0;
    compll_ctx *ctx = compll_ctx_new_config(&cfg);
    CHECK(ctx != NULL);
    enum { N = 3000 };
    static compll_t node[N];
    for (int i = 0; i < N; i++) {
        node[i] = compll_ctx_alloc(ctx, 56);
        unsigned char *p = compll_ctx_write(ctx, node[i]);
        unsigned long long v = (unsigned long long)i;
        memcpy(p, &v, 8);
        memset(p + 8, 'a' + i % 4, 48);
    }
    compll_ctx_settle(ctx);
    int ok = 1;
    for (int i = N - 1; i >= 0; i--) {
        const unsigned char *p = compll_ctx_read(ctx, node[i]);
        unsigned long long v;
        memcpy(&v, p, 8);
        if (v != (unsigned long long)i || p[55] != (unsigned char)('a' + i % 4)) ok = 0;
    }
    CHECK(ok);
    struct compll_stats st;
    CHECK(compll_ctx_stats(ctx, &st) == 0);
#ifndef COMPLL_NOLIB
    CHECK(st.live_nodes == N);
    CHECK(st.blocks > 10 && st.fast_blocks > 0 && st.fast_blocks <= st.blocks);
    CHECK(st.background_starts == 1 && st.background_running == 1);
    CHECK(st.hits > 0 && st.misses > 0 && st.misses <= st.decompressions);
    CHECK(st.decompressed_ahead <= st.decompressions);
    CHECK(st.codec_context_bytes <= st.overhead_bytes);
    CHECK(st.taken_over <= st.compressions + st.decompressions);
    cfg.target_ratio = 0.5;
    CHECK(compll_ctx_new_config(&cfg) == NULL);
#endif
    int freed = 0;
    for (int i = 0; i < N; i++) freed += compll_ctx_free(ctx, node[i]) == 0;
    CHECK(freed == N);
#ifndef COMPLL_NOLIB
    CHECK(compll_ctx_stats(ctx, &st) == 0);
    CHECK(st.live_nodes == 0);
#endif
    compll_ctx_destroy(ctx);
}

int main(void) {
    test_global();
    test_contexts();
    test_config();
    test_target();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
