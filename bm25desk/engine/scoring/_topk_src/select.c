/* The k best of many candidates, best first, for the exhaustive path's deep k: radix selection.
 *
 * An evaluation run asks for k = 1000 of a few thousand matching documents (SciFact) or of tens of
 * thousands (long queries on 100 k passages). Quickselect over the candidates, then the result's
 * sort (search.c), took a quarter of a SciFact k = 1000 run: comparisons of (score, docno) pairs
 * that branch unpredictably. Here each score becomes a 64-bit key whose unsigned order is the
 * scores' order; the k best are found a byte of the key at a time, from the top (a histogram,
 * then only the bucket that holds the k-th goes on), and put in order by a stable radix sort
 * (docno ascending, then key descending), skipping the bytes all of them share. The result's sort
 * then meets them already in order. Exact ties at the k-th score keep the lowest docnos. */
#include "topk.h"

/* A candidate with its key: a larger score, a larger key (-0.0 ranks as 0.0). */
typedef struct {
    uint64_t key;
    Entry e;
} Keyed;

static inline uint64_t
score_key(double s)
{
    uint64_t b;
    s = s == 0.0 ? 0.0 : s;
    memcpy(&b, &s, sizeof(b));
    return (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
}

/* The sort byte of x at `shift`: of the docno (ascending) or of the key (descending). */
static inline unsigned
sort_byte(const Keyed *x, int shift, int on_doc)
{
    return on_doc ? (unsigned)(((uint64_t)x->e.d >> shift) & 255)
                  : 255u - (unsigned)((x->key >> shift) & 255);
}

/* One stable pass of a radix sort of src[0..n) into dst on a byte; 0 (nothing written) when
 * every item has the same byte there. */
static int
radix_pass(const Keyed *src, Keyed *dst, Py_ssize_t n, int shift, int on_doc)
{
    Py_ssize_t at[256], part[4][256] = {{0}};
    Py_ssize_t j = 0;
    for (; j + 4 <= n; j += 4) {
        part[0][sort_byte(&src[j], shift, on_doc)]++;
        part[1][sort_byte(&src[j + 1], shift, on_doc)]++;
        part[2][sort_byte(&src[j + 2], shift, on_doc)]++;
        part[3][sort_byte(&src[j + 3], shift, on_doc)]++;
    }
    for (; j < n; j++) {
        part[0][sort_byte(&src[j], shift, on_doc)]++;
    }
    for (int v = 0; v < 256; v++) {
        at[v] = part[0][v] + part[1][v] + part[2][v] + part[3][v];
    }
    Py_ssize_t sum = 0;
    for (int v = 0; v < 256; v++) {
        if (at[v] == n) {
            return 0;
        }
        Py_ssize_t c = at[v];
        at[v] = sum;
        sum += c;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        dst[at[sort_byte(&src[i], shift, on_doc)]++] = src[i];
    }
    return 1;
}

static int
doc_order(const void *x, const void *y)
{
    int64_t a = ((const Keyed *)x)->e.d, b = ((const Keyed *)y)->e.d;
    return (a > b) - (a < b);
}

/* Gather the k best of a[0..n) at its front (in no order); b: n scratch. Each round keeps the
 * bucket of the next key byte that holds the k-th best; below the last byte, equal scores. */
/* The shift of the highest key byte that differs within a[0..n) (-8: they are all equal). The
 * bytes above it need no pass: a histogram of equal bytes is a chain of increments of one
 * counter, each waiting for the last. */
static int
top_shift(const Keyed *a, Py_ssize_t n)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        lo = a[i].key < lo ? a[i].key : lo;
        hi = a[i].key > hi ? a[i].key : hi;
    }
    uint64_t x = lo ^ hi;
    int shift = 56;
    while (shift >= 0 && !((x >> shift) & 255)) {
        shift -= 8;
    }
    return shift;
}

static void
gather_best(Keyed *a, Keyed *b, Py_ssize_t n, Py_ssize_t k)
{
    Py_ssize_t got = 0, lo = 0, hi = n, need = k;
    for (int shift = top_shift(a, n); shift >= 0 && need > 0 && need < hi - lo; shift -= 8) {
        Py_ssize_t cnt[256], part[4][256] = {{0}}; /* four counts: no chain of increments */
        Py_ssize_t i = lo;
        for (; i + 4 <= hi; i += 4) {
            part[0][(a[i].key >> shift) & 255]++;
            part[1][(a[i + 1].key >> shift) & 255]++;
            part[2][(a[i + 2].key >> shift) & 255]++;
            part[3][(a[i + 3].key >> shift) & 255]++;
        }
        for (; i < hi; i++) {
            part[0][(a[i].key >> shift) & 255]++;
        }
        for (int x = 0; x < 256; x++) {
            cnt[x] = part[0][x] + part[1][x] + part[2][x] + part[3][x];
        }
        int v = 255;
        Py_ssize_t above = 0;
        while (above + cnt[v] < need) { /* ends: the range holds more than `need` */
            above += cnt[v--];
        }
        if (cnt[v] == hi - lo) { /* a byte they all share: nothing to move */
            continue;
        }
        /* Without branches (the bytes come in no order): each entry is written to both places
         * and kept where it belongs: the better ones to b (a write at b[above] is dropped:
         * above < hi - lo), the bucket's compacted in place (never past the one being read). */
        Py_ssize_t top = 0, eq = 0;
        for (Py_ssize_t j = lo; j < hi; j++) {
            Keyed e = a[j];
            unsigned x = (unsigned)((e.key >> shift) & 255);
            b[top] = e;
            top += x > (unsigned)v;
            a[lo + eq] = e;
            eq += x == (unsigned)v;
        }
        memmove(a + lo + above, a + lo, sizeof(Keyed) * (size_t)eq);
        memcpy(a + lo, b, sizeof(Keyed) * (size_t)above);
        got += above;
        need -= above;
        lo = got;
        hi = got + cnt[v];
    }
    if (need > 0 && need < hi - lo) { /* equal scores: the lowest docnos */
        qsort(a + lo, (size_t)(hi - lo), sizeof(Keyed), doc_order);
    }
}

int
best_first(Entry *c, Py_ssize_t n, Py_ssize_t k)
{
    if (k > n) {
        k = n;
    }
    if (k <= 0) {
        return 0;
    }
    Keyed *a = malloc(sizeof(Keyed) * (size_t)n * 2);
    if (!a) {
        return -1;
    }
    Keyed *b = a + n;
    int64_t most = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        a[i].key = score_key(c[i].s);
        a[i].e = c[i];
    }
    gather_best(a, b, n, k);
    for (Py_ssize_t i = 0; i < k; i++) {
        most = a[i].e.d > most ? a[i].e.d : most;
    }
    /* docno ascending (the bytes it has), then key descending: stable, so ties keep the order */
    Keyed *src = a, *dst = b;
    for (int shift = 0; shift < 64 && (shift == 0 || ((uint64_t)most >> shift)); shift += 8) {
        if (radix_pass(src, dst, k, shift, 1)) {
            Keyed *t = src;
            src = dst;
            dst = t;
        }
    }
    for (int shift = 0, top = top_shift(src, k); shift <= top; shift += 8) {
        if (radix_pass(src, dst, k, shift, 0)) {
            Keyed *t = src;
            src = dst;
            dst = t;
        }
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        c[i] = src[i].e;
    }
    free(a);
    return 0;
}
