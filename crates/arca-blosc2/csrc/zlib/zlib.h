/* The part of zlib's interface c-blosc2's zlib codec calls (compress2 and
 * uncompress), renamed to functions arca-blosc2 defines in Rust over
 * flate2: the one deflate the program links, and no C zlib beside it. */
#ifndef ARCA_BLOSC2_ZLIB_H
#define ARCA_BLOSC2_ZLIB_H

typedef unsigned char Bytef;
typedef unsigned long uLong;
typedef unsigned long uLongf;

/* What blosc2_get_complib_info reports for this codec. */
#define ZLIB_VERSION "flate2"

#define Z_OK 0
#define Z_DATA_ERROR (-3)
#define Z_BUF_ERROR (-5)

#define compress2 arca_blosc2_zlib_compress2
#define uncompress arca_blosc2_zlib_uncompress

int compress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen, int level);
int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen);

#endif
