/* Windows that skip their low-bound lists: the windowed traversal (windows.c) of a positive
 * query that wants no match count, in a slice of 4 windows or more (PRUNE_WINDOWS), once a k-th
 * best score theta is known.
 *
 * A long query on a large collection (50-200 terms on 1 M passages: 6-9 postings a document)
 * reaches a theta far above what its most frequent terms can add. Measured with numpy over 10
 * queries of the 1 M long mix, window by window with the k-th best of the windows before it:
 * the terms whose upper bounds sum to a fifth of theta held ~50 % of the postings, and ~0.02 %
 * of the documents had enough from the other terms to still reach theta (at 0.35 of theta:
 * ~60 % and ~0.1 %; at 0.8: ~75 % and 10-23 %). So, per window:
 *
 * - theta: the larger of the slice's k-th best (its heap full) and the best the other slices of
 *   the query have published (each has k documents at least that good).
 * - Skipped: the longest run of terms, by upper bound ascending, whose bounds sum (B) to at most
 *   share * theta (prune_share, 1/5). Their runs jump past the window, whole blocks undecoded
 *   (a run filling the term's Parts still decodes into it, for the next search); the others are
 *   added into the window's sums as before. theta only rises, so a term skipped once stays
 *   skipped.
 * - A document whose sum of the other terms, plus B, falls short of theta by more than the
 *   rounding slack cannot enter. One that may: the skipped terms' contributions are looked up
 *   (probes: cursor copies that only move forward, or the term's filled Parts), largest bound
 *   first, while the rest of their bounds may still lift it to theta; if it may still enter, its
 *   score is computed again from 0.0 with every term in query order, the same additions as an
 *   unskipped window makes: the score it enters with is bit for bit the dense float64 one. The
 *   slack (as search() takes it) covers sums in another order. Only documents provably below
 *   theta are dropped: ties are kept, and the heap orders them by docno as always.
 * - A slice with no k-th best known yet (none carried in from the earlier segments) starts
 *   with a short window (FIRST_WINDOW_PART), so that the second can skip.
 *
 * Documents that match only skipped terms are never seen, so the match count is not kept: the
 * caller asks for this (exhaustive_query(prune=True)) only when it does not want the count. */
#include "exhaustive.h"

/* The share of theta the skipped terms' bounds may sum to (0: no skipping). Settable
 * (window_prune()) for tests and measurement. */
static double prune_share = 0.2;

/* Since the module loaded: windows that skipped, terms they skipped, documents scored again. */
static long long n_windows, n_skipped, n_rescored;

PyObject *
topk_window_prune_counts(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(args))
{
    return Py_BuildValue("(LLL)", __atomic_load_n(&n_windows, __ATOMIC_RELAXED),
                         __atomic_load_n(&n_skipped, __ATOMIC_RELAXED),
                         __atomic_load_n(&n_rescored, __ATOMIC_RELAXED));
}

PyObject *
topk_window_prune(PyObject *Py_UNUSED(module), PyObject *args)
{
    double share = -1.0;
    if (!PyArg_ParseTuple(args, "|d", &share)) {
        return NULL;
    }
    double old;
    __atomic_load(&prune_share, &old, __ATOMIC_RELAXED);
    if (share != -1.0) {
        if (!(share >= 0.0 && share < 1.0)) {
            PyErr_SetString(PyExc_ValueError, "window_prune takes a share in [0, 1)");
            return NULL;
        }
        __atomic_store(&prune_share, &share, __ATOMIC_RELAXED);
    }
    return PyFloat_FromDouble(old);
}

/* Term t's contribution to document d (0.0: no posting there), looked up by its probe; the
 * probes move forward only (a slice's documents ascend). NaN: the postings are broken. */
static double
probe_at(WinPrune *wp, const Query *q, int t, int32_t d)
{
    Probe *p = &wp->pr[t];
    const Cursor *qc = &q->cs[t];
    if (p->pa) { /* a filled Parts: its docnos and codes */
        const Parts *pa = p->pa;
        const int32_t *docs = pa->docs;
        Py_ssize_t i = p->i, n = pa->n, step = 1;
        while (i < n && docs[i] < d) { /* gallop, then search the last step (docs[z - 1] >= d) */
            Py_ssize_t z = i + step < n ? i + step : n;
            if (docs[z - 1] >= d) {
                i += first_at_least(docs + i, z - 1 - i, d);
                break;
            }
            i = z;
            step <<= 1;
        }
        p->i = i;
        if (i >= n || docs[i] != d) {
            return 0.0;
        }
        uint32_t code = pa->cw == 2 ? ((const uint16_t *)pa->codes)[i]
                                    : ((const uint32_t *)pa->codes)[i];
        if (code != PARTS_ESC) {
            return qc->qw * pa->Tc[code];
        }
        Py_ssize_t a = parts_first_overflow(pa, i);
        if (a >= pa->novf || pa->ovf_pos[a] != i) {
            return NAN;
        }
        return qc->qw * pa->ovf[a];
    }
    Cursor *c = &p->c;
    next_geq(c, d);
    if (*c->broken) {
        return NAN;
    }
    if (c->cur != d) {
        return 0.0;
    }
    double v = contrib(c);
    return *c->broken ? NAN : v;
}

/* The score a document must reach to enter the top k: the largest of the slice's k-th best
 * (its heap full) and the other slices' (each has k documents at least that good, and a
 * document is dropped only when provably below it: ties are kept). 0.0: none known yet. */
static double
theta_of(const WinPrune *wp, const Heap *h)
{
    double own = heap_kth(h), shared = 0.0;
    if (wp->theta) {
        uint64_t bits = __atomic_load_n(wp->theta, __ATOMIC_RELAXED);
        memcpy(&shared, &bits, sizeof(shared));
    }
    return shared > own ? shared : own;
}

int
winprune_known(const WinPrune *wp, const Query *q)
{
    return wp->on && theta_of(wp, q->h) > 0.0;
}

void
winprune_publish(WinPrune *wp, const Query *q)
{
    double kth = heap_kth(q->h);
    if (!wp->theta || !(kth > 0.0)) {
        return;
    }
    uint64_t bits, old = __atomic_load_n(wp->theta, __ATOMIC_RELAXED);
    memcpy(&bits, &kth, sizeof(bits));
    while (bits > old && !__atomic_compare_exchange_n(wp->theta, &old, bits, 1, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED)) {
    }
}

int
winprune_open(WinPrune *wp, const Query *q, uint64_t *theta)
{
    memset(wp, 0, sizeof(*wp));
    wp->theta = theta;
    double share;
    __atomic_load(&prune_share, &share, __ATOMIC_RELAXED);
    if (!q->prune || q->n < 2 || !(share > 0.0)) {
        return 0;
    }
    double total = 0.0;
    for (int t = 0; t < q->n; t++) {
        double ub = q->cs[t].ub;
        if (!(ub >= 0.0) || !isfinite(ub)) { /* (unknown: NaN) */
            return 0;
        }
        total += ub;
    }
    wp->share = share;
    wp->slack = 16.0 * (double)(q->n + 2) * DBL_EPSILON * total + DBL_MIN;
    wp->order = malloc(sizeof(int) * (size_t)q->n);
    wp->skip = calloc((size_t)q->n, 1);
    wp->pr = malloc(sizeof(Probe) * (size_t)q->n);
    wp->scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH * (size_t)q->n);
    if (!wp->order || !wp->skip || !wp->pr || !wp->scratch) {
        winprune_close(wp);
        return -1;
    }
    for (int t = 0; t < q->n; t++) { /* by bound ascending (insertion: a few hundred terms) */
        int u = t;
        while (u > 0 && q->cs[wp->order[u - 1]].ub > q->cs[t].ub) {
            wp->order[u] = wp->order[u - 1];
            u--;
        }
        wp->order[u] = t;
        Probe *p = &wp->pr[t];
        const Cursor *c = &q->cs[t];
        p->pa = c->parts && parts_ready(c->parts) ? c->parts : NULL;
        p->i = 0;
        p->c = *c;
        p->c.bd = wp->scratch + (Py_ssize_t)CURSOR_SCRATCH * t;
        p->c.bt = p->c.bd + BLK_MAX;
        p->c.dblk = p->c.tblk = -1;
        p->c.pos = 0;
        p->c.cur = -1;
        p->c.blk = 0;
        p->c.oi = 0;
    }
    wp->on = 1;
    return 1;
}

void
winprune_close(WinPrune *wp)
{
    free(wp->order);
    free(wp->skip);
    free(wp->pr);
    free(wp->scratch);
    memset(wp, 0, sizeof(*wp));
}

void
winprune_hint(WinPrune *wp, int t, const Run *r)
{
    Probe *p = &wp->pr[t];
    if (p->pa && r->pa == p->pa && r->docs == p->pa->docs && r->i > p->i) {
        p->i = r->i;
    }
}

int
winprune_plan(WinPrune *wp, const Query *q)
{
    double theta = wp->on ? theta_of(wp, q->h) : 0.0, budget = wp->share * theta;
    if (!(theta - budget > wp->slack)) { /* (unknown, or so small that the slack would let a
                                          * document matching no unskipped term through) */
        return wp->nskip > 0;
    }
    while (wp->nskip < q->n) {
        int t = wp->order[wp->nskip];
        double b = wp->B + q->cs[t].ub;
        if (b > budget) {
            break;
        }
        wp->B = b;
        wp->skip[t] = 1;
        wp->nskip++;
    }
    return wp->nskip > 0;
}

/* Sums scanned a chunk at a time: the largest of SCAN (a loop the compiler vectorises). */
enum { SCAN = 64 };

static inline double
chunk_top(const double *a)
{
    double m0 = a[0], m1 = a[1], m2 = a[2], m3 = a[3];
    for (int j = 4; j < SCAN; j += 4) {
        m0 = a[j] > m0 ? a[j] : m0;
        m1 = a[j + 1] > m1 ? a[j + 1] : m1;
        m2 = a[j + 2] > m2 ? a[j + 2] : m2;
        m3 = a[j + 3] > m3 ? a[j + 3] : m3;
    }
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

long long
winprune_take(WinPrune *wp, Query *q, Pool *pool, double *acc, int32_t w0, Py_ssize_t len)
{
    const Heap *h = q->h;
    double slack = wp->slack, B = wp->B;
    double theta = theta_of(wp, h); /* (> 0: plan skips only then) */
    long long scored = 0;
    double floor = theta - B - slack; /* (> 0: see winprune_plan; a sum below it cannot enter,
                                       * and 0.0, no unskipped term, is below it) */
    for (Py_ssize_t x = 0; x < len; x++) {
        if ((x & (SCAN - 1)) == 0 && x + SCAN <= len && chunk_top(acc + x) < floor) {
            x += SCAN - 1; /* (a chunk where no sum reaches the floor: most of them) */
            continue;
        }
        double a = acc[x];
        if (!(a >= floor) || a + B + slack < theta) {
            continue;
        }
        int32_t d = w0 + (int32_t)x;
        if ((q->allow && !q->allow[d]) || (q->deny && q->deny[d])) {
            continue;
        }
        /* The skipped terms' contributions, largest bound first, while the rest of their
         * bounds may still lift the sum to theta (the slack covers B's rounding less each). */
        double s = a, rest = B;
        for (int e = wp->nskip - 1; e >= 0 && s + rest + slack >= theta; e--) {
            int t = wp->order[e];
            s += probe_at(wp, q, t, d);
            rest -= q->cs[t].ub;
        }
        if (s != s) {
            return -1;
        }
        if (s + (rest > 0.0 ? rest : 0.0) + slack < theta) {
            continue;
        }
        s = 0.0; /* the score as every unskipped window sums it: query order, from 0.0 */
        for (int t = 0; t < q->n; t++) {
            double v = probe_at(wp, q, t, d);
            if (v != 0.0) {
                s += v;
            }
        }
        if (s != s) {
            return -1;
        }
        scored++;
        pool_put(q, pool, s, (int64_t)d + q->base);
        theta = theta_of(wp, h);
        floor = theta - B - slack;
    }
    memset(acc, 0, sizeof(double) * (size_t)len);
    __atomic_fetch_add(&n_windows, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&n_skipped, wp->nskip, __ATOMIC_RELAXED);
    __atomic_fetch_add(&n_rescored, scored, __ATOMIC_RELAXED);
    return scored;
}
