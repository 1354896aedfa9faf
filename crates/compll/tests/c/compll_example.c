/* Example: a word-frequency table kept in a compll arena, as a sorted
 * singly linked list of variable-sized nodes. Shows the original compll interface:
 * init with user callbacks, alloc, write, read, free. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "compll.h"

/* A run-length "codec": enough to show the callback shape. Output is
 * (count, byte) pairs. */
static unsigned int rle_compress(const unsigned char *src, unsigned int len,
                                 unsigned char *dst, unsigned int dst_len) {
    unsigned int o = 0;
    for (unsigned int i = 0; i < len;) {
        unsigned int run = 1;
        while (i + run < len && run < 255 && src[i + run] == src[i]) run++;
        if (o + 2 > dst_len) return 0;
        dst[o++] = (unsigned char)run;
        dst[o++] = src[i];
        i += run;
    }
    return o;
}
static void rle_decompress(const unsigned char *src, unsigned int len,
                           unsigned char *dst, unsigned int dst_len) {
    unsigned int o = 0;
    for (unsigned int i = 0; i + 1 < len && o < dst_len; i += 2)
        for (unsigned int k = 0; k < src[i] && o < dst_len; k++) dst[o++] = src[i + 1];
}

struct word { compll_t next; unsigned int count; unsigned char len; char text[]; };

int main(void) {
    static const char *text =
        "the quick brown fox jumps over the lazy dog the dog sleeps and the fox runs "
        "over the hill and far away the end";
    if (compll_init(4096, 8, 4, rle_compress, rle_decompress) != 0) return 1;
    compll_t head = 0;
    char buf[256];
    strncpy(buf, text, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
        size_t n = strlen(w);
        compll_t prev = 0, cur = head;
        int cmp = 1;
        while (cur) {
            const struct word *r = compll_read(cur);
            cmp = strncmp(r->text, w, r->len > n ? r->len : n);
            if (cmp >= 0) break;
            prev = cur;
            cur = r->next;
        }
        if (cur && cmp == 0) {
            ((struct word *)compll_write(cur))->count++;
            continue;
        }
        compll_t node = compll_alloc((unsigned)(sizeof(struct word) + n + 1));
        struct word *nw = compll_write(node);
        nw->next = cur;
        nw->count = 1;
        nw->len = (unsigned char)n;
        memcpy(nw->text, w, n);
        if (prev) ((struct word *)compll_write(prev))->next = node;
        else head = node;
    }
    int words = 0;
    for (compll_t c = head; c;) {
        const struct word *r = compll_read(c);
        printf("%-6s %u\n", r->text, r->count);
        words++;
        compll_t next = r->next;
        compll_free(c);
        c = next;
    }
    printf("%d distinct words\n", words);
    compll_shutdown();
    return words == 15 ? 0 : 1;
}
