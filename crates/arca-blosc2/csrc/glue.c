/* What arca-blosc2 needs from c-blosc2's structures, as plain calls, so the
 * Rust side declares no struct layout of its own: the layouts come from
 * c-blosc2's header, compiled together with the library. */
#include <string.h>

#include "blosc2.h"

/* A super-chunk's item size, bytes, chunk count and codec. */
void arca_blosc2_schunk_info(const blosc2_schunk *s, int32_t *typesize, int64_t *nbytes,
                             int64_t *nchunks, uint8_t *compcode) {
  *typesize = s->typesize;
  *nbytes = s->nbytes;
  *nchunks = s->nchunks;
  *compcode = s->compcode;
}

/* The content of the metalayer named `name` (in place, alive as long as the
 * super-chunk), or NULL. */
const uint8_t *arca_blosc2_schunk_meta(const blosc2_schunk *s, const char *name, int32_t *len) {
  int n = s->nmetalayers;
  if (n < 0 || n > BLOSC2_MAX_METALAYERS) return NULL;
  for (int i = 0; i < n; i++) {
    const blosc2_metalayer *m = s->metalayers[i];
    if (m == NULL || m->name == NULL || m->content == NULL || m->content_len < 0) continue;
    if (strcmp(m->name, name) == 0) {
      *len = m->content_len;
      return m->content;
    }
  }
  return NULL;
}

/* A new in-memory super-chunk compressing `typesize`-byte items with codec
 * `codec` at `clevel`, the last filter slot `shuffle` (0 none, 1 byte, 2
 * bit), `blocksize` bytes per block (0: the library's choice), one thread. */
blosc2_schunk *arca_blosc2_schunk_new(int32_t typesize, uint8_t clevel, uint8_t shuffle,
                                      uint8_t codec, int32_t blocksize) {
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.compcode = codec;
  cparams.clevel = clevel;
  cparams.typesize = typesize;
  cparams.blocksize = blocksize;
  cparams.nthreads = 1;
  cparams.filters[BLOSC2_MAX_FILTERS - 1] = shuffle;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.contiguous = false;
  storage.cparams = &cparams;
  storage.dparams = &dparams;
  return blosc2_schunk_new(&storage);
}
