/*
 * The block format of bm25desk's postings (segment format 3): encoding and checked decoding.
 *
 * Shared by the `_blocks` extension (the segment writer, merges, checks and full-list reads) and
 * the `_topk` kernel (which decodes blocks while it ranks). Header-only (static inline), no
 * Python: the callers own the buffers.
 *
 * A term's postings (docnos strictly ascending, tf >= 1) are cut into blocks of B = 2**shift
 * postings (the last one may be shorter). Block b of a term with n postings in it is
 *
 *     u8   nprof              entries of the block's frontier (0..cap)
 *     u8   wd                 bits per (docno - previous docno - 1), 0..32
 *     u8   wt                 bits per (tf - 1), 0..32
 *     nprof x (u8 tf, u32le doc)    the frontier, tf descending
 *     ceil(n * wd / 8) bytes  the docno gaps, a little-endian bit stream (value i at bit i * wd)
 *     ceil(n * wt / 8) bytes  the tfs, the same way
 *
 * where the previous docno of the block's first posting is the last docno of the term's previous
 * block (kept apart, in blk_last, so that any block decodes alone and skipping reads no block),
 * or -1 for the term's first block. The frontier is the Pareto frontier of (tf, document length)
 * over the block's postings with tf <= cap: for tf from cap down to 1, the document with that tf
 * and the smallest length (the lowest docno among equals), kept when it is strictly shorter than
 * every kept document of a larger tf. With a bound table U non-decreasing in tf and
 * non-increasing in length, max over the entries of U[length(doc)][tf] bounds the tf part of every
 * posting of the block with tf <= cap, for any ranking function and parameters; postings with
 * tf > cap ("overflow") are listed apart by the segment, with their exact tf parts computed at
 * query time.
 *
 * Decoding checks everything it reads (sizes, widths, docnos within (previous, last] and below
 * n_docs, tf < 2**31, frontier entries), so a damaged block is an error, never a read out of
 * bounds. Readers need 8 readable bytes past a block's end (a stream is padded by BLK_PAD zero
 * bytes): values are read with one unaligned 64-bit load.
 */
#ifndef BM25DESK_BLOCKS_H
#define BM25DESK_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BLK_PAD 8
#define BLK_HEADER 3
#define BLK_ENTRY 5
#define BLK_MAX_SHIFT 8
#define BLK_MAX (1 << BLK_MAX_SHIFT)
#define BLK_MAX_CAP 255

enum blk_error {
    BLK_OK = 0,
    BLK_BAD_SIZE,     /* the block's bytes do not match its header */
    BLK_BAD_WIDTH,    /* a bit width above 32, or a frontier longer than cap */
    BLK_BAD_DOCS,     /* docnos not ascending, not ending at the block's last docno, or too high */
    BLK_BAD_TF,       /* a tf of 2**31 or more */
    BLK_BAD_FRONTIER, /* a frontier entry with a tf outside 1..cap or a docno outside the block */
};

static inline uint64_t
blk_load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t
blk_load32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline void
blk_store32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Bits needed for values up to m (0 for m == 0). */
static inline int
blk_bits(uint32_t m)
{
    int w = 0;
    while (m) {
        w++;
        m >>= 1;
    }
    return w;
}

static inline size_t
blk_packed(Py_ssize_t n, int w)
{
    return ((size_t)n * (size_t)w + 7) >> 3;
}

/* n values of w bits from src, w a constant (the body is specialised per width): eight values
 * at a time from w bytes, each with one unaligned 64-bit load at a constant offset (no loop-carried
 * bit position, so the eight loads and shifts are independent), then the rest one by one. */
#define BLK_UNPACK_W(W)                                                                       \
    static inline void blk_unpack_##W(const uint8_t *src, Py_ssize_t n, uint32_t *out)      \
    {                                                                                       \
        const uint64_t mask = (W) == 32 ? 0xFFFFFFFFull : ((1ull << ((W) & 31)) - 1);        \
        Py_ssize_t i = 0;                                                                   \
        for (; i + 8 <= n; i += 8, src += (W)) {                                            \
            for (int j = 0; j < 8; j++) {                                                   \
                out[i + j] =                                                                \
                    (uint32_t)((blk_load64(src + ((j * (W)) >> 3)) >> ((j * (W)) & 7)) & mask); \
            }                                                                               \
        }                                                                                   \
        for (size_t bit = 0; i < n; i++, bit += (W)) {                                      \
            out[i] = (uint32_t)((blk_load64(src + (bit >> 3)) >> (bit & 7)) & mask);         \
        }                                                                                   \
    }
#define BLK_UNPACK_4(A, B, C, D) BLK_UNPACK_W(A) BLK_UNPACK_W(B) BLK_UNPACK_W(C) BLK_UNPACK_W(D)
BLK_UNPACK_4(1, 2, 3, 4)
BLK_UNPACK_4(5, 6, 7, 8)
BLK_UNPACK_4(9, 10, 11, 12)
BLK_UNPACK_4(13, 14, 15, 16)
BLK_UNPACK_4(17, 18, 19, 20)
BLK_UNPACK_4(21, 22, 23, 24)
BLK_UNPACK_4(25, 26, 27, 28)
BLK_UNPACK_4(29, 30, 31, 32)
#undef BLK_UNPACK_4
#undef BLK_UNPACK_W

/* n values of w bits (0..32) from src (8 readable bytes past the packed ones). A switch to the
 * constant-width body: the generic loop's variable shifts and loop-carried bit position were most
 * of the decoding cost. */
static inline void
blk_unpack(const uint8_t *src, int w, Py_ssize_t n, uint32_t *out)
{
#define BLK_CASE(W)                                                                           \
    case W:                                                                                 \
        blk_unpack_##W(src, n, out);                                                        \
        return;
    switch (w) {
    case 0:
        memset(out, 0, sizeof(uint32_t) * (size_t)n);
        return;
        BLK_CASE(1) BLK_CASE(2) BLK_CASE(3) BLK_CASE(4) BLK_CASE(5) BLK_CASE(6) BLK_CASE(7)
        BLK_CASE(8) BLK_CASE(9) BLK_CASE(10) BLK_CASE(11) BLK_CASE(12) BLK_CASE(13)
        BLK_CASE(14) BLK_CASE(15) BLK_CASE(16) BLK_CASE(17) BLK_CASE(18) BLK_CASE(19)
        BLK_CASE(20) BLK_CASE(21) BLK_CASE(22) BLK_CASE(23) BLK_CASE(24) BLK_CASE(25)
        BLK_CASE(26) BLK_CASE(27) BLK_CASE(28) BLK_CASE(29) BLK_CASE(30) BLK_CASE(31)
        BLK_CASE(32)
    default: /* never: blk_view rejects widths above 32 */
        memset(out, 0, sizeof(uint32_t) * (size_t)n);
        return;
    }
#undef BLK_CASE
}

/* Pack n values of w bits into dst (zeroed beforehand, blk_packed(n, w) bytes). */
static inline void
blk_pack(uint8_t *dst, const uint32_t *vals, Py_ssize_t n, int w)
{
    size_t bit = 0;
    for (Py_ssize_t i = 0; i < n && w; i++, bit += (size_t)w) {
        uint64_t v = (uint64_t)vals[i] << (bit & 7);
        uint8_t *p = dst + (bit >> 3);
        for (int k = 0; k < 5 && v; k++, v >>= 8) {
            p[k] |= (uint8_t)v;
        }
    }
}

/* The layout of one block, read from its header and checked against its size. */
typedef struct {
    int nprof, wd, wt;
    const uint8_t *prof, *dgaps, *tfs;
} BlockView;

/* Read the header of block `p` of `size` bytes holding n postings (cap: the largest frontier tf). */
static inline enum blk_error
blk_view(const uint8_t *p, size_t size, Py_ssize_t n, int cap, BlockView *v)
{
    if (size < BLK_HEADER) {
        return BLK_BAD_SIZE;
    }
    v->nprof = p[0];
    v->wd = p[1];
    v->wt = p[2];
    if (v->wd > 32 || v->wt > 32 || v->nprof > cap) {
        return BLK_BAD_WIDTH;
    }
    size_t need = BLK_HEADER + (size_t)v->nprof * BLK_ENTRY + blk_packed(n, v->wd) +
                  blk_packed(n, v->wt);
    if (need != size) {
        return BLK_BAD_SIZE;
    }
    v->prof = p + BLK_HEADER;
    v->dgaps = v->prof + (size_t)v->nprof * BLK_ENTRY;
    v->tfs = v->dgaps + blk_packed(n, v->wd);
    return BLK_OK;
}

/* Decode the docnos of a block: gaps from `prev` (-1 or the previous block's last docno); they
 * must end exactly at `last` < n_docs. `scratch` holds n values. */
static inline enum blk_error
blk_docs(const BlockView *v, Py_ssize_t n, int32_t prev, int32_t last, int32_t n_docs,
         uint32_t *scratch, int32_t *docs)
{
    if (prev < -1 || last <= prev || last >= n_docs || n <= 0) {
        return BLK_BAD_DOCS;
    }
    blk_unpack(v->dgaps, v->wd, n, scratch);
    /* Every step adds at least 1, so the docnos ascend and, when the last one is `last`, none
     * exceeds it: one check at the end (int64: 256 gaps of 2**32 cannot overflow). On failure
     * `docs` holds garbage, which no caller reads. */
    int64_t d = prev;
    for (Py_ssize_t i = 0; i < n; i++) {
        d += (int64_t)scratch[i] + 1;
        docs[i] = (int32_t)d;
    }
    return d == last ? BLK_OK : BLK_BAD_DOCS;
}

/* Decode the tfs of a block (each in 1 .. 2**31 - 1). */
static inline enum blk_error
blk_tfs(const BlockView *v, Py_ssize_t n, uint32_t *scratch, int32_t *tfs)
{
    blk_unpack(v->tfs, v->wt, n, scratch);
    uint32_t bad = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        bad |= scratch[i] >= 0x7FFFFFFFu;
        tfs[i] = (int32_t)(scratch[i] + 1);
    }
    return bad ? BLK_BAD_TF : BLK_OK;
}

/* Frontier entry e of a block: its tf and docno, checked (tf in 1..cap, prev < doc <= last). */
static inline enum blk_error
blk_entry(const BlockView *v, int e, int cap, int32_t prev, int32_t last, int *tf, int32_t *doc)
{
    const uint8_t *p = v->prof + (size_t)e * BLK_ENTRY;
    uint32_t d = blk_load32(p + 1);
    *tf = p[0];
    *doc = (int32_t)d;
    if (*tf < 1 || *tf > cap || d > 0x7FFFFFFFu || (int64_t)d <= prev || (int64_t)d > last) {
        return BLK_BAD_FRONTIER;
    }
    return BLK_OK;
}

/* Scratch for encoding one block: per tf up to cap, the shortest document (length, docno). */
typedef struct {
    int64_t minlen[BLK_MAX_CAP + 1];
    int32_t mindoc[BLK_MAX_CAP + 1];
    uint32_t gaps[BLK_MAX], vals[BLK_MAX];
} BlockScratch;

/* Size of a block once encoded (with its frontier in s->...), and fill s: gaps, widths,
 * frontier. docs/tfs: the block's n postings; prev: the previous docno (-1 at a term's start);
 * plen: each posting's document length. Returns the encoded size; *nprof, *wd, *wt are set. */
static inline size_t
blk_plan(const int32_t *docs, const int32_t *tfs, Py_ssize_t n, int32_t prev, const int32_t *plen,
         int cap, BlockScratch *s, int *nprof, int *wd, int *wt)
{
    uint32_t mg = 0, mt = 0;
    for (int t = 0; t <= cap; t++) {
        s->minlen[t] = INT64_MAX;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t g = (uint32_t)(docs[i] - prev - 1);
        prev = docs[i];
        s->gaps[i] = g;
        mg |= g;
        uint32_t t1 = (uint32_t)(tfs[i] - 1);
        s->vals[i] = t1;
        mt |= t1;
        int tf = tfs[i];
        if (tf <= cap) {
            int64_t L = plen[i];
            if (L < s->minlen[tf]) { /* strictly: the first (lowest docno) among equals */
                s->minlen[tf] = L;
                s->mindoc[tf] = docs[i];
            }
        }
    }
    int m = 0;
    int64_t best = INT64_MAX;
    for (int t = cap; t >= 1; t--) {
        if (s->minlen[t] < best) {
            best = s->minlen[t];
            m++;
        }
    }
    *nprof = m;
    *wd = blk_bits(mg);
    *wt = blk_bits(mt);
    return BLK_HEADER + (size_t)m * BLK_ENTRY + blk_packed(n, *wd) + blk_packed(n, *wt);
}

/* Write the block planned by blk_plan to dst (its size, zeroed beforehand). */
static inline void
blk_write(uint8_t *dst, Py_ssize_t n, int cap, const BlockScratch *s, int nprof, int wd, int wt)
{
    dst[0] = (uint8_t)nprof;
    dst[1] = (uint8_t)wd;
    dst[2] = (uint8_t)wt;
    uint8_t *p = dst + BLK_HEADER;
    int64_t best = INT64_MAX;
    for (int t = cap; t >= 1; t--) {
        if (s->minlen[t] < best) {
            best = s->minlen[t];
            p[0] = (uint8_t)t;
            blk_store32(p + 1, (uint32_t)s->mindoc[t]);
            p += BLK_ENTRY;
        }
    }
    blk_pack(p, s->gaps, n, wd);
    p += blk_packed(n, wd);
    blk_pack(p, s->vals, n, wt);
}

#endif
