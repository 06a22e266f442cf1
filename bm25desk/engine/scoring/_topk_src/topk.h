/*
 * _topk: exact top-k retrieval for bm25desk (document-at-a-time, block-max MaxScore).
 *
 * Dependency-free CPython extension (buffer protocol only; no numpy headers). The Python side is
 * bm25desk/engine/scoring/topk.py, which builds everything this module reads; nothing here knows a
 * ranking formula. Scores are float64 and bit-identical to the numpy path of search.py:
 *
 *     score(d) = ((0.0 + c_1) + c_2) + ...   over the query's terms present in d, in query order,
 *     c_t      = qw_t * T[dl_index[d]][tf]    (qw_t = qtf * idf, T the variant's tf-part table)
 *
 * where T was computed by the variant's own numpy tf_part, and postings with tf > cap take their
 * tf part from a per-term "overflow" array (also computed by numpy).
 *
 * The sources, by concern:
 *
 *   topk.h       the shared types and the cursor steps every traversal uses (inline: hot);
 *   buffers.c    reading and checking the arguments: buffers, sizes, integers;
 *   postings.c   PostingList: one term's postings in one segment, with block metadata;
 *   table.c      Table: a tf-part table and its bound table, checked once;
 *   maxscore.c   the traversal: seeding, block-max MaxScore, pruning, the heap of the top k;
 *   quick.c      its lean pass ahead of each full step (required lists: a conjunction);
 *   short.c      ... or, for lists of few postings, every document scored (no pruning);
 *   search.c     search(): arguments, cursors, the previous segments' top k, the result;
 *   ranked.c     ranked(): the same for term ids of a stored segment, in one call (search.h:
 *                what the two share);
 *   arena.c      their scratch: one block kept between calls;
 *   exhaustive.c the exhaustive traversal: every posting added into a score array;
 *   sums.c       ... its add loops and its top k of a range of sums (the spare sums);
 *   windows.c    ... window by window on a large segment; split.c: its windows across threads
 *                (workers.c: the parked threads that run them);
 *   exquery.c    exhaustive_query(): one query over every segment in one call, reading the
 *                cache's maps (segview.c: Segment, what it needs of a segment);
 *                (exhaustive.h: what these share);
 *   parts.c      Parts: a term's decoded tf parts kept for the exhaustive traversal;
 *   count.c      count(): documents in the union of posting lists;
 *   weights.c    remember(): a query's new terms' weightings by df into a search's tables;
 *                weighed(): a query's terms with their weightings, in query order;
 *   module.c     the module and its types.
 *
 * A kernel that cannot crash: every entry point checks every argument (types, dtypes,
 * contiguity, lengths, docnos within n_docs, columns, k, sizes that could overflow) and raises
 * ValueError or TypeError with a one-line message. A PostingList keeps the buffers it was built
 * from, which Python code could still write to (or a memory-mapped file rewritten in place could
 * change): the traversal re-checks, at every step, the invariants that keep its reads in bounds
 * (docnos ascending and below n_docs, tf in range, length rows inside the table), stops at the
 * first violation and raises ValueError ("the postings changed after the PostingList was built").
 *
 * Compile without floating-point contraction (-ffp-contract=off): an FMA would change the
 * rounding of `acc + qw * t` and break bit-identity with numpy.
 */
#ifndef BM25DESK_TOPK_H
#define BM25DESK_TOPK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "blocks.h"

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif
#if defined(_MSC_VER)
#pragma fp_contract(off)
#endif

#define END_DOC INT32_MAX
#define MAX_CAP BLK_MAX_CAP
#define MAX_COLUMNS 1000000
#define CHANGED_POSTINGS                                                                       \
    "the postings changed after the PostingList was built (was an index file modified while " \
    "open?)"

/* ------------------------------------------------------------------------------------------ */
/* buffers.c                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* kind: 'i' = int32, 'q' = int64, 'd' = float64, 'b' = 1 byte (bool / uint8 / int8). */
int get_buffer(PyObject *obj, Py_buffer *view, char kind, const char *what);
/* A length index: uint8, uint16 or int32 (the narrowest that holds the rows: a smaller array
 * stays in cache); *width is its item size. */
int get_dli_buffer(PyObject *obj, Py_buffer *view, int *width);

/* Row of document d in a length index of item size w. */
static inline int32_t
dli_at(const void *p, int w, int32_t d)
{
    if (w == 1) {
        return ((const uint8_t *)p)[d];
    }
    if (w == 2) {
        return ((const uint16_t *)p)[d];
    }
    return ((const int32_t *)p)[d];
}
/* The same for an optional argument (None: no buffer, *have = 0). */
int get_optional_buffer(PyObject *obj, Py_buffer *view, int *have, char kind, const char *what);
/* An integer argument in [lo, hi], else a TypeError/ValueError naming it; with `clamp`, one
 * beyond any size (>= 2**63 - 1) reads as hi. */
int get_count(PyObject *obj, const char *what, Py_ssize_t lo, Py_ssize_t hi, int clamp,
              Py_ssize_t *out);
/* n * m * size fits a Py_ssize_t (so a result of that many bytes can be allocated). */
int product_fits(Py_ssize_t n, Py_ssize_t m, Py_ssize_t size);

static inline Py_ssize_t
buf_len(const Py_buffer *v)
{
    return v->len / v->itemsize;
}

/* ------------------------------------------------------------------------------------------ */
/* weights.c: what the kernels read of a weighting                                             */
/* ------------------------------------------------------------------------------------------ */

/* A weighting's idf (k1 = 0) or k1 (k1 = 1), a new reference (NULL with an exception):
 * read off its slot when it is a TermWeight (whose __getattr__, there for its lazy idf text,
 * makes every getattr a call of the slot hook: ~5x the instructions, twice a term a query), else
 * PyObject_GetAttr(w, name). */
PyObject *weighting_attr(PyObject *w, PyObject *name, int k1);

/* ------------------------------------------------------------------------------------------ */
/* postings.c: PostingList                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* One term's postings in one segment, as blocks (bm25desk/engine/index/_blocks_src/blocks.h):
 * either encoded here from int32 arrays (owned), or the blocks of a stored segment (buffers kept
 * referenced; nothing is read until a search decodes them, checking every block it reads). */
typedef struct {
    PyObject_HEAD
    Py_buffer dli_view;  /* the length-index array it was built for (search must pass it) */
    Py_buffer stream_view, off_view, last_view;
    int have_dli, have_stored;
    int dli_w;           /* item size of the length index (1, 2 or 4) */
    int ready;           /* set once __init__ has finished: nothing may use it before */
    uint8_t *own_stream; /* encoded here (with BLK_PAD zero bytes), or NULL when stored */
    int64_t *own_off;
    int32_t *own_last;
    const uint8_t *stream;
    Py_ssize_t slen;     /* readable bytes of stream, padding included */
    const int64_t *blk_off;  /* this term's blocks: offsets (nblk + 1) and last docnos */
    const int32_t *blk_last;
    Py_ssize_t n;        /* postings */
    int cap;             /* tf values above cap are "overflow" postings */
    int shift;           /* block size = 1 << shift */
    Py_ssize_t nblk;
    int n_tprof;         /* the term's own frontier (over all its postings): tf, docno */
    uint8_t *tprof_tf;
    int32_t *tprof_doc;
    Py_ssize_t novf;
    int32_t *ovf_pos;    /* positions (within this list) of postings with tf > cap, ascending */
    Py_ssize_t ovf_lo;   /* stored: the first of them in the segment's overflow arrays */
    int64_t post_lo;     /* stored: the term's first posting in the segment */
    int32_t max_j;       /* largest length index seen (-1: not known, for stored blocks) */
    int32_t n_docs;      /* length of the dl-index array it was built with */
} PostingList;

extern PyTypeObject PostingListType;

/* The PostingList in `obj`, or NULL with a TypeError/ValueError (not one, or not initialised). */
PostingList *as_posting_list(PyObject *obj);

/* stored(arrays, tid, dl_index, cap, shift): a PostingList over a stored segment's blocks. */

/* The 9 arrays of a stored segment (see stored()) as views, checked for kind: how many were
 * taken (9: all; fewer: an exception is set, and the caller releases the ones taken). */
int stored_views(PyObject *arrays, Py_buffer v[9]);
/* The bytes [*a, *z) of term tid's frontier entries in a segment's frontier arrays (term ids
 * ascending, their offsets, the entries): 0, or -1 when they do not hold it whole (no exception
 * is set: callable without the GIL). */
int stored_frontier_at(Py_ssize_t tid, const Py_buffer *terms, const Py_buffer *off,
                       const Py_buffer *data, int64_t *a, int64_t *z);
/* Term tid's list over borrowed views (stored_views, and a length index of item size dli_w),
 * checked as stored() checks it, in a caller-owned struct: nothing is referenced, so it must not
 * outlive the views. Its arrays come from `arena` (then nothing to free), or with arena NULL from
 * malloc: free it with stored_list_free (also after a failure: -1 with an exception). Its term
 * frontier (bounds: a pruning traversal needs it, the short path does not) is read by
 * stored_list_frontier. */
int stored_list(PostingList *pl, const Py_buffer v[9], Py_ssize_t tid, const Py_buffer *dli,
                int dli_w, int cap, int shift, Arena *arena);
int stored_list_frontier(PostingList *pl, const Py_buffer v[9], Py_ssize_t tid, Arena *arena);
void stored_list_free(PostingList *pl);
/* Whether term tid of the views (stored_views) has postings with tf > cap: 1 or 0, from two ptr
 * entries and a binary search of ovf, nothing copied; -1 when it cannot tell (a term or range
 * that does not fit: stored_list then reports it). No Python error is set. */
int stored_has_overflow(const Py_buffer v[9], Py_ssize_t tid);
PyObject *topk_stored(PyObject *module, PyObject *args, PyObject *kwds);

/* ------------------------------------------------------------------------------------------ */
/* table.c: Table                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* A tf-part table T and its bound table U (rows of cap + 1; column 0 unused), checked once:
 * T finite and >= 0, U >= T, U non-decreasing in tf and non-increasing down the rows. The
 * buffers must be read-only, so that what was checked stays true. */
typedef struct {
    PyObject_HEAD
    Py_buffer t_view;
    Py_buffer u_view;
    int have_t, have_u;  /* have_u == 0: U is T */
    int ready;
    const double *T, *U;
    double *Tc, *Uc;     /* the same by column (tf-major: Tc[tf * rows + j]), the kernel's copy:
                          * a query's postings use a few small tfs, whose columns stay in cache
                          * where rows of every length did not (long documents: thousands of
                          * lengths); Uc == Tc when U is T; column 0 (tf 0) is +0.0 */
    Py_ssize_t rows;
    int cap;
    double tmin;         /* the smallest entry of T for tf >= 1 (a bound below every posting's tf
                          * part: the exhaustive path's test of positive contributions) */
} Table;

extern PyTypeObject TableType;

/* Check a (T, U) pair of `rows` rows of cap + 1 (see Table); ValueError naming what is wrong. */
int check_tables(const double *T, const double *U, Py_ssize_t rows, int cap);
/* The smallest tf part of a table T of `rows` rows of cap + 1 (tf >= 1), +inf when it has none:
 * a Table's tmin, and a cursor's (the exhaustive path's test of positive contributions). */
double table_min(const double *T, Py_ssize_t rows, int cap);

/* ------------------------------------------------------------------------------------------ */
/* parts.c: Parts                                                                              */
/* ------------------------------------------------------------------------------------------ */

enum { PARTS_EMPTY = 0, PARTS_FILLING = 1, PARTS_READY = 2 };

/* One PostingList's docnos and tf parts under one Table, filled once by the exhaustive path
 * (see parts.c). A posting's tf part is kept as a code, its place in the table by column
 * (Tc[tf * rows + j], the double the decoding looks up), or PARTS_ESC for a tf above the cap
 * (its value in ovf, by the list's overflow positions): 6 bytes a posting (8 with a table of
 * 64 K places or more) where a float64 made it 12. */
typedef struct {
    PyObject_HEAD
    PyObject *pl, *table;  /* what it was made for: a PostingList, or the Segment (exquery.c)
                            * whose views `own` borrows; a search checks the term has the same */
    PostingList own;       /* made from a Segment: the term's list over its views */
    const PostingList *list; /* its postings (pl's, or &own) */
    Py_ssize_t n;
    int32_t *docs;         /* docnos and codes: allocated by the fill (NULL before) */
    void *codes;           /* uint16_t (cw 2) or uint32_t (cw 4) per posting */
    int cw;
    const double *Tc;      /* the table's by column (table holds it) */
    Py_ssize_t rows;
    const int32_t *ovf_pos; /* the list's overflow positions (its list holds them), ascending */
    Py_ssize_t novf;
    double *ovf;           /* their tf parts: given (have_ovf), else copied when a fill begins */
    int have_ovf;
    int fillable;          /* 0: never filled (a long list met once: each search decodes it) */
    int ref;               /* set by each exhaustive_query() that reads it (see postings_cache) */
    double tpmin;          /* once filled, at most its smallest tf part (the table's smallest
                            * entry when that is positive, else exactly; +inf: none) */
    int state;             /* PARTS_*, read and changed atomically */
    Py_ssize_t tid;        /* made from a Segment: the term's id there (else -1) */
    uint64_t umax;         /* the bits of the largest U over the list (parts_umax), once known;
                            * all ones (a NaN): not yet; read and written atomically */
} Parts;

/* The code of an overflow posting: the place of tf 0 in the table by column, whose +0.0 it adds
 * (its value is added apart, by position: a loop over the codes needs no test). Every posting's
 * own code is tf * rows + j >= rows > 0. */
#define PARTS_ESC 0u

extern PyTypeObject PartsType;

/* Whether pl holds the postings p was made for (itself, or the same stored blocks). */
int parts_fit(const Parts *p, const PostingList *pl);
/* Take the right to fill p (1), or not (0: being filled or filled). */
int parts_claim(Parts *p);
/* The first of p's overflow postings at list position pos or beyond (novf: none). */
Py_ssize_t parts_first_overflow(const Parts *p, Py_ssize_t pos);
/* Whether p is filled (its arrays may be read). */
int parts_ready(const Parts *p);
/* End a fill: filled (ok: its smallest tf part noted first) or empty again. */
void parts_publish(Parts *p, int ok);

/* ------------------------------------------------------------------------------------------ */
/* cursors: one term's position in one posting list (the steps of every traversal)            */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    const uint8_t *stream;
    Py_ssize_t slen;
    const int64_t *blk_off;
    Py_ssize_t n, pos;
    int32_t cur;                     /* the docno at pos, or END_DOC */
    int32_t ndocs;                   /* docnos must stay below this */
    int *broken;                     /* set when the postings are found changed or damaged */
    const int32_t *blk_last;
    Py_ssize_t nblk, blk;            /* blk: block pointer for bound look-ups (monotone) */
    int shift, cap;
    Py_ssize_t stride, tstride;      /* T and U: entry (j, tf) at j * stride + tf * tstride */
    int32_t *bd, *bt;                /* decoded docnos of block dblk, tfs of block tblk */
    Py_ssize_t dblk, tblk;
    BlockView bv;                    /* the layout of block dblk */
    const void *dli;                 /* the length index by docno (items of dli_w bytes) */
    int dli_w;
    Py_ssize_t rows;                 /* rows of T and U */
    double *bub;                     /* lazily computed block maxima of U (NaN = unknown) */
    const double *T, *U;
    double tmin;                     /* T's smallest tf part (table_min), or NaN: unknown */
    const int32_t *ovf_pos;
    const double *ovf_val;
    Py_ssize_t novf, oi;
    double qw, qwp;                  /* qwp = max(qw, 0): bounds of a negative weight are 0 */
    double ub;                       /* the term's upper bound (qwp * max U) */
    double bb;                       /* the block bound used for the current candidate */
    int qi;                          /* position in query order */
    int32_t tf_last;                 /* tf and tf part of the last contribution computed */
    double tp_last;
    Parts *parts;                    /* exhaustive path: decoded tf parts to read or fill, or NULL */
} Cursor;

/* parts_claim, and on success take c's overflow values (c: p's list under p's table). */
int parts_take(Parts *p, const Cursor *c);

/* Mark the postings as changed and end the cursor (every loop then runs out). */
static inline void
cur_broken(Cursor *c)
{
    *c->broken = 1;
    c->pos = c->n;
    c->cur = END_DOC;
}

/* Postings in block b. */
static inline Py_ssize_t
blk_count(const Cursor *c, Py_ssize_t b)
{
    Py_ssize_t a = b << c->shift, z = a + ((Py_ssize_t)1 << c->shift);
    return (z < c->n ? z : c->n) - a;
}

/* Check the layout of block b: *v, or -1. */
static inline int
blk_layout(const Cursor *c, Py_ssize_t b, BlockView *v)
{
    int64_t lo = c->blk_off[b], hi = c->blk_off[b + 1];
    if (UNLIKELY(lo < 0 || hi < lo || hi > (int64_t)c->slen - BLK_PAD)) {
        return -1;
    }
    return blk_view(c->stream + lo, (size_t)(hi - lo), blk_count(c, b), c->cap, v) == BLK_OK
               ? 0
               : -1;
}

/* Decode the docnos of block b into c->bd (0), or mark the cursor broken (-1). */
static inline int
cur_load(Cursor *c, Py_ssize_t b)
{
    BlockView v;
    int32_t prev = b ? c->blk_last[b - 1] : -1;
    c->tblk = -1; /* bt is the scratch of the docno gaps */
    if (UNLIKELY(blk_layout(c, b, &v) < 0 ||
                 blk_docs(&v, blk_count(c, b), prev, c->blk_last[b], c->ndocs,
                          (uint32_t *)c->bt, c->bd) != BLK_OK)) {
        c->dblk = -1;
        cur_broken(c);
        return -1;
    }
    c->bv = v;
    c->dblk = b;
    return 0;
}

/* The tfs of block dblk (decoded on first use), or NULL (the cursor is then broken). */
static inline const int32_t *
cur_tfs(Cursor *c)
{
    if (c->tblk != c->dblk) {
        if (UNLIKELY(blk_tfs(&c->bv, blk_count(c, c->dblk), (uint32_t *)c->bt, c->bt) !=
                     BLK_OK)) {
            cur_broken(c);
            return NULL;
        }
        c->tblk = c->dblk;
    }
    return c->bt;
}

/* Move to position p: its docno must be above the current one and below n_docs. */
static inline void
cur_set(Cursor *c, Py_ssize_t p)
{
    if (p >= c->n) {
        c->pos = c->n;
        c->cur = END_DOC;
        return;
    }
    Py_ssize_t b = p >> c->shift;
    if (b != c->dblk && cur_load(c, b) < 0) {
        return;
    }
    int32_t d = c->bd[p & (((Py_ssize_t)1 << c->shift) - 1)];
    if (UNLIKELY(d <= c->cur || d >= c->ndocs)) {
        cur_broken(c);
        return;
    }
    c->pos = p;
    c->cur = d;
}

/* Back to the first posting (and the first block, the first overflow posting). */
static inline void
cur_rewind(Cursor *c)
{
    c->cur = -1;
    c->blk = 0;
    c->oi = 0;
    cur_set(c, 0);
}

static inline void
advance(Cursor *c)
{
    cur_set(c, c->pos + 1);
}

/* Move to the first posting with docno >= d (block skips, then a search inside the block). */
static inline void
next_geq(Cursor *c, int32_t d)
{
    if (c->cur >= d) {
        return;
    }
    Py_ssize_t b = c->pos >> c->shift;
    if (c->blk > b) {
        b = c->blk;
    }
    const int32_t *bl = c->blk_last;
    while (b < c->nblk && bl[b] < d) {
        b++;
    }
    if (b >= c->nblk) {
        cur_set(c, c->n);
        return;
    }
    if (b != c->dblk && cur_load(c, b) < 0) {
        return;
    }
    Py_ssize_t base = b << c->shift;
    Py_ssize_t lo = c->pos > base ? c->pos - base : 0;
    /* bd[hi] is the block's last docno (>= d): find the first index in [lo, hi] with bd >= d */
    Py_ssize_t hi = blk_count(c, b) - 1;
    const int32_t *docs = c->bd;
    while (hi - lo > 8) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (docs[mid] < d) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    while (lo < hi && docs[lo] < d) {
        lo++;
    }
    if (UNLIKELY(docs[lo] < d)) { /* the block's last docno is no longer what it was */
        cur_broken(c);
        return;
    }
    cur_set(c, base + lo);
}

/* The length-index row of docno d, or -1 (the cursor is then broken). */
static inline int32_t
row_of(Cursor *c, int32_t d)
{
    int32_t j = dli_at(c->dli, c->dli_w, d);
    if (UNLIKELY(j < 0 || (Py_ssize_t)j >= c->rows)) {
        cur_broken(c);
        return -1;
    }
    return j;
}

/* The largest of m and the overflow values (tf > cap: exact tf parts, checked by search()) of
 * the postings in block b: the overflow positions ascend, so a binary search finds the block's. */
static inline double
blk_overflow_max(const Cursor *c, Py_ssize_t b, double m)
{
    Py_ssize_t a = b << c->shift, z = a + ((Py_ssize_t)1 << c->shift), lo = 0, hi = c->novf;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (c->ovf_pos[mid] < a) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    for (; lo < c->novf && c->ovf_pos[lo] < z; lo++) {
        m = c->ovf_val[lo] > m ? c->ovf_val[lo] : m;
    }
    return m;
}

/* Block maximum of U over block b (unscaled), computed on first use from the block's frontier,
 * with the exact tf parts of its overflow postings folded in (on first use too: computing every
 * such block's maximum up front cost a fifth of a query on long documents, where the frequent
 * terms have tf > cap in most postings). */
static inline double
blk_max(Cursor *c, Py_ssize_t b)
{
    double v = c->bub[b];
    if (LIKELY(v == v)) {
        return v;
    }
    BlockView bv;
    double m = 0.0;
    int32_t prev = b ? c->blk_last[b - 1] : -1, last = c->blk_last[b];
    if (UNLIKELY(blk_layout(c, b, &bv) < 0 || prev < -1 || last <= prev || last >= c->ndocs)) {
        cur_broken(c);
        return 0.0;
    }
    const double *U = c->U;
    for (int e = 0; e < bv.nprof; e++) {
        int tf;
        int32_t doc;
        if (UNLIKELY(blk_entry(&bv, e, c->cap, prev, last, &tf, &doc) != BLK_OK)) {
            cur_broken(c);
            return 0.0;
        }
        int32_t j = row_of(c, doc);
        if (j < 0) {
            return 0.0;
        }
        double t = U[(Py_ssize_t)j * c->stride + tf * c->tstride];
        if (t > m) {
            m = t;
        }
    }
    if (c->novf && c->ovf_val) {
        m = blk_overflow_max(c, b, m);
    }
    c->bub[b] = m;
    return m;
}

/* Bound of this term's contribution to document d: the maximum of the block that would hold d
 * (0 when the list has no posting >= d). Moves the block pointer to that block. */
static inline double
block_bound(Cursor *c, int32_t d)
{
    if (c->qwp == 0.0) {
        return 0.0;
    }
    Py_ssize_t b = c->blk;
    Py_ssize_t pb = c->pos >> c->shift;
    if (pb > b) {
        b = pb;
    }
    const int32_t *bl = c->blk_last;
    while (b < c->nblk && bl[b] < d) {
        b++;
    }
    c->blk = b;
    if (b >= c->nblk) {
        return 0.0;
    }
    return c->qwp * blk_max(c, b);
}

/* The contribution qw * tf_part of the posting under the cursor (as numpy computes it). */
static inline double
contrib(Cursor *c)
{
    const int32_t *tfs = cur_tfs(c);
    if (UNLIKELY(!tfs)) {
        return 0.0;
    }
    int32_t tf = tfs[c->pos & (((Py_ssize_t)1 << c->shift) - 1)];
    double tp;
    if (LIKELY((uint32_t)(tf - 1) < (uint32_t)c->cap)) {
        int32_t j = dli_at(c->dli, c->dli_w, c->cur);
        if (UNLIKELY((uint64_t)(uint32_t)j >= (uint64_t)c->rows || j < 0)) {
            cur_broken(c);
            return 0.0;
        }
        tp = c->T[(Py_ssize_t)j * c->stride + tf * c->tstride];
    }
    else {
        while (c->oi < c->novf && c->ovf_pos[c->oi] < c->pos) {
            c->oi++;
        }
        if (UNLIKELY(tf < 1 || c->oi >= c->novf || c->ovf_pos[c->oi] != c->pos)) {
            cur_broken(c);
            return 0.0;
        }
        tp = c->ovf_val[c->oi];
    }
    c->tf_last = tf;
    c->tp_last = tp;
    return c->qw * tp;
}

/* Scratch per cursor: decoded docnos and tfs of one block each. */
#define CURSOR_SCRATCH (2 * BLK_MAX)

/* A cursor at the start of `pl` (no table: for counting), decoding into `scratch`
 * (CURSOR_SCRATCH int32 values) and reading lengths through dli (NULL: no bounds). */
void cursor_init(Cursor *c, const PostingList *pl, int *broken, int32_t *scratch);
/* The same, before its first posting: nothing decoded yet (the exhaustive traversal decodes
 * each block as it reaches it, and a term with filled Parts never does). */
void cursor_setup(Cursor *c, const PostingList *pl, int *broken, int32_t *scratch);

/* Give a copied cursor its own scratch (nothing decoded in it yet). */
static inline void
cursor_rescratch(Cursor *c, int32_t *scratch)
{
    c->bd = scratch;
    c->bt = scratch + BLK_MAX;
    c->dblk = c->tblk = -1;
    if (c->pos < c->n && c->cur != END_DOC) {
        cur_load(c, c->pos >> c->shift);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* maxscore.c: the traversal of one segment                                                    */
/* ------------------------------------------------------------------------------------------ */

/* The current top k: root = worst (lowest score; among equal scores, highest docno). Each entry
 * owns a row slot: the per-term tf and tf part of its document (for explanations). */
typedef struct {
    double *s;
    int64_t *d;
    Py_ssize_t *slot;
    Py_ssize_t size, cap;
} Heap;

/* Insert (s, d) if it belongs to the top k; return the row slot it now owns, or -1. */
Py_ssize_t heap_push(Heap *h, double s, int64_t d);

typedef struct {
    Cursor *cs;
    int n;                        /* terms (cursors), in query order */
    const uint8_t *allow, *deny;
    double slack;
    int64_t base;
    Heap *h;
    Cursor *excl;                 /* a list whose documents were all handled (seeded), or NULL */
    /* per term of the document being scored (indexed by query position) */
    double *vals;
    int32_t *tfv;
    double *tpv;
    int *present;
    /* per term, the bound behind the current pruning decision (NaN: known absent); summed in
     * query order it bounds the score exactly (see prune) */
    double *qb;
    double *tb;
    /* rows: per heap slot, per column (query term), tf and tf part */
    const int *cols;
    int ncols;
    int32_t *rows_tf;
    double *rows_tp;
    /* scratch for the traversal */
    int *ord;
    double *prefix;
    Cursor *seedcs;
    int32_t *seed_scratch;        /* CURSOR_SCRATCH per seed cursor */
    double seed_ratio;
    Py_ssize_t total_postings;
    int prune;                    /* windows.c may skip the windows' low-bound lists (winprune.c):
                                   * every cursor's ub is set, and no match count is wanted */
    int broken;                   /* the postings changed under a cursor */
    /* quick.c: candidates of the list pend_e's block (docnos ascending), found through probes
     * (probes[i]: a copy of the cursor of the i-th required list, i < nprobe, own scratch in
     * probe_scratch) up to position pend_upto of pend_e; NULL pend: not kept */
    int32_t *pend;
    double *pend_b;               /* (their bounds while they are filled) */
    int npend, ipend, nprobe;
    Py_ssize_t pend_upto;
    const Cursor *pend_e;
    Cursor *probes;
    int32_t *probe_scratch;
    Cursor **rest;                /* scratch: the lists besides the one driving (n) */
    /* statistics */
    int64_t n_cand, n_scored, n_skips, n_seeded;
} Query;

/* Rank the segment's documents into q->h (called without the GIL). */
void traverse(Query *q);
/* quick.c: with the top k full, move the essential lists ord[ne..n) past the documents from cur
 * on that clearly cannot enter it; the first that might (END_DOC: none left). */
int32_t quick_prune(Query *q, const int *ord, int ne, int n, int32_t cur);
/* With the top k full: move e (whose documents are the candidates; the lists rest[0..m), by
 * descending upper bound, are probed only, noness the sum of their bounds) to its first posting
 * from its position on that might enter the top k of threshold theta (END_DOC: none). A
 * posting goes when its contribution plus noness clearly falls short; while some of the rest
 * are required (the other lists' bounds alone fall short), as a conjunction, a block of e at
 * a time through probes of them (copies of their cursors: the lists' own stay where they
 * were), the survivors kept for the following calls on e. */
int32_t conj_next(Query *q, Cursor *e, Cursor *const *rest, int m, double noness, double theta);
/* Whether conj_next() would probe (a few lists, or a required one) rather than only scan e:
 * for a caller that has its own per-document step (seed()). */
int conj_worth(const Query *q, const Cursor *e, Cursor *const *rest, int m, double theta);

/* ------------------------------------------------------------------------------------------ */
/* ranked entries: sorting the result (search.c) and selecting the k best (exhaustive.c)       */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    double s;
    int64_t d;
    Py_ssize_t slot;
} Entry;

/* x ranks before y: higher score, then lower docno (the tie rule). */
static inline int
entry_before(const Entry *x, const Entry *y)
{
    return x->s > y->s || (x->s == y->s && x->d < y->d);
}

/* Hoare partition of e[lo..hi] around its middle entry: afterwards e[lo..*j] rank no later
 * than it, e[*i..hi] no earlier, and anything between equals it (*j < *i). */
static inline void
partition_entries(Entry *e, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t *pi, Py_ssize_t *pj)
{
    Entry pivot = e[lo + (hi - lo) / 2];
    Py_ssize_t i = lo, j = hi;
    while (i <= j) {
        while (entry_before(&e[i], &pivot)) {
            i++;
        }
        while (entry_before(&pivot, &e[j])) {
            j--;
        }
        if (i <= j) {
            Entry t = e[i];
            e[i++] = e[j];
            e[j--] = t;
        }
    }
    *pi = i;
    *pj = j;
}

/* Sort e[0..n) best first (search.c; also bm25f.c's result). */
void sort_entries(Entry *e, Py_ssize_t n);
/* h's entries into es best first (a selection leaves them so: checked, sorted only if not). */
void heap_best_first(const Heap *h, Entry *es);
/* Make h a heap again (root = worst) through es (room for h->size): a segment whose k best were
 * selected from an array leaves them best first, and the next segment may push into the heap. */
void heap_rebuild(Heap *h, Entry *es);
/* es[0..m) as a result's bytes in out: docnos (int64), scores (float64) and, per entry, the nc
 * tfs (int32) and tf parts (float64) of the rows at its slot. 0, or -1 (out of memory; out is
 * then all NULL). */
int entries_bytes(const Entry *es, Py_ssize_t m, Py_ssize_t nc, const int32_t *rows_tf,
                  const double *rows_tp, PyObject *out[4]);

/* ------------------------------------------------------------------------------------------ */
/* exhaustive.c: every posting added into a score array                                        */
/* ------------------------------------------------------------------------------------------ */

/* The documents per window of the exhaustive traversal of a segment of ndocs (q prepared), or
 * 0 when it takes the segment whole. */
Py_ssize_t exhaustive_window(const Query *q, Py_ssize_t ndocs);
/* Score every document of the segment's ndocs that the terms hold into acc and seen (zeroed;
 * `win` each, win from exhaustive_window, else ndocs each, with touched: ndocs scratch, NULL when
 * windowed), push the allowed live ones into q->h, and with `rows` fill the hits' rows (slot_of:
 * ndocs scratch). Returns the number of matching documents (-1: out of memory). Unless the
 * postings were found broken, acc and seen are zeroed again on return. `split`: a large
 * windowed traversal without rows may use threads (exhaustive_threads()). Without the GIL. */
long long exhaustive(Query *q, Py_ssize_t ndocs, Py_ssize_t win, int rows, double *acc,
                     uint8_t *seen, int32_t *touched, Py_ssize_t *slot_of, int split);

/* select.c: move the k best of c[0..n) (score descending, docno ascending) to its front, best
 * first. Returns -1 when out of memory (c unchanged). */
int best_first(Entry *c, Py_ssize_t n, Py_ssize_t k);

#endif
