/* The exhaustive traversal's two inner steps (exhaustive.c: a segment whole; windows.c: window by
 * window): adding a run of postings into the sums, and taking the matching documents of a range of
 * sums into the top k.
 *
 * Adding. A run is a Parts' docnos and codes (the place of each tf part in the table by column),
 * read in one loop: the double added is the one the decoding looked up, so acc[d] += qw * t is
 * the same sum, bit for bit, as when it was decoded from the blocks. How a document is marked as
 * matched depends on the query (Sums.mode):
 *   - SUMS_SEEN: seen[d] = 1 beside the sum (any weights);
 *   - SUMS_POS: nothing: every contribution of the query is > 0 (each weight is positive and
 *     its product with a bound below its term's tf parts is > 0, see query_positive), so a sum
 *     is > 0 exactly when its document matched (a sum of positive doubles rounds to a positive
 *     double) and seen is never written;
 *   - SUMS_TOUCH / SUMS_TOUCH_POS: sparse (few postings for the documents): the same, and a
 *     document met for the first time (seen[d] == 0, or acc[d] == 0.0) is listed in touched.
 *
 * Taking (positive queries, take_positive): the sums of a range are cut into chunks, and one pass
 * finds each chunk's largest eligible (allowed, live) sum and counts the matches. The k chunks of
 * largest maxima hold k documents scoring at least the k-th largest maximum, so no document
 * scoring below it can be among the k best: only the chunks whose maximum reaches it (and the
 * current k-th best of the top k) are read again, document by document, and only documents
 * reaching it are offered to the top k. The same documents enter, in the same order of docnos, as
 * when every document was offered (the k best are exact, ties by docno included): SciFact's ~4 k
 * matching documents of a query at k = 11 cost ~200 offers, not 4 k. */
#include "exhaustive.h"

/* The body of the add loop of a Parts run: CW the code width, MODE a SUMS_* (constants at each
 * instance, so that each loop keeps only what it needs). An overflow posting's code (PARTS_ESC)
 * reads the table's +0.0 and adds qw * 0.0 in the loop, which leaves its sum as it was (a sum is
 * never -0.0: it starts at +0.0, and x + -x is +0.0), and its value after the loop, still before
 * the next term's: the same sum again, with no test in the loop. */
static inline __attribute__((always_inline)) void
add_codes_t(Sums *s, const Parts *p, Py_ssize_t p0, const int32_t *docs, Py_ssize_t m, double qw,
            const int CW, const int MODE, const int WIN)
{
    const double *Tc = p->Tc;
    const uint16_t *c16 = (const uint16_t *)p->codes + p0;
    const uint32_t *c32 = (const uint32_t *)p->codes + p0;
    double *restrict acc = s->acc;
    uint8_t *restrict seen = s->seen;
    int32_t *restrict touched = s->touched;
    Py_ssize_t nt = s->nt;
    const int32_t w0 = s->w0;
    const uintptr_t accw = (uintptr_t)acc - (uintptr_t)w0 * sizeof(double);
#pragma GCC unroll 4
    for (Py_ssize_t j = 0; j < m; j++) {
        uint32_t code = CW == 2 ? c16[j] : c32[j];
        uint32_t x = (uint32_t)(WIN ? docs[j] - w0 : docs[j]); /* (in the window: >= 0) */
        if (MODE == SUMS_TOUCH_POS) {          /* (a new document's slot: see exhaustive()) */
            touched[nt] = (int32_t)x;
            nt += acc[x] == 0.0;
        }
        else if (MODE == SUMS_TOUCH) {
            touched[nt] = (int32_t)x;
            nt += !seen[x];
        }
        if (WIN && MODE == SUMS_POS) {
            /* acc[docs[j] - w0] as one address from a base kept in a register: no subtraction
             * and no address arithmetic per posting (the loop of long queries on large
             * collections). The base is an integer: it may point before acc. */
            *(double *)(accw + (uintptr_t)(uint32_t)docs[j] * sizeof(double)) += qw * Tc[code];
        }
        else {
            acc[x] += qw * Tc[code];
        }
        if (MODE == SUMS_SEEN || MODE == SUMS_TOUCH) {
            seen[x] = 1;
        }
    }
    s->nt = nt;
    if (UNLIKELY(p->novf)) {
        for (Py_ssize_t a = parts_first_overflow(p, p0); a < p->novf && p->ovf_pos[a] < p0 + m;
             a++) {
            acc[docs[p->ovf_pos[a] - p0] - w0] += qw * p->ovf[a];
        }
    }
}

/* One instance per (code width, mode, window from docno 0 or not), out of line: each loop keeps
 * every pointer in a register (inlined into its callers, it reloaded some from the stack at every
 * posting). */
#define ADD_CODES(name, CW, MODE, WIN)                                                         \
    static __attribute__((noinline)) void name(Sums *s, const Parts *p, Py_ssize_t p0,         \
                                               const int32_t *docs, Py_ssize_t m, double qw)   \
    {                                                                                          \
        add_codes_t(s, p, p0, docs, m, qw, CW, MODE, WIN);                                     \
    }
ADD_CODES(add16_seen, 2, SUMS_SEEN, 0)
ADD_CODES(add16_pos, 2, SUMS_POS, 0)
ADD_CODES(add16_touch, 2, SUMS_TOUCH, 0)
ADD_CODES(add16_touch_pos, 2, SUMS_TOUCH_POS, 0)
ADD_CODES(add16_seen_w, 2, SUMS_SEEN, 1)
ADD_CODES(add16_pos_w, 2, SUMS_POS, 1)
ADD_CODES(add32_seen, 4, SUMS_SEEN, 0)
ADD_CODES(add32_pos, 4, SUMS_POS, 0)
ADD_CODES(add32_touch, 4, SUMS_TOUCH, 0)
ADD_CODES(add32_touch_pos, 4, SUMS_TOUCH_POS, 0)
ADD_CODES(add32_seen_w, 4, SUMS_SEEN, 1)
ADD_CODES(add32_pos_w, 4, SUMS_POS, 1)

void
sums_add_codes(Sums *s, const Parts *p, Py_ssize_t p0, const int32_t *docs, Py_ssize_t m,
               double qw)
{
    typedef void (*add_fn)(Sums *, const Parts *, Py_ssize_t, const int32_t *, Py_ssize_t, double);
    /* [code width][window from a docno above 0][mode]: the _TOUCH modes take whole segments */
    static const add_fn fns[2][2][4] = {
        {{add16_seen, add16_pos, add16_touch, add16_touch_pos},
         {add16_seen_w, add16_pos_w, add16_touch, add16_touch_pos}},
        {{add32_seen, add32_pos, add32_touch, add32_touch_pos},
         {add32_seen_w, add32_pos_w, add32_touch, add32_touch_pos}},
    };
    fns[p->cw == 2 ? 0 : 1][s->w0 != 0][s->mode](s, p, p0, docs, m, qw);
}

/* The body of the add loop of a decoded block's tf parts (MODE a SUMS_*, a constant). */
static inline __attribute__((always_inline)) void
add_values_t(Sums *s, const int32_t *docs, const double *tp, Py_ssize_t m, double qw,
             const int MODE)
{
    double *restrict acc = s->acc;
    uint8_t *restrict seen = s->seen;
    int32_t *restrict touched = s->touched;
    Py_ssize_t nt = s->nt;
    const int32_t w0 = s->w0;
    for (Py_ssize_t i = 0; i < m; i++) {
        uint32_t x = (uint32_t)(docs[i] - w0); /* (in the window: >= 0) */
        if (MODE == SUMS_TOUCH_POS) {
            touched[nt] = (int32_t)x;
            nt += acc[x] == 0.0;
        }
        else if (MODE == SUMS_TOUCH) {
            touched[nt] = (int32_t)x;
            nt += !seen[x];
        }
        acc[x] += qw * tp[i];
        if (MODE == SUMS_SEEN || MODE == SUMS_TOUCH) {
            seen[x] = 1;
        }
    }
    s->nt = nt;
}

void
sums_add_values(Sums *s, const int32_t *docs, const double *tp, Py_ssize_t m, double qw)
{
    switch (s->mode) {
    case SUMS_SEEN:
        add_values_t(s, docs, tp, m, qw, SUMS_SEEN);
        break;
    case SUMS_POS:
        add_values_t(s, docs, tp, m, qw, SUMS_POS);
        break;
    case SUMS_TOUCH:
        add_values_t(s, docs, tp, m, qw, SUMS_TOUCH);
        break;
    default:
        add_values_t(s, docs, tp, m, qw, SUMS_TOUCH_POS);
    }
}

/* -- the top k ----------------------------------------------------------------------------- */

int
pool_open(Query *q, Pool *p, int take)
{
    Heap *h = q->h;
    memset(p, 0, sizeof(*p));
    if (!take) {
        return 0;
    }
    p->max = 16 * h->cap + h->size;
    p->c = malloc(sizeof(Entry) * (size_t)p->max);
    if (!p->c) {
        return -1;
    }
    for (Py_ssize_t e = 0; e < h->size; e++) {
        p->c[p->n].s = h->s[e];
        p->c[p->n++].d = h->d[e];
    }
    return 0;
}

void
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

int
pool_close(Query *q, Pool *p, int ok)
{
    int r = 0;
    if (p->c) {
        r = ok ? keep_best(q->h, p->c, p->n) : 0;
        free(p->c);
        p->c = NULL;
    }
    return r;
}

/* The score the k-th best so far has (nothing scoring less can enter), or -inf when not known. */
static inline double
pool_floor(const Query *q, const Pool *p)
{
    if (p->c) {
        return p->barred ? p->bar.s : -INFINITY;
    }
    return heap_kth(q->h);
}

/* A bar at most the k-th largest of the n positive doubles a[0..n) (1 <= k <= n), and close to
 * it: their bits order them as their values do, so a histogram of 6 to 11 bits (fewer for few
 * values) from the highest bit in which they differ finds the bucket holding the k-th largest;
 * the smallest double of that bucket has at least k of them at or above it. One pass without
 * branches over the values (a quickselect's comparisons mispredicted half the time: a third of a
 * k = 1000 search). */
static double
bar_below_kth(const double *a, Py_ssize_t n, Py_ssize_t k)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &a[i], sizeof(b));
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
    }
    uint64_t x = lo ^ hi;
    if (!x) {
        return a[0]; /* all equal */
    }
    int bits = 11; /* (fewer for few values: fewer buckets to clear and walk) */
    while (bits > 6 && ((Py_ssize_t)1 << (bits - 2)) > n) {
        bits--;
    }
    int top = 63 - __builtin_clzll(x), shift = top >= bits - 1 ? top - (bits - 1) : 0;
    uint32_t count[2048];
    memset(count, 0, sizeof(uint32_t) << bits);
    uint64_t base = lo >> shift;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &a[i], sizeof(b));
        count[(b >> shift) - base]++;
    }
    Py_ssize_t got = 0;
    int bucket = (int)((hi >> shift) - base); /* (none above the largest) */
    while (bucket > 0 && (got += count[bucket]) < k) {
        bucket--;
    }
    uint64_t key = (base + (uint64_t)bucket) << shift;
    double bar;
    memcpy(&bar, &key, sizeof(bar));
    return bar;
}

/* log2 of the chunk size for a range of len sums and a top k: several chunks per place in it
 * (so that the k-th largest maximum is a tight bar), 8 to 64 documents. */
static int
chunk_shift(Py_ssize_t len, Py_ssize_t k)
{
    int sh = 3;
    while (sh < 6 && (len >> (sh + 1)) >= 8 * k) {
        sh++;
    }
    return sh;
}

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The largest eligible sum of acc[lo..hi) (0.0 when none is positive) and how many are > 0. */
static inline double
chunk_max(const double *acc, const uint8_t *allow, const uint8_t *deny, Py_ssize_t lo,
          Py_ssize_t hi, long long *cnt)
{
    double m = 0.0;
    long long n = 0;
    Py_ssize_t i = lo;
    if (!allow && !deny) {
#if defined(__SSE2__)
        /* two lanes at a time (every x86-64 has SSE2): maxpd is `a > b ? a : b`, the scalar
         * loop's own rule, on finite sums */
        static const uint8_t bits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
        const __m128d zero = _mm_setzero_pd();
        __m128d m0 = zero, m1 = zero;
        for (; i + 4 <= hi; i += 4) {
            __m128d a = _mm_loadu_pd(acc + i), b = _mm_loadu_pd(acc + i + 2);
            m0 = _mm_max_pd(a, m0);
            m1 = _mm_max_pd(b, m1);
            n += bits[_mm_movemask_pd(_mm_cmpgt_pd(a, zero)) |
                      (_mm_movemask_pd(_mm_cmpgt_pd(b, zero)) << 2)];
        }
        m0 = _mm_max_pd(m0, m1);
        double pair[2];
        _mm_storeu_pd(pair, m0);
        m = pair[0] > pair[1] ? pair[0] : pair[1];
#endif
        for (; i < hi; i++) {
            m = acc[i] > m ? acc[i] : m;
            n += acc[i] > 0.0;
        }
    }
    else {
        for (; i < hi; i++) {
            int ok = !(allow && !allow[i]) && !(deny && deny[i]);
            double a = ok ? acc[i] : 0.0;
            m = a > m ? a : m;
            n += a > 0.0;
        }
    }
    *cnt += n;
    return m;
}

/* The bits, from lo, of the sums of acc[lo..hi) (at most 64) that reach t. */
static inline uint64_t
reaching(const double *acc, Py_ssize_t lo, Py_ssize_t hi, double t)
{
    uint64_t got = 0;
    Py_ssize_t z = lo;
#if defined(__SSE2__)
    const __m128d bar = _mm_set1_pd(t);
    for (; z + 4 <= hi; z += 4) {
        __m128d a = _mm_loadu_pd(acc + z), b = _mm_loadu_pd(acc + z + 2);
        got |= (uint64_t)(_mm_movemask_pd(_mm_cmpge_pd(a, bar)) |
                          (_mm_movemask_pd(_mm_cmpge_pd(b, bar)) << 2))
               << (z - lo);
    }
#endif
    for (; z < hi; z++) {
        got |= (uint64_t)(acc[z] >= t) << (z - lo);
    }
    return got;
}

long long
take_positive(Query *q, Pool *p, const double *acc, int32_t w0, Py_ssize_t len, double *scratch)
{
    const uint8_t *allow = q->allow ? q->allow + w0 : NULL;
    const uint8_t *deny = q->deny ? q->deny + w0 : NULL;
    Py_ssize_t k = q->h->cap;
    int sh = chunk_shift(len, k);
    Py_ssize_t C = (Py_ssize_t)1 << sh, nch = (len + C - 1) >> sh, nonzero = 0;
    double *mx = scratch, *sel = scratch + nch;
    long long matches = 0;
    double lb = p->lb;
    for (Py_ssize_t c = 0; c < nch; c++) {
        Py_ssize_t lo = c << sh, hi = lo + C < len ? lo + C : len;
        double m = chunk_max(acc, allow, deny, lo, hi, &matches);
        mx[c] = m;
        sel[nonzero] = m;
        nonzero += m > 0.0 && m >= lb; /* (below the bar already: raises nothing) */
    }
    /* Nothing below the k-th largest chunk maximum (k chunks hold a document reaching it), nor
     * below the k-th best so far (of earlier windows and segments), can enter. */
    if (k > 0 && nonzero >= k) {
        double bar = bar_below_kth(sel, nonzero, k);
        p->lb = bar > lb ? bar : lb;
    }
    double f = pool_floor(q, p), t = p->lb > f ? p->lb : f;
    for (Py_ssize_t c = 0; c < nch; c++) {
        if (!(mx[c] > 0.0) || mx[c] < t) {
            continue;
        }
        Py_ssize_t lo = c << sh, hi = lo + C < len ? lo + C : len;
        /* the chunk's sums reaching the bar (a few), in docno order */
        for (uint64_t got = reaching(acc, lo, hi, t); got; got &= got - 1) {
            Py_ssize_t i = lo + __builtin_ctzll(got);
            double v = acc[i];
            if (v < t || !(v > 0.0) || (allow && !allow[i]) || (deny && deny[i])) {
                continue; /* (t may have risen meanwhile) */
            }
            pool_put(q, p, v, (int64_t)w0 + i + q->base);
            f = pool_floor(q, p);
            t = f > t ? f : t;
        }
    }
    return matches;
}

Py_ssize_t
take_scratch(Py_ssize_t len)
{
    return 2 * ((len >> 3) + 1);
}

/* -- the spare sums: kept from one exhaustive_query() to the next ----------------------------- */

/* A few spares: a query split across threads takes one per slice (split.c), and concurrent
 * searches one each. A slice's sums taken fresh from calloc were read, then written, page by
 * page: each write replaced the zero page (copy on write) and flushed the other core's TLB, a
 * fifth of the CPU of a 100 k-document query's first pass. */
#define SPARE_SHEETS 8
static Sheet *spare_sheets[SPARE_SHEETS];

/* A sheet kept only up to this many bytes (1 M documents without windows: 13 MB), and only in
 * the first place when above SHEET_SMALL (a window's: 288 KB): at most one large spare, as
 * before there were several. */
#define SHEET_KEEP ((Py_ssize_t)32 << 20)
#define SHEET_SMALL ((Py_ssize_t)1 << 20)

static void
sheet_free(Sheet *w)
{
    if (w) {
        free(w->acc);
        free(w->seen);
        free(w->touched);
        free(w);
    }
}

/* Sums and marks of nacc documents (zeroed) and a list of ntouch: the spare one when it is large
 * enough, else new. NULL when out of memory. */
Sheet *
sheet_take(Py_ssize_t nacc, Py_ssize_t ntouch)
{
    for (int i = 0; i < SPARE_SHEETS; i++) {
        Sheet *w = __atomic_exchange_n(&spare_sheets[i], NULL, __ATOMIC_ACQ_REL);
        if (w && w->nacc >= nacc && w->ntouch >= ntouch) {
            return w;
        }
        if (w) { /* too small for this call: left for another (freed if its place was taken) */
            Sheet *none = NULL;
            if (!__atomic_compare_exchange_n(&spare_sheets[i], &none, w, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE)) {
                sheet_free(w);
            }
        }
    }
    Sheet *w = calloc(1, sizeof(Sheet));
    if (!w) {
        return NULL;
    }
    w->nacc = nacc;
    w->ntouch = ntouch;
    size_t n1 = (size_t)(nacc ? nacc : 1);
    w->acc = malloc(sizeof(double) * n1);
    w->seen = malloc(n1);
    w->touched = malloc(sizeof(int32_t) * (size_t)(ntouch ? ntouch : 1));
    if (!w->acc || !w->seen || !w->touched) {
        sheet_free(w);
        return NULL;
    }
    /* Zeroed by writing, not by calloc: fresh pages calloc leaves to the kernel are mapped to
     * the zero page when first read, and the add loop's first write to each (acc[d] += ...)
     * then copies it and flushes every other core's TLB. */
    memset(w->acc, 0, sizeof(double) * n1);
    memset(w->seen, 0, n1);
    return w;
}

/* Give the sheet back as the spare (clean: its sums and marks are zero again), or free it. */
void
sheet_give(Sheet *w, int clean)
{
    Py_ssize_t bytes = w->nacc * 9 + w->ntouch * 4;
    if (!clean || bytes > SHEET_KEEP) {
        sheet_free(w);
        return;
    }
    for (int i = 0; i < (bytes > SHEET_SMALL ? 1 : SPARE_SHEETS); i++) {
        Sheet *none = NULL;
        if (__atomic_compare_exchange_n(&spare_sheets[i], &none, w, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            return;
        }
    }
    sheet_free(__atomic_exchange_n(&spare_sheets[0], w, __ATOMIC_ACQ_REL)); /* (all taken) */
}
