/* What the exhaustive traversal's sources share (exhaustive.c: a segment whole, and the entry
 * point; windows.c: window by window; split.c: the windows split across threads). */
#ifndef BM25DESK_EXHAUSTIVE_H
#define BM25DESK_EXHAUSTIVE_H

#include "topk.h"

/* The tf part of the posting at list position p with a tf above the table's cap: the term's
 * overflow value, or NaN (the cursor is then broken). */
double overflow_part(Cursor *c, Py_ssize_t p, int32_t tf);

/* Decode block b of c: its docnos in c->bd and tfs (returned), or NULL (broken). */
static inline const int32_t *
load_block(Cursor *c, Py_ssize_t b)
{
    if (c->dblk != b && cur_load(c, b) < 0) {
        return NULL;
    }
    return cur_tfs(c);
}

/* The tf parts of the m postings of one decoded block into tp: T[dl_index[d], tf], or the
 * overflow value. W is the length index's item size, a constant at each call (the body is
 * specialised: no width test per posting). Everything the loop reads is in locals, so that the
 * compiler need not reload it after each store. Returns -1 when the postings are broken. */
static inline __attribute__((always_inline)) int
block_parts(Cursor *c, const int32_t *docs, const int32_t *tfs, Py_ssize_t m, Py_ssize_t p0,
            double *tp, const int W)
{
    const double *T = c->T;
    const void *dli = c->dli;
    const uint32_t cap = (uint32_t)c->cap, rows = (uint32_t)c->rows;
    const Py_ssize_t stride = c->stride, tstride = c->tstride;
    int bad = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        int32_t tf = tfs[i];
        uint32_t j = W == 1   ? ((const uint8_t *)dli)[docs[i]]
                     : W == 2 ? ((const uint16_t *)dli)[docs[i]]
                              : (uint32_t)((const int32_t *)dli)[docs[i]];
        if (LIKELY((uint32_t)(tf - 1) < cap)) {
            bad |= j >= rows; /* (a negative int32 row is a huge uint32) */
            tp[i] = T[(Py_ssize_t)(j < rows ? j : 0) * stride + tf * tstride];
        }
        else {
            double v = overflow_part(c, p0 + i, tf);
            if (v != v) {
                return -1;
            }
            tp[i] = v;
        }
    }
    if (UNLIKELY(bad)) {
        cur_broken(c);
        return -1;
    }
    return 0;
}

/* The codes of the m postings of one decoded block (list positions p0...) into p's: tf * rows + j
 * (the place of T[dl_index[d], tf] in the table by column), or the escape for a tf above the cap,
 * checked against the term's overflow positions as block_parts checks it. W: the length index's
 * item size. Returns -1 when the postings are broken. */
static inline __attribute__((always_inline)) int
block_codes(Cursor *c, Parts *p, const int32_t *docs, const int32_t *tfs, Py_ssize_t m,
            Py_ssize_t p0, const int W)
{
    const void *dli = c->dli;
    const uint32_t cap = (uint32_t)c->cap, rows = (uint32_t)p->rows;
    uint16_t *c16 = (uint16_t *)p->codes + p0;
    uint32_t *c32 = (uint32_t *)p->codes + p0;
    const int narrow = p->cw == 2;
    int bad = 0;
    Py_ssize_t escaped = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        int32_t tf = tfs[i];
        uint32_t j = W == 1   ? ((const uint8_t *)dli)[docs[i]]
                     : W == 2 ? ((const uint16_t *)dli)[docs[i]]
                              : (uint32_t)((const int32_t *)dli)[docs[i]];
        uint32_t code;
        if (LIKELY((uint32_t)(tf - 1) < cap)) {
            bad |= j >= rows; /* (a negative int32 row is a huge uint32) */
            code = (uint32_t)tf * rows + (j < rows ? j : 0);
        }
        else {
            double v = overflow_part(c, p0 + i, tf);
            if (v != v) {
                return -1;
            }
            code = PARTS_OVF32;
            escaped++;
        }
        if (narrow) {
            c16[i] = (uint16_t)code; /* (PARTS_OVF32 becomes PARTS_OVF16) */
        }
        else {
            c32[i] = code;
        }
    }
    /* every overflow position of the block escaped (each escape was found among them): the
     * reader adds the overflow values by position */
    if (UNLIKELY(c->novf) && !bad) {
        Py_ssize_t a = parts_first_overflow(p, p0), z = parts_first_overflow(p, p0 + m);
        bad = z - a != escaped;
    }
    if (UNLIKELY(bad)) {
        cur_broken(c);
        return -1;
    }
    return 0;
}

static inline int
block_codes_w(Cursor *c, Parts *p, const int32_t *docs, const int32_t *tfs, Py_ssize_t m,
              Py_ssize_t p0)
{
    return c->dli_w == 1   ? block_codes(c, p, docs, tfs, m, p0, 1)
           : c->dli_w == 2 ? block_codes(c, p, docs, tfs, m, p0, 2)
                           : block_codes(c, p, docs, tfs, m, p0, 4);
}

/* Whether (s, d) would enter the full heap h (worse than nothing in it: inline, as most
 * documents of a query with a frequent term do not). */
static inline int
enters(const Heap *h, double s, int64_t d)
{
    if (h->size < h->cap) {
        return 1;
    }
    return s > h->s[0] || (s == h->s[0] && d < h->d[0]);
}

/* The k best of c[0..n) as h's entries, best first (build_result sorts them, already in order;
 * nothing reads them as a heap again). Returns -1 when out of memory (h unchanged). */
int keep_best(Heap *h, Entry *c, Py_ssize_t n);

/* Dense: postings for a quarter of the documents or more. Marking only, then one sequential
 * pass over `seen` lists the matches in docno order (a matching document may score exactly
 * 0.0: `seen`, not the score, says it matched). */
static inline int
is_dense(const Query *q, Py_ssize_t ndocs)
{
    return q->total_postings >= ndocs / 4;
}

/* One term's postings not yet added: a run of docnos (a decoded block, or a filled Parts) with
 * their tfs (tf parts still to look up) or their tf parts' codes in a Parts. */
typedef struct {
    const int32_t *docs, *tfs;
    const Parts *pa; /* codes of docs[i] at pa's position p0 + i (else tfs) */
    Py_ssize_t i, m, p0; /* next posting of the run, the run's end, list position of docs[0] */
    Py_ssize_t b;        /* next block to decode */
    int fill;            /* filling the cursor's Parts (claimed, not yet published) */
    Py_ssize_t fill_end; /* blocks from here on are not this run's to fill */
    int32_t lo;          /* the run's first docno (a slice's first block may start before it) */
    int shared;          /* the fill is one slice's (see Slice): the caller publishes it */
    int filled;          /* shared: this run's blocks went in whole */
} Run;

/* One slice of a windowed traversal: the windows of documents [lo, hi), over its own cursors
 * (q->cs), heap (q->h), sums and marks. The first slice works on the query itself; the others on
 * copies (own), run on threads of their own. */
typedef struct {
    Query *q, own;
    Heap heap;
    Run *runs;
    Py_ssize_t lo, hi, win;
    double *acc;
    uint8_t *seen;
    int take;
    long long matches; /* -1: out of memory */
} Slice;

/* windows.c */
Py_ssize_t first_block(const Cursor *c, int32_t lo);
void run_start(Cursor *c, Run *r, int32_t lo, int claimed, Py_ssize_t fill_end);
void slice_run(Slice *sl);
/* The windowed traversal (in nsl slices when nsl > 1: split_windows). acc and seen: at least
 * win each, zeroed. Returns the matches, or -1 when out of memory. */
long long exhaustive_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc,
                             uint8_t *seen, int take, int nsl);

/* split.c */
/* How many slices a windowed traversal of q's postings takes (1: not split). */
int split_count(const Query *q);
/* The windowed traversal in nsl slices on threads: the matches, -1 (out of memory), or -2 when
 * not split (the caller then runs it in one). */
long long split_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc, uint8_t *seen,
                        int take, int nsl);

#endif
