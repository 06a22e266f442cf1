/* The exhaustive traversal of one segment: every posting of every term added into a score array.
 *
 * When a query's postings cover much of a small segment, or k is deep, there is little for the
 * pruning traversal (maxscore.c) to skip and deciding what to skip costs more than adding. This
 * one decodes each term's blocks in turn, in query order, and adds qw * T[dl_index[d]][tf] (or
 * the overflow value) to acc[d], starting from 0.0: numpy's `scores[docnos] += qw * tf_part`
 * term after term, bit for bit. Every matching, allowed, live document then goes through the
 * same heap as the pruning traversal (score descending, docno ascending), and the match count
 * comes free. With `rows`, a second pass over the postings fills each hit's per-term tf and tf
 * part (explanations); evaluation runs skip it.
 *
 * A term may come with a Parts (parts.c): its docnos and tf parts decoded by an earlier search,
 * read instead of the blocks (or filled by this one). Called without the GIL. */
#include "topk.h"

#ifndef _WIN32
#include <pthread.h>
#include <unistd.h>
#endif

/* The tf part of the posting at list position p with a tf above the table's cap: the term's
 * overflow value, or NaN (the cursor is then broken). */
static double
overflow_part(Cursor *c, Py_ssize_t p, int32_t tf)
{
    while (c->oi < c->novf && c->ovf_pos[c->oi] < p) {
        c->oi++;
    }
    if (UNLIKELY(tf < 1 || c->oi >= c->novf || c->ovf_pos[c->oi] != p)) {
        cur_broken(c);
        return NAN;
    }
    return c->ovf_val[c->oi];
}

/* The tf part of the posting at position p (j within its block) of cursor c with tf `tf`, or a
 * NaN (the cursor is then broken). */
static inline double
tf_part_at(Cursor *c, Py_ssize_t p, int32_t d, int32_t tf)
{
    if (LIKELY((uint32_t)(tf - 1) < (uint32_t)c->cap)) {
        int32_t j = dli_at(c->dli, c->dli_w, d);
        if (UNLIKELY(j < 0 || (Py_ssize_t)j >= c->rows)) {
            cur_broken(c);
            return NAN;
        }
        return c->T[(Py_ssize_t)j * c->stride + tf * c->tstride];
    }
    return overflow_part(c, p, tf);
}

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

/* acc[d] += qw * tp for the m postings of a block, marking the documents seen. Sparse: a
 * document seen for the first time is appended to touched, without a branch (the slot is
 * written whatever it is, and kept only when new: in bounds, as the sparse path is taken only
 * when the query has fewer postings than a quarter of the documents, so the slot written is below
 * that). Dense (touched NULL): seen only, scanned at the end. */
static inline void
block_add(double *restrict acc, uint8_t *restrict seen, int32_t *restrict touched, Py_ssize_t *nt,
          const int32_t *docs, const double *tp, Py_ssize_t m, double qw)
{
    if (touched) {
        Py_ssize_t n = *nt;
        for (Py_ssize_t i = 0; i < m; i++) {
            int32_t d = docs[i];
            acc[d] += qw * tp[i];
            touched[n] = d;
            n += !seen[d];
            seen[d] = 1;
        }
        *nt = n;
    }
    else {
        for (Py_ssize_t i = 0; i < m; i++) {
            int32_t d = docs[i];
            acc[d] += qw * tp[i];
            seen[d] = 1;
        }
    }
}

/* Add every posting of c into acc (see block_add for seen and touched). Each block is checked as
 * it is decoded (blk_docs: docnos ascending, ending at the block's last docno, below n_docs). A
 * filled Parts is read instead of the blocks; an empty one is filled on the way (parts.c). */
static void
add_term(Cursor *c, double *acc, uint8_t *seen, int32_t *touched, Py_ssize_t *nt, double *tp)
{
    Parts *pa = c->parts;
    if (pa && parts_ready(pa)) {
        block_add(acc, seen, touched, nt, pa->docs, pa->tp, pa->n, c->qw);
        return;
    }
    int fill = pa && parts_claim(pa);
    c->oi = 0;
    for (Py_ssize_t b = 0; b < c->nblk && !*c->broken; b++) {
        const int32_t *tfs = load_block(c, b);
        if (!tfs) {
            break;
        }
        Py_ssize_t m = blk_count(c, b), p0 = b << c->shift;
        const int32_t *docs = c->bd;
        double *out = fill ? pa->tp + p0 : tp;
        int r = c->dli_w == 1   ? block_parts(c, docs, tfs, m, p0, out, 1)
                : c->dli_w == 2 ? block_parts(c, docs, tfs, m, p0, out, 2)
                                : block_parts(c, docs, tfs, m, p0, out, 4);
        if (r < 0) {
            break;
        }
        if (fill) {
            memcpy(pa->docs + p0, docs, sizeof(int32_t) * (size_t)m);
        }
        block_add(acc, seen, touched, nt, docs, out, m, c->qw);
    }
    if (fill) {
        parts_publish(pa, !*c->broken);
    }
}

/* Fill the rows (tf, tf part per column) of the hits that are this segment's documents. */
static void
fill_rows(Query *q, Py_ssize_t ndocs, Py_ssize_t *slot_of)
{
    Heap *h = q->h;
    for (Py_ssize_t e = 0; e < h->size; e++) {
        int64_t d = h->d[e] - q->base;
        if (d >= 0 && d < ndocs) {
            slot_of[d] = h->slot[e];
            memset(q->rows_tf + h->slot[e] * q->ncols, 0, sizeof(int32_t) * q->ncols);
            memset(q->rows_tp + h->slot[e] * q->ncols, 0, sizeof(double) * q->ncols);
        }
    }
    for (int t = 0; t < q->n && !q->broken; t++) {
        Cursor *c = &q->cs[t];
        c->oi = 0;
        for (Py_ssize_t b = 0; b < c->nblk && !q->broken; b++) {
            const int32_t *tfs = load_block(c, b);
            if (!tfs) {
                return;
            }
            Py_ssize_t m = blk_count(c, b), p0 = b << c->shift;
            for (Py_ssize_t i = 0; i < m; i++) {
                int32_t d = c->bd[i];
                Py_ssize_t sl = slot_of[d];
                if (sl >= 0) {
                    double tp = tf_part_at(c, p0 + i, d, tfs[i]);
                    q->rows_tf[sl * q->ncols + q->cols[t]] = tfs[i];
                    q->rows_tp[sl * q->ncols + q->cols[t]] = tp;
                }
            }
        }
    }
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
static int
keep_best(Heap *h, Entry *c, Py_ssize_t n)
{
    Py_ssize_t m = n < h->cap ? n : h->cap;
    if (best_first(c, n, m) < 0) {
        return -1;
    }
    for (Py_ssize_t e = 0; e < m; e++) {
        h->s[e] = c[e].s;
        h->d[e] = c[e].d;
        h->slot[e] = e;
    }
    h->size = m;
    return 0;
}

/* Without rows, a deep k: the candidates (and the heap's previous entries) in one array, the k
 * best selected (select.c) and put back as the heap's entries (keep_best). Returns -1 when out
 * of memory. */
static int
take_best(Query *q, const int32_t *touched, Py_ssize_t nt, const double *acc)
{
    Heap *h = q->h;
    Py_ssize_t n = 0;
    Entry *c = malloc(sizeof(Entry) * (size_t)(nt + h->size + 1));
    if (!c) {
        return -1;
    }
    for (Py_ssize_t e = 0; e < h->size; e++) {
        c[n].s = h->s[e];
        c[n++].d = h->d[e];
    }
    for (Py_ssize_t i = 0; i < nt; i++) {
        int32_t d = touched[i];
        if (!((q->allow && !q->allow[d]) || (q->deny && q->deny[d]))) {
            c[n].s = acc[d];
            c[n++].d = (int64_t)d + q->base;
        }
    }
    int r = keep_best(h, c, n);
    free(c);
    return r;
}

/* -- the windowed traversal ------------------------------------------------------------------ */

/* Documents per window, as a power of two: 32 K sums (256 KB) and marks stay in a core's L2
 * cache, where adding straight into the segment's array (8 MB at 1 M documents) missed it at
 * almost every posting. Settable (window_shift()) so that tests can take the windowed path on
 * small collections. */
static int win_shift = 15;

PyObject *
topk_window_shift(PyObject *Py_UNUSED(module), PyObject *args)
{
    int shift = -1;
    if (!PyArg_ParseTuple(args, "|i", &shift)) {
        return NULL;
    }
    int old = __atomic_load_n(&win_shift, __ATOMIC_RELAXED);
    if (shift != -1) {
        if (shift < 4 || shift > 30) {
            PyErr_SetString(PyExc_ValueError, "window_shift must be in 4..30");
            return NULL;
        }
        __atomic_store_n(&win_shift, shift, __ATOMIC_RELAXED);
    }
    return PyLong_FromLong(old);
}

/* One term's postings not yet added: a run of docnos (a decoded block, or a filled Parts) with
 * their tfs (tf parts still to look up) or their tf parts. */
typedef struct {
    const int32_t *docs, *tfs;
    const double *tp;
    Py_ssize_t i, m, p0; /* next posting of the run, the run's end, list position of docs[0] */
    Py_ssize_t b;        /* next block to decode */
    int fill;            /* filling the cursor's Parts (claimed, not yet published) */
    Py_ssize_t fill_end; /* blocks from here on are not this run's to fill */
    int32_t lo;          /* the run's first docno (a slice's first block may start before it) */
    int shared;          /* the fill is one slice's (see Slice): the caller publishes it */
    int filled;          /* shared: this run's blocks went in whole */
} Run;

/* The first block of c whose last docno is lo or beyond (0 for lo 0, whatever its last docno:
 * every block is checked as it is decoded; split_windows checks the last docnos ascend). */
static Py_ssize_t
first_block(const Cursor *c, int32_t lo)
{
    Py_ssize_t a = 0, z = lo > 0 ? c->nblk : 0;
    while (a < z) {
        Py_ssize_t mid = a + (z - a) / 2;
        if (c->blk_last[mid] < lo) {
            a = mid + 1;
        }
        else {
            z = mid;
        }
    }
    return a;
}

/* Start a term's run at its first posting with docno lo or beyond: a filled Parts whole, else
 * nothing yet (blocks decoded as needed, from the first whose last docno is lo or beyond).
 * claimed < 0: the run claims the Parts itself and publishes it; else the Parts was claimed
 * (1) or not (0) by the caller, and this run fills blocks [its first, fill_end) of it. */
static void
run_start(Cursor *c, Run *r, int32_t lo, int claimed, Py_ssize_t fill_end)
{
    Parts *pa = c->parts;
    memset(r, 0, sizeof(*r));
    c->oi = 0;
    if (pa && parts_ready(pa)) {
        Py_ssize_t a = 0, z = pa->n;
        while (a < z) {
            Py_ssize_t mid = a + (z - a) / 2;
            if (pa->docs[mid] < lo) {
                a = mid + 1;
            }
            else {
                z = mid;
            }
        }
        r->docs = pa->docs;
        r->tp = pa->tp;
        r->i = a;
        r->m = pa->n;
        r->b = c->nblk;
        return;
    }
    r->b = first_block(c, lo);
    r->lo = lo;
    r->fill_end = c->nblk;
    if (claimed < 0) {
        r->fill = pa && parts_claim(pa);
        return;
    }
    r->shared = 1;
    r->fill_end = fill_end;
    r->fill = claimed && r->b < fill_end;
    r->filled = claimed && r->b >= fill_end;
}

/* End a fill that is still open: published when the whole list went in, else emptied (shared:
 * said in `filled`). */
static void
run_end(Cursor *c, Run *r, int ok)
{
    if (r->fill) {
        if (r->shared) {
            r->filled = ok && !*c->broken;
        }
        else {
            parts_publish(c->parts, ok && !*c->broken);
        }
        r->fill = 0;
    }
}

/* Decode the term's next block into its run (its tf parts too, into the Parts being filled).
 * Returns 0 at the end of the list or when the postings are broken. */
static int
run_next(Cursor *c, Run *r)
{
    if (r->fill && r->b >= r->fill_end) {
        run_end(c, r, 1);
    }
    if (r->b >= c->nblk || *c->broken) {
        run_end(c, r, 0);
        return 0;
    }
    Py_ssize_t b = r->b++;
    const int32_t *tfs = load_block(c, b);
    if (!tfs) {
        run_end(c, r, 0);
        return 0;
    }
    r->i = 0;
    r->m = blk_count(c, b);
    r->p0 = b << c->shift;
    r->docs = c->bd;
    r->tfs = tfs;
    r->tp = NULL; /* (a shared fill stops at its last block: the next ones are looked up) */
    if (r->fill) {
        Parts *pa = c->parts;
        double *out = pa->tp + r->p0;
        int bad = c->dli_w == 1   ? block_parts(c, c->bd, tfs, r->m, r->p0, out, 1)
                  : c->dli_w == 2 ? block_parts(c, c->bd, tfs, r->m, r->p0, out, 2)
                                  : block_parts(c, c->bd, tfs, r->m, r->p0, out, 4);
        if (bad < 0) {
            run_end(c, r, 0);
            return 0;
        }
        memcpy(pa->docs + r->p0, c->bd, sizeof(int32_t) * (size_t)r->m);
        r->docs = pa->docs + r->p0;
        r->tp = out;
        r->tfs = NULL;
    }
    while (r->i < r->m && r->docs[r->i] < r->lo) { /* a slice's first block: the slice before's */
        r->i++;
    }
    if (UNLIKELY(r->i == r->m)) { /* (its last docno is lo or beyond: checked as decoded) */
        cur_broken(c);
        run_end(c, r, 0);
        return 0;
    }
    return 1;
}

/* Add the term's postings with docnos in [w0, w1) into the window's sums and marks (index
 * d - w0), in list order; tp is scratch for one block's tf parts. Docnos ascend strictly (each
 * block was checked as it was decoded), and every one below w0 went in with an earlier window,
 * so every index is inside the window. */
static void
run_window(Cursor *c, Run *r, double *restrict acc, uint8_t *restrict seen, int32_t w0,
           int32_t w1, double *tp)
{
    for (;;) {
        if (r->i >= r->m && !run_next(c, r)) {
            return;
        }
        const int32_t *docs = r->docs;
        Py_ssize_t i = r->i, e = r->m;
        if (docs[e - 1] >= w1) {
            /* the first position in [i, e) at w1 or beyond: at most w1 - docs[i] come before */
            Py_ssize_t lo = i, hi = e - 1;
            if (docs[i] >= w1) {
                return;
            }
            if (hi - i > (Py_ssize_t)(w1 - docs[i])) {
                hi = i + (w1 - docs[i]);
            }
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (docs[mid] < w1) {
                    lo = mid + 1;
                }
                else {
                    hi = mid;
                }
            }
            e = lo;
        }
        const double *parts = r->tp ? r->tp + i : tp;
        if (r->tfs) {
            int bad = c->dli_w == 1 ? block_parts(c, docs + i, r->tfs + i, e - i, r->p0 + i, tp, 1)
                      : c->dli_w == 2
                          ? block_parts(c, docs + i, r->tfs + i, e - i, r->p0 + i, tp, 2)
                          : block_parts(c, docs + i, r->tfs + i, e - i, r->p0 + i, tp, 4);
            if (bad < 0) {
                run_end(c, r, 0);
                r->i = r->m = 0;
                r->b = c->nblk;
                return;
            }
        }
        double qw = c->qw;
        for (Py_ssize_t j = i; j < e; j++) {
            Py_ssize_t x = docs[j] - w0;
            acc[x] += qw * parts[j - i];
            seen[x] = 1;
        }
        r->i = e;
        if (e < r->m) {
            return;
        }
    }
}

/* Where a window's matches go: the heap, or (deep k without rows) an array the k best are
 * selected from at the end, as in take_best. When the array fills (16 k candidates) its k best
 * are selected and kept, and the k-th of them becomes a bar that later candidates must pass to
 * enter at all: a long query's 80 k candidates on 100 k passages mostly stop at one comparison
 * (a heap took every one that beat its root, each in log k steps). */
typedef struct {
    Entry *c;
    Py_ssize_t n, max; /* the heap's entries are copied in first */
    int barred;        /* bar: the k-th best so far (after the array first filled) */
    Entry bar;
} Pool;

/* Out of memory selecting: every candidate kept goes into the heap (emptied first: the array
 * holds its entries too), which takes the rest. */
static void
pool_pour(Query *q, Pool *p)
{
    q->h->size = 0;
    for (Py_ssize_t e = 0; e < p->n; e++) {
        if (enters(q->h, p->c[e].s, p->c[e].d)) {
            heap_push(q->h, p->c[e].s, p->c[e].d);
        }
    }
    free(p->c);
    p->c = NULL;
}

static void
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

/* The window's matching, allowed, live documents into the pool, and the window cleared.
 * Returns the number of them. */
static long long
take_window(Query *q, Pool *p, double *acc, uint8_t *seen, int32_t w0, Py_ssize_t len)
{
    long long matches = 0;
    for (Py_ssize_t x = 0; x < len; x++) {
        if (!seen[x]) {
            continue;
        }
        int32_t d = w0 + (int32_t)x;
        if ((q->allow && !q->allow[d]) || (q->deny && q->deny[d])) {
            continue;
        }
        matches++;
        pool_put(q, p, acc[x], (int64_t)d + q->base);
    }
    memset(acc, 0, sizeof(double) * (size_t)len);
    memset(seen, 0, (size_t)len);
    return matches;
}

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

/* The slice's windows, all the terms over the first `win` documents, in query order, then over
 * the next... Each document still receives its terms in query order, from 0.0: the same sums,
 * bit for bit. Its matching, allowed, live documents go into the slice's heap (with take: an
 * array of candidates first, as in take_best). */
static void
slice_run(Slice *sl)
{
    Query *q = sl->q;
    Heap *h = q->h;
    double tp[BLK_MAX];
    Pool pool = {NULL, 0, 0, 0, {0.0, 0, 0}};
    sl->matches = -1;
    if (sl->take) {
        pool.max = 16 * h->cap + h->size;
        pool.c = malloc(sizeof(Entry) * (size_t)pool.max);
        if (!pool.c) {
            for (int t = 0; t < q->n; t++) {
                run_end(&q->cs[t], &sl->runs[t], 0);
            }
            return;
        }
    }
    for (Py_ssize_t e = 0; sl->take && e < h->size; e++) {
        pool.c[pool.n].s = h->s[e];
        pool.c[pool.n++].d = h->d[e];
    }
    long long matches = 0;
    for (Py_ssize_t w0 = sl->lo; w0 < sl->hi && !q->broken; w0 += sl->win) {
        Py_ssize_t len = sl->hi - w0 < sl->win ? sl->hi - w0 : sl->win;
        for (int t = 0; t < q->n && !q->broken; t++) {
            run_window(&q->cs[t], &sl->runs[t], sl->acc, sl->seen, (int32_t)w0,
                       (int32_t)(w0 + len), tp);
        }
        if (!q->broken) {
            matches += take_window(q, &pool, sl->acc, sl->seen, (int32_t)w0, len);
        }
    }
    for (int t = 0; t < q->n; t++) {
        run_end(&q->cs[t], &sl->runs[t], 0); /* a fill still open (the search broke) is dropped */
    }
    if (pool.c) {
        int r = q->broken ? 0 : keep_best(h, pool.c, pool.n);
        free(pool.c);
        if (r < 0) {
            return;
        }
    }
    sl->matches = matches;
}

/* -- a windowed traversal split across threads ------------------------------------------- */

/* Threads a large windowed traversal may use (0: as many as the machine has processors, at most
 * 4) and the postings each must have at least: a thread costs tens of microseconds to start,
 * a posting a few nanoseconds to add. Settable (exhaustive_threads()). */
static int ex_threads = 0;
static long long ex_min_postings = (long long)1 << 18;

PyObject *
topk_exhaustive_threads(PyObject *Py_UNUSED(module), PyObject *args)
{
    int threads = -1;
    long long minp = -1;
    if (!PyArg_ParseTuple(args, "|iL", &threads, &minp)) {
        return NULL;
    }
    if (threads < -1 || threads > 64 || minp < -1) {
        PyErr_SetString(PyExc_ValueError,
                         "exhaustive_threads takes 0..64 threads and a count of postings >= 0");
        return NULL;
    }
    int old = __atomic_load_n(&ex_threads, __ATOMIC_RELAXED);
    long long oldp = __atomic_load_n(&ex_min_postings, __ATOMIC_RELAXED);
    if (threads != -1) {
        __atomic_store_n(&ex_threads, threads, __ATOMIC_RELAXED);
    }
    if (minp != -1) {
        __atomic_store_n(&ex_min_postings, minp, __ATOMIC_RELAXED);
    }
    return Py_BuildValue("(iL)", old, oldp);
}

/* How many slices a windowed traversal of q's postings takes (1: not split). */
static int
split_count(const Query *q)
{
#ifdef _WIN32
    (void)q;
    return 1;
#else
    int n = __atomic_load_n(&ex_threads, __ATOMIC_RELAXED);
    long long minp = __atomic_load_n(&ex_min_postings, __ATOMIC_RELAXED);
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus;
    }
    long long by_work = minp > 0 ? q->total_postings / minp : n;
    return by_work < n ? (by_work < 1 ? 1 : (int)by_work) : n;
#endif
}

/* Whether the last docnos of every term read from its blocks ascend strictly from 0, below
 * ndocs: a slice starts at the block its first window needs (first_block), and the slice
 * before it decodes every block up to that one, each checked as it is decoded. */
static int
blocks_ascend(const Query *q, Py_ssize_t ndocs)
{
    for (int t = 0; t < q->n; t++) {
        const Cursor *c = &q->cs[t];
        if (c->parts && parts_ready(c->parts)) {
            continue;
        }
        int32_t prev = -1;
        for (Py_ssize_t b = 0; b < c->nblk; b++) {
            if (c->blk_last[b] <= prev) {
                return 0;
            }
            prev = c->blk_last[b];
        }
        if (prev >= ndocs) {
            return 0;
        }
    }
    return 1;
}

#ifndef _WIN32
static void *
slice_thread(void *arg)
{
    slice_run((Slice *)arg);
    return NULL;
}
#endif

/* Set up slice s of nsl (s > 0) as a copy of q: cursors with their own scratch, a heap, sums
 * and marks. Returns -1 when out of memory (what was allocated is in sl, for slice_free). */
static int
slice_init(Slice *sl, Query *q, Py_ssize_t win, int take, int32_t *scratch)
{
    sl->own = *q;
    sl->q = &sl->own;
    sl->own.broken = 0;
    sl->own.h = &sl->heap;
    sl->heap.cap = q->h->cap;
    sl->heap.size = 0;
    sl->heap.s = malloc(sizeof(double) * (size_t)q->h->cap);
    sl->heap.d = malloc(sizeof(int64_t) * (size_t)q->h->cap);
    sl->heap.slot = malloc(sizeof(Py_ssize_t) * (size_t)q->h->cap);
    sl->own.cs = malloc(sizeof(Cursor) * (size_t)q->n);
    sl->acc = calloc((size_t)win, sizeof(double));
    sl->seen = calloc((size_t)win, 1);
    sl->win = win;
    sl->take = take;
    if (!sl->heap.s || !sl->heap.d || !sl->heap.slot || !sl->own.cs || !sl->acc || !sl->seen) {
        return -1;
    }
    for (int t = 0; t < q->n; t++) {
        Cursor *c = &sl->own.cs[t];
        *c = q->cs[t];
        c->broken = &sl->own.broken;
        c->bd = scratch + (Py_ssize_t)CURSOR_SCRATCH * t;
        c->bt = c->bd + BLK_MAX;
        c->dblk = c->tblk = -1;
    }
    return 0;
}

static void
slice_free(Slice *sl)
{
    free(sl->heap.s);
    free(sl->heap.d);
    free(sl->heap.slot);
    free(sl->own.cs);
    free(sl->acc);
    free(sl->seen);
}

/* The slices' top k into q->h: with take (q->h then holds its k best, best first) selected from
 * all of them, else pushed into q->h. Returns -1 when out of memory. */
static int
slices_merge(Query *q, Slice *sls, int nsl, int take)
{
    Heap *h = q->h;
    if (!take) {
        for (int s = 1; s < nsl; s++) {
            for (Py_ssize_t e = 0; e < sls[s].heap.size; e++) {
                if (enters(h, sls[s].heap.s[e], sls[s].heap.d[e])) {
                    heap_push(h, sls[s].heap.s[e], sls[s].heap.d[e]);
                }
            }
        }
        return 0;
    }
    Py_ssize_t n = 0;
    for (int s = 0; s < nsl; s++) {
        n += sls[s].q->h->size;
    }
    Entry *c = malloc(sizeof(Entry) * (size_t)(n + 1));
    if (!c) {
        return -1;
    }
    n = 0;
    for (int s = 0; s < nsl; s++) {
        const Heap *g = sls[s].q->h;
        for (Py_ssize_t e = 0; e < g->size; e++) {
            c[n].s = g->s[e];
            c[n++].d = g->d[e];
        }
    }
    int r = keep_best(h, c, n);
    free(c);
    return r;
}

/* The windowed traversal in nsl slices of equal documents, the first on this thread, the others
 * on threads of their own (run here, after it, when a thread cannot start). Each slice decodes
 * the blocks its windows need: a Parts to fill is claimed here, each slice fills the blocks
 * from its first up to the next slice's first, and it is published when every slice did.
 * The slices' top k are merged exactly (score descending, docno ascending). Returns the
 * matches, -1 when out of memory, -2 when not split (a single window, or block last docnos
 * that do not ascend: the one-slice traversal finds the damage). */
static long long
split_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc, uint8_t *seen, int take,
              int nsl)
{
    Py_ssize_t nw = (ndocs + win - 1) / win;
    if (nsl > nw) {
        nsl = (int)nw;
    }
    if (nsl < 2 || !blocks_ascend(q, ndocs)) {
        return -2;
    }
    int n = q->n ? q->n : 1;
    Slice *sls = calloc((size_t)nsl, sizeof(Slice));
    int *claimed = calloc((size_t)n, sizeof(int));
    Run *runs = malloc(sizeof(Run) * (size_t)n * (size_t)nsl);
    int32_t *scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH * (size_t)n * (size_t)(nsl - 1));
    long long matches = -1;
    int ok = sls && claimed && runs && scratch;
    for (int s = 0; ok && s < nsl; s++) {
        Slice *sl = &sls[s];
        if (s == 0) {
            *sl = (Slice){q, {0}, {0}, NULL, 0, 0, win, acc, seen, take, 0};
        }
        else if (slice_init(sl, q, win, take, scratch + (Py_ssize_t)CURSOR_SCRATCH * n * (s - 1)) <
                 0) {
            ok = 0;
        }
        sl->runs = runs + (Py_ssize_t)n * s;
        sl->lo = ndocs * s / nsl; /* (a slice's last window may be short, as a segment's is) */
        sl->hi = ndocs * (s + 1) / nsl;
    }
    if (!ok) {
        goto done;
    }
    for (int t = 0; t < q->n; t++) {
        Cursor *c = &q->cs[t];
        claimed[t] = c->parts && !parts_ready(c->parts) && parts_claim(c->parts);
        for (int s = 0; s < nsl; s++) {
            Py_ssize_t end = s + 1 < nsl ? first_block(c, (int32_t)sls[s + 1].lo) : c->nblk;
            run_start(&sls[s].q->cs[t], &sls[s].runs[t], (int32_t)sls[s].lo, claimed[t], end);
        }
    }
#ifndef _WIN32
    pthread_t tid[64];
    int started[64] = {0};
    for (int s = 1; s < nsl; s++) {
        started[s] = pthread_create(&tid[s], NULL, slice_thread, &sls[s]) == 0;
    }
    slice_run(&sls[0]);
    for (int s = 1; s < nsl; s++) {
        if (started[s]) {
            pthread_join(tid[s], NULL);
        }
        else {
            slice_run(&sls[s]);
        }
    }
#else
    for (int s = 0; s < nsl; s++) {
        slice_run(&sls[s]);
    }
#endif
    matches = 0;
    for (int s = 0; s < nsl; s++) {
        q->broken |= sls[s].q->broken;
        matches = matches < 0 || sls[s].matches < 0 ? -1 : matches + sls[s].matches;
    }
    for (int t = 0; t < q->n; t++) {
        if (claimed[t]) {
            int filled = !q->broken && matches >= 0;
            for (int s = 0; s < nsl; s++) {
                filled &= sls[s].runs[t].filled;
            }
            parts_publish(q->cs[t].parts, filled);
        }
    }
    if (matches >= 0 && !q->broken && slices_merge(q, sls, nsl, take) < 0) {
        matches = -1;
    }
done:
    for (int s = 1; sls && s < nsl; s++) {
        slice_free(&sls[s]);
    }
    free(sls);
    free(claimed);
    free(runs);
    free(scratch);
    return matches;
}

/* The exhaustive traversal window by window (the dense case of a segment larger than a window),
 * in one slice or in several on threads (split_windows). acc and seen: at least
 * win each, zeroed. Returns the matches, or -1 when out of memory. */
static long long
exhaustive_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc, uint8_t *seen,
                   int take, int nsl)
{
    if (nsl > 1) {
        long long m = split_windows(q, ndocs, win, acc, seen, take, nsl);
        if (m != -2) {
            return m;
        }
    }
    Slice sl = {q, {0}, {0}, NULL, 0, ndocs, win, acc, seen, take, 0};
    sl.runs = malloc(sizeof(Run) * (size_t)(q->n ? q->n : 1));
    if (!sl.runs) {
        return -1;
    }
    for (int t = 0; t < q->n; t++) {
        run_start(&q->cs[t], &sl.runs[t], 0, -1, 0);
    }
    slice_run(&sl);
    free(sl.runs);
    return sl.matches;
}

/* Dense: postings for a quarter of the documents or more. Marking only, then one sequential
 * pass over `seen` lists the matches in docno order (a matching document may score exactly
 * 0.0: `seen`, not the score, says it matched). */
static inline int
is_dense(const Query *q, Py_ssize_t ndocs)
{
    return q->total_postings >= ndocs / 4;
}

Py_ssize_t
exhaustive_window(const Query *q, Py_ssize_t ndocs)
{
    Py_ssize_t win = (Py_ssize_t)1 << __atomic_load_n(&win_shift, __ATOMIC_RELAXED);
    return is_dense(q, ndocs) && ndocs > win ? win : 0;
}

/* Zero the sums and marks of the documents touched (all of them when dense), leaving acc and
 * seen as exhaustive() found them: a batch (batch.c) reuses them query after query. */
static void
clear_sums(double *acc, uint8_t *seen, const int32_t *touched, Py_ssize_t nt, Py_ssize_t ndocs,
           int dense)
{
    if (dense) {
        memset(acc, 0, sizeof(double) * (size_t)ndocs);
        memset(seen, 0, (size_t)ndocs);
        return;
    }
    for (Py_ssize_t i = 0; i < nt; i++) {
        acc[touched[i]] = 0.0;
        seen[touched[i]] = 0;
    }
}

long long
exhaustive(Query *q, Py_ssize_t ndocs, Py_ssize_t win, int rows, double *acc, uint8_t *seen,
           int32_t *touched, Py_ssize_t *slot_of, int split)
{
    Py_ssize_t nt = 0;
    double tp[BLK_MAX];
    int dense = is_dense(q, ndocs);
    if (win) {
        int nsl = split && !rows ? split_count(q) : 1;
        long long m = exhaustive_windows(q, ndocs, win, acc, seen, !rows && q->h->cap > 64, nsl);
        if (m >= 0 && rows && q->ncols && !q->broken) {
            for (Py_ssize_t d = 0; d < ndocs; d++) {
                slot_of[d] = -1;
            }
            fill_rows(q, ndocs, slot_of);
        }
        return m;
    }
    for (int t = 0; t < q->n && !q->broken; t++) {
        add_term(&q->cs[t], acc, seen, dense ? NULL : touched, &nt, tp);
    }
    if (q->broken) {
        return 0;
    }
    if (dense) {
        for (Py_ssize_t d = 0; d < ndocs; d++) {
            touched[nt] = (int32_t)d;
            nt += seen[d];
        }
    }
    long long matches = 0;
    Heap *h = q->h;
    /* Without rows, a deep k and few candidates per place in it: select the k best from an
     * array of them (linear). With many per place the heap: the candidates come in an order
     * unrelated to their scores, so after the first k few enter (about k ln(n / k)) and the
     * inline test rejects the rest, where the array would cost 24 bytes a candidate (2 MB for
     * the 80 k of a long query on 100 k passages: the heap was 10-15 % faster there at k = 1000;
     * the array was faster on SciFact's ~4 k candidates at k = 1000). */
    if (!rows && h->cap > 64 && nt < 16 * h->cap) {
        for (Py_ssize_t i = 0; i < nt; i++) {
            int32_t d = touched[i];
            matches += !((q->allow && !q->allow[d]) || (q->deny && q->deny[d]));
        }
        int got = take_best(q, touched, nt, acc);
        clear_sums(acc, seen, touched, nt, ndocs, dense);
        return got < 0 ? -1 : matches;
    }
    for (Py_ssize_t i = 0; i < nt; i++) {
        int32_t d = touched[i];
        if ((q->allow && !q->allow[d]) || (q->deny && q->deny[d])) {
            continue;
        }
        matches++;
        int64_t g = (int64_t)d + q->base;
        if (enters(h, acc[d], g)) {
            heap_push(h, acc[d], g);
        }
    }
    clear_sums(acc, seen, touched, nt, ndocs, dense);
    if (rows && q->ncols) {
        for (Py_ssize_t d = 0; d < ndocs; d++) {
            slot_of[d] = -1;
        }
        fill_rows(q, ndocs, slot_of);
    }
    return matches;
}
