/* The exhaustive traversal window by window (exhaustive.c decides; split.c splits the windows
 * across threads): a segment larger than a window, with postings for a quarter of it or more,
 * has every term added over its first window of documents, then over the next... so that the
 * sums and marks stay in a core's cache. Each document still receives its terms in query order
 * from 0.0: the same sums, bit for bit. Called without the GIL. */
#include "exhaustive.h"

#ifndef _WIN32
#include <unistd.h>
#endif

/* Documents per window, as a power of two: 32 K sums (256 KB) and marks stay in a core's L2
 * cache, where adding straight into the segment's array (8 MB at 1 M documents) missed it at
 * almost every posting. 64 K (512 KB) where the L2 cache holds 2 MB or more (windows_init).
 * Settable (window_shift()) so that tests can take the windowed path on small collections. */
static int win_shift = 15;

/* A slice that may skip lists (winprune.c) starts with a window this many times shorter: the
 * k-th best of its documents lets the second window skip. */
#define FIRST_WINDOW_PART 8

/* ... and only when it has this many windows at least: on 100 k passages (a window of 64 K a
 * slice, 2 slices) skipping made long queries slower (764 against 815 a second, first pass;
 * 1,047 against 1,292 warm), where on 1 M (8 windows a slice) it made them faster. */
#define PRUNE_WINDOWS 4

/* Take the window for this processor's L2 cache, once, when the module loads. On a 2 MB L2
 * (an Intel Xeon VM) 64 K documents a window gave 1 M passages' long queries 5 % more per
 * second than 32 K (177 against 168, 5 interleaved runs; 128 K: slower), in half as many
 * windows to set every term up for. Below 2 MB, or where the size is unknown (no sysconf name
 * for it), 32 K: the size measured before, not raised without a measurement there. */
void
windows_init(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 >= (2L << 20)) {
        __atomic_store_n(&win_shift, 16, __ATOMIC_RELAXED);
    }
#endif
}

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

Py_ssize_t
first_at_least(const int32_t *a, Py_ssize_t n, int32_t lo)
{
    Py_ssize_t i = 0, z = n;
    while (i < z) {
        Py_ssize_t mid = i + (z - i) / 2;
        if (a[mid] < lo) {
            i = mid + 1;
        }
        else {
            z = mid;
        }
    }
    return i;
}

/* The first block of c whose last docno is lo or beyond (0 for lo 0, whatever its last docno:
 * every block is checked as it is decoded; split_windows checks the last docnos ascend). */
Py_ssize_t
first_block(const Cursor *c, int32_t lo)
{
    return lo > 0 ? first_at_least(c->blk_last, c->nblk, lo) : 0;
}

/* Start a term's run at its first posting with docno lo or beyond: a filled Parts whole, else
 * nothing yet (blocks decoded as needed, from the first whose last docno is lo or beyond).
 * claimed < 0: the run claims the Parts itself and publishes it; else the Parts was claimed
 * (1) or not (0) by the caller, and this run fills blocks [its first, fill_end) of it. */
void
run_start(Cursor *c, Run *r, int32_t lo, int claimed, Py_ssize_t fill_end)
{
    Parts *pa = c->parts;
    memset(r, 0, sizeof(*r));
    c->oi = 0;
    if (pa && parts_ready(pa)) {
        r->docs = pa->docs;
        r->pa = pa;
        r->i = first_at_least(pa->docs, pa->n, lo);
        r->m = pa->n;
        r->b = c->nblk;
        return;
    }
    r->b = first_block(c, lo);
    r->lo = lo;
    r->fill_end = c->nblk;
    if (claimed < 0) {
        r->fill = pa && parts_take(pa, c);
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
    r->pa = NULL; /* (a shared fill stops at its last block: the next ones are looked up) */
    if (r->fill) { /* the block's codes into the Parts, then read from there */
        Parts *pa = c->parts;
        if (block_codes_w(c, pa, c->bd, tfs, r->m, r->p0) < 0) {
            run_end(c, r, 0);
            return 0;
        }
        memcpy(pa->docs + r->p0, c->bd, sizeof(int32_t) * (size_t)r->m);
        r->docs = pa->docs + r->p0;
        r->pa = pa;
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

/* The first position in (i, e) whose docno is w1 or beyond, for docs[i] < w1 <= docs[e - 1]
 * (docnos ascending strictly: at most w1 - docs[i] positions come before it). Guessed from the
 * run's density, then found by galloping from the guess and a binary search between the last
 * two probes: a few reads near the answer, which the add loop reads next anyway (a binary search
 * over a long list's window, a window after another, missed the cache at nearly every step: a
 * tenth of a long query on 1 M passages). */
static Py_ssize_t
window_end(const int32_t *docs, Py_ssize_t i, Py_ssize_t e, int32_t w1)
{
    Py_ssize_t lo = i + 1, hi = e - 1; /* the answer is in [lo, hi] */
    if (hi - i > (Py_ssize_t)(w1 - docs[i])) {
        hi = i + (w1 - docs[i]);
    }
    double span = (double)docs[e - 1] - (double)docs[i];
    Py_ssize_t g = i + (Py_ssize_t)((double)(w1 - docs[i]) / span * (double)(e - 1 - i));
    g = g < lo ? lo : g > hi ? hi : g;
    Py_ssize_t step = 1;
    if (docs[g] < w1) { /* the answer is beyond g: gallop up */
        lo = g + 1;
        while (lo < hi && docs[lo + step - 1 < hi ? lo + step - 1 : hi] < w1) {
            lo = (lo + step - 1 < hi ? lo + step - 1 : hi) + 1;
            step <<= 1;
        }
        hi = lo + step - 1 < hi ? lo + step - 1 : hi;
    }
    else { /* g or before: gallop down */
        hi = g;
        while (lo < hi && docs[hi - step > lo ? hi - step : lo] >= w1) {
            hi = hi - step > lo ? hi - step : lo;
            step <<= 1;
        }
        lo = hi - step > lo ? hi - step : lo;
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
    return lo;
}

/* Add the term's postings with docnos in [w0, w1) into the window's sums and marks (index
 * d - w0), in list order; tp is scratch for one block's tf parts. Docnos ascend strictly (each
 * block was checked as it was decoded), and every one below w0 went in with an earlier window,
 * so every index is inside the window. */
static void
run_window(Cursor *c, Run *r, Sums *s, int32_t w1, double *tp)
{
    for (;;) {
        if (r->i >= r->m && !run_next(c, r)) {
            return;
        }
        const int32_t *docs = r->docs;
        Py_ssize_t i = r->i, e = r->m;
        if (docs[e - 1] >= w1) {
            if (docs[i] >= w1) {
                return;
            }
            e = window_end(docs, i, e, w1);
        }
        double qw = c->qw;
        if (r->pa) {
            sums_add_codes(s, r->pa, r->p0 + i, docs + i, e - i, qw);
            r->i = e;
            if (e < r->m) {
                return;
            }
            continue;
        }
        int bad = c->dli_w == 1   ? block_parts(c, docs + i, r->tfs + i, e - i, r->p0 + i, tp, 1)
                  : c->dli_w == 2 ? block_parts(c, docs + i, r->tfs + i, e - i, r->p0 + i, tp, 2)
                                  : block_parts(c, docs + i, r->tfs + i, e - i, r->p0 + i, tp, 4);
        if (bad < 0) {
            run_end(c, r, 0);
            r->i = r->m = 0;
            r->b = c->nblk;
            return;
        }
        sums_add_values(s, docs + i, tp, e - i, qw);
        r->i = e;
        if (e < r->m) {
            return;
        }
    }
}

/* Move the term's run past docnos below w1 without adding them (a window that skips the term:
 * winprune.c). A run filling the term's Parts still decodes its blocks into it (the next search
 * reads them from there); any other jumps over whole blocks, undecoded. */
static void
run_skip(Cursor *c, Run *r, int32_t w1)
{
    for (;;) {
        if (r->i < r->m) {
            const int32_t *docs = r->docs;
            if (docs[r->m - 1] >= w1) {
                if (docs[r->i] < w1) {
                    r->i = window_end(docs, r->i, r->m, w1);
                }
                return;
            }
            r->i = r->m; /* (the rest of the block is below w1) */
        }
        if (!r->fill) {
            break;
        }
        if (!run_next(c, r)) {
            return;
        }
    }
    r->lo = w1 > r->lo ? w1 : r->lo; /* (the next block decoded passes its postings below w1) */
    if (r->b < c->nblk && c->blk_last[r->b] < w1) {
        r->b += first_at_least(c->blk_last + r->b, c->nblk - r->b, w1);
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

/* The slice's windows, all the terms over the first `win` documents, in query order, then over
 * the next... Each document still receives its terms in query order, from 0.0: the same sums,
 * bit for bit. Its matching, allowed, live documents go into the slice's heap (with take: an
 * array of candidates first, as in take_best). */
void
slice_run(Slice *sl)
{
    Query *q = sl->q;
    double tp[BLK_MAX];
    Pool pool;
    sl->matches = -1;
    int pos = sl->pos; /* (no marks: see sums.c) */
    double *scratch = pos ? malloc(sizeof(double) * (size_t)take_scratch(sl->win)) : NULL;
    if ((pos && !scratch) || pool_open(q, &pool, sl->take) < 0) {
        free(scratch);
        for (int t = 0; t < q->n; t++) {
            run_end(&q->cs[t], &sl->runs[t], 0);
        }
        return;
    }
    WinPrune wp = {0}; /* (out of memory for its probes: every window adds every term) */
    if (pos && !sl->take && q->prune && sl->hi - sl->lo >= PRUNE_WINDOWS * sl->win) {
        winprune_open(&wp, q, sl->theta);
    }
    long long matches = 0;
    Sums s = {sl->acc, sl->seen, NULL, 0, 0, pos ? SUMS_POS : SUMS_SEEN};
    /* (skipping with no k-th best known yet: a short first window, whose k-th best lets the
     * next ones skip sooner) */
    Py_ssize_t len = wp.on && !winprune_known(&wp, q) ? sl->win / FIRST_WINDOW_PART : sl->win;
    for (Py_ssize_t w0 = sl->lo; w0 < sl->hi && !q->broken; w0 += len, len = sl->win) {
        len = sl->hi - w0 < len ? sl->hi - w0 : len;
        int32_t w1 = (int32_t)(w0 + len);
        int skips = wp.on && winprune_plan(&wp, q);
        s.w0 = (int32_t)w0;
        for (int t = 0; t < q->n && !q->broken; t++) {
            if (skips) {
                winprune_hint(&wp, t, &sl->runs[t]);
            }
            if (skips && wp.skip[t]) {
                run_skip(&q->cs[t], &sl->runs[t], w1);
            }
            else {
                run_window(&q->cs[t], &sl->runs[t], &s, w1, tp);
            }
        }
        if (q->broken) {
            break;
        }
        if (skips) {
            if (winprune_take(&wp, q, &pool, sl->acc, (int32_t)w0, len) < 0) {
                q->broken = 1;
            }
        }
        else if (pos) {
            matches += take_positive(q, &pool, sl->acc, (int32_t)w0, len, scratch);
            memset(sl->acc, 0, sizeof(double) * (size_t)len);
        }
        else {
            matches += take_window(q, &pool, sl->acc, sl->seen, (int32_t)w0, len);
        }
        if (wp.on) {
            winprune_publish(&wp, q);
        }
    }
    free(scratch);
    winprune_close(&wp);
    for (int t = 0; t < q->n; t++) {
        run_end(&q->cs[t], &sl->runs[t], 0); /* a fill still open (the search broke) is dropped */
    }
    if (pool_close(q, &pool, !q->broken) < 0) { /* (broken: the caller raises) */
        return;
    }
    sl->matches = matches;
}

/* The exhaustive traversal window by window (the dense case of a segment larger than a window),
 * in one slice or in several on threads (split_windows). acc and seen: at least
 * win each, zeroed. Returns the matches, or -1 when out of memory. */
long long
exhaustive_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc, uint8_t *seen,
                   int take, int nsl, int pos)
{
    if (nsl > 1) {
        long long m = split_windows(q, ndocs, win, acc, seen, take, nsl, pos);
        if (m != -2) {
            return m;
        }
    }
    Slice sl = {q, {0}, {0}, NULL, 0, ndocs, win, acc, seen, take, pos, 0};
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

Py_ssize_t
exhaustive_window(const Query *q, Py_ssize_t ndocs)
{
    Py_ssize_t win = (Py_ssize_t)1 << __atomic_load_n(&win_shift, __ATOMIC_RELAXED);
    return is_dense(q, ndocs) && ndocs > win ? win : 0;
}

