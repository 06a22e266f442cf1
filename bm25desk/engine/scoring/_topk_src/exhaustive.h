/* What the exhaustive traversal's sources share (exhaustive.c: a segment whole, and the entry
 * point; sums.c: the add loops and the top k of a range of sums; windows.c: window by window;
 * split.c: the windows split across threads, run by workers.c's parked threads; exquery.c and
 * segview.c: one query over every segment in one call; parts.c: what a Parts needs of them). */
#ifndef BM25DESK_EXHAUSTIVE_H
#define BM25DESK_EXHAUSTIVE_H

#include "topk.h"

/* A segment as exhaustive_query() reads it (exquery.c): its length index, deletions, first
 * docno and block layout, and when stored the views of its 9 arrays (what a Parts made by
 * parts() borrows: it holds the Segment). Made once per open index (postings_cache.py). */
typedef struct {
    PyObject_HEAD
    Py_buffer v[9];
    int nviews;          /* 9 when stored, else 0 */
    Py_buffer dli, deny;
    int have_dli, have_deny, dli_w;
    Py_ssize_t ndocs;
    int64_t base;
    int cap, shift;
    int ready;
} SegView;

extern PyTypeObject SegViewType;

/* parts.c: set_overflow(values) of a Parts (also its constructor's overflow). */
PyObject *parts_set_overflow(Parts *self, PyObject *obj);
/* A new Parts of term tid's blocks in Segment sobj under Table tobj (fill: it may be filled),
 * or NULL with an exception (see parts() in module.c). */
Parts *parts_stored(PyObject *sobj, Py_ssize_t tid, PyObject *tobj, int fill);
/* The largest entry of c's bound table U over pa's postings (its frontier, the exact values of
 * its overflow postings), kept in pa once known; NaN when it cannot be known (a frontier out of
 * range: the traversal finds the damage). c: a cursor over pa's list under pa's table. */
double parts_umax(Parts *pa, const Cursor *c);

/* What a caller lets the kernel make itself for the terms its cache's maps lack (the common
 * first use of a term, without Python): per segment the lexicon's memo of term -> id (a dict, or
 * None; found), the length under which a list needs no admission rule, the bytes an entry costs
 * beside its Parts, and the list where each entry made is noted, its map, term and bytes (three
 * items), for the cache's accounts (postings_cache.py). */
typedef struct {
    PyObject *found, *added;
    Py_ssize_t short_n, entry_bytes;
} Fresh;

/* The entry of word in a segment (sobj, a Segment; memo: its lexicon's memo) under Table tobj,
 * made here, kept in map (word -> entry) and noted in f->added: a new reference to its Parts, or
 * to None (no postings there); NULL without an exception when it is not for here (not in the
 * memo, an unstored segment, a list too long or with postings above the cap: the caller makes
 * it); NULL with one on error. */
PyObject *parts_fresh(PyObject *sobj, PyObject *memo, PyObject *word, PyObject *tobj,
                      PyObject *map, const Fresh *f);

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
            code = PARTS_ESC;
            escaped++;
        }
        if (narrow) {
            c16[i] = (uint16_t)code;
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

/* The k-th best score of h when it is full (nothing scoring less can enter), else -inf. */
static inline double
heap_kth(const Heap *h)
{
    return h->cap > 0 && h->size >= h->cap ? h->s[0] : -INFINITY;
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

/* sums.c: adding runs of postings into the sums (see there for the modes). */
enum { SUMS_SEEN = 0, SUMS_POS = 1, SUMS_TOUCH = 2, SUMS_TOUCH_POS = 3 };

typedef struct {
    double *acc;       /* sums, by docno - w0 */
    uint8_t *seen;     /* marks (not written in the _POS modes) */
    int32_t *touched;  /* the _TOUCH modes: documents met, in the order met */
    Py_ssize_t nt;
    int32_t w0;        /* the first docno of the window (0: the segment whole) */
    int mode;
} Sums;

/* acc[d - w0] += qw * (the tf part of its code) for docs[0..m) at list positions p0... of p. */
void sums_add_codes(Sums *s, const Parts *p, Py_ssize_t p0, const int32_t *docs, Py_ssize_t m,
                    double qw);
/* The same with the tf parts given (a decoded block). */
void sums_add_values(Sums *s, const int32_t *docs, const double *tp, Py_ssize_t m, double qw);

/* Where the matches go: the heap, or (take: a deep k without rows) an array the k best are
 * selected from at the end, as in take_best. When the array fills (16 k candidates) its k best
 * are selected and kept, and the k-th of them becomes a bar that later candidates must pass to
 * enter at all: a long query's 80 k candidates on 100 k passages mostly stop at one comparison
 * (a heap took every one that beat its root, each in log k steps). */
typedef struct {
    Entry *c;
    Py_ssize_t n, max; /* the heap's entries are copied in first */
    int barred;        /* bar: the k-th best so far (after the array first filled) */
    Entry bar;
    double lb;         /* take_positive: a score the k-th best reaches (0.0: none known) */
} Pool;

/* Start a pool on q's heap (an array with take). Returns -1 when out of memory. */
int pool_open(Query *q, Pool *p, int take);
/* Out of memory selecting: every candidate kept goes into the heap (emptied first: the array
 * holds its entries too), which takes the rest. */
void pool_pour(Query *q, Pool *p);

/* Offer (s, g) to the pool (inline: a long query's windows offer tens of thousands). */
static inline void
pool_put(Query *q, Pool *p, double s, int64_t g)
{
    if (p->c) {
        Entry x = {s, g, 0};
        if (p->barred && !entry_before(&x, &p->bar)) {
            return; /* k candidates rank before it already */
        }
        if (p->n == p->max) {
            Py_ssize_t k = q->h->cap;
            if (best_first(p->c, p->n, k) < 0) {
                pool_pour(q, p);
                if (enters(q->h, s, g)) {
                    heap_push(q->h, s, g);
                }
                return;
            }
            p->n = k;
            p->bar = p->c[k - 1];
            p->barred = 1;
            if (!entry_before(&x, &p->bar)) {
                return;
            }
        }
        p->c[p->n++] = x;
        return;
    }
    if (enters(q->h, s, g)) {
        heap_push(q->h, s, g);
    }
}

/* End it: with ok, its k best become the heap's entries (keep_best). Returns -1 when out of
 * memory. */
int pool_close(Query *q, Pool *p, int ok);
/* The matching (acc > 0), allowed, live documents of acc[0..len) (docnos w0...) of a positive
 * query into the pool, those that may enter only (see sums.c). Returns their number; scratch:
 * take_scratch(len) doubles. acc is left as it was. */
long long take_positive(Query *q, Pool *p, const double *acc, int32_t w0, Py_ssize_t len,
                        double *scratch);
Py_ssize_t take_scratch(Py_ssize_t len);

/* Sums, marks and a list of touched documents kept from one exhaustive_query() to the next (a
 * few spare sets, each taken and given back atomically: a call that finds none large enough
 * allocates its own; a split query takes one per slice), so that a query does not allocate and
 * clear a segment's worth of them;
 * given back cleared, as exhaustive() leaves them (a call whose postings were broken drops
 * them). */
typedef struct {
    double *acc;
    uint8_t *seen;
    int32_t *touched;
    Py_ssize_t nacc, ntouch;
} Sheet;

/* Sums and marks of nacc documents (zeroed) and a list of ntouch: the spare one when large
 * enough, else new; NULL when out of memory. */
Sheet *sheet_take(Py_ssize_t nacc, Py_ssize_t ntouch);
/* Give it back as the spare (clean: its sums and marks are zero again), or free it. */
void sheet_give(Sheet *w, int clean);

/* Whether every contribution of q's terms is > 0 (see sums.c: no marks are then kept): each
 * weight positive, and its product with a bound below its term's tf parts positive (so that no
 * product rounds to 0): a filled Parts' bound, else the table's smallest entry and the term's
 * overflow values. Whichever way a term's postings are then read (a Parts, or blocks decoded),
 * each contribution is at least that product. */
int query_positive(const Query *q);

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
 * copies (own), run on parked worker threads (workers.c). */
typedef struct {
    Query *q, own;
    Heap heap;
    Run *runs;
    Py_ssize_t lo, hi, win;
    double *acc;
    uint8_t *seen;
    int take;
    int pos;           /* positive: no marks (see query_positive) */
    long long matches; /* -1: out of memory */
    Sheet *sheet;      /* where acc and seen are (the slices after the first; else NULL) */
    uint64_t *theta;   /* the best k-th score of the slices' full heaps (bits), or NULL */
} Slice;

/* windows.c */
/* The first index of a[0..n) (ascending) holding lo or beyond (n: none). */
Py_ssize_t first_at_least(const int32_t *a, Py_ssize_t n, int32_t lo);
Py_ssize_t first_block(const Cursor *c, int32_t lo);
void run_start(Cursor *c, Run *r, int32_t lo, int claimed, Py_ssize_t fill_end);
void slice_run(Slice *sl);
/* The windowed traversal (in nsl slices when nsl > 1: split_windows); pos: the query is
 * positive (query_positive). acc and seen: at least win each, zeroed. Returns the matches, or -1
 * when out of memory. */
long long exhaustive_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc,
                             uint8_t *seen, int take, int nsl, int pos);

/* winprune.c: windows that skip their low-bound lists (see there) */
/* A term's look-ups at ascending documents: a filled Parts (pa, at position i), else a copy of
 * its cursor on its own scratch. */
typedef struct {
    Cursor c;
    const Parts *pa;
    Py_ssize_t i;
} Probe;

typedef struct {
    int on;
    int *order;    /* the terms by upper bound ascending */
    uint8_t *skip; /* per term: skipped (the first nskip of order) */
    int nskip;
    double B;      /* the skipped terms' bounds summed (in that order) */
    double share, slack;
    Probe *pr;       /* per term */
    int32_t *scratch; /* the probes' (CURSOR_SCRATCH int32 each) */
    uint64_t *theta; /* shared by the slices: the best k-th score of their full heaps (bits of
                      * a double >= 0, which order as the doubles do), or NULL */
} WinPrune;

/* Set up wp for q's windows (theta: shared by the query's slices, or NULL): 1, or 0 when q may
 * not skip (q->prune unset, a bound unknown, prune_share 0), -1 out of memory (wp is off). */
int winprune_open(WinPrune *wp, const Query *q, uint64_t *theta);
void winprune_close(WinPrune *wp);
/* Before the window: term t's run r is there (a probe of a filled Parts starts from it). */
void winprune_hint(WinPrune *wp, int t, const Run *r);
/* Whether wp may skip already: a k-th best is known (a heap carried in full from earlier
 * segments, or another slice's). */
int winprune_known(const WinPrune *wp, const Query *q);
/* After a window: q's k-th best, when its heap is full, raises the slices' shared one. */
void winprune_publish(WinPrune *wp, const Query *q);
/* Grow the skipped terms for q's k-th best (its heap, when full): whether any is skipped. */
int winprune_plan(WinPrune *wp, const Query *q);
/* The window's documents that may enter (acc: the unskipped terms' sums), scored in full into
 * the pool; acc cleared. Returns how many were scored, -1 when the postings are broken. */
long long winprune_take(WinPrune *wp, Query *q, Pool *pool, double *acc, int32_t w0,
                        Py_ssize_t len);

/* split.c */
/* How many slices a windowed traversal of q's postings takes (1: not split). */
int split_count(const Query *q);
/* The windowed traversal in nsl slices on threads: the matches, -1 (out of memory), or -2 when
 * not split (the caller then runs it in one). */
long long split_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc, uint8_t *seen,
                        int take, int nsl, int pos);

/* workers.c */
/* Run fn(args[i]) for i < n (n <= 64): args[0] on this thread, the others on parked worker
 * threads (or here, after args[0], when no worker can be had); return when all are done. Called
 * without the GIL. */
void workers_run(void (*fn)(void *), void *const *args, int n);

#endif
