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
 * A term may come with a Parts (parts.c): its docnos and tf parts (as codes into the table)
 * decoded by an earlier search, read instead of the blocks; an empty one is filled first, before
 * anything is added. When every contribution is then known to be > 0, no marks are kept and the
 * top k is taken from chunk maxima (sums.c: the add loops and take_positive). A dense query on a
 * segment larger than a window goes window by window instead (windows.c; split across threads by
 * split.c). Called without the GIL. */
#include "exhaustive.h"

/* The tf part of the posting at list position p with a tf above the table's cap: the term's
 * overflow value, or NaN (the cursor is then broken). */
double
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

/* Lists of at most this many blocks get their Parts filled before a windowed traversal (see
 * exhaustive()). */
#define FILL_FIRST_BLOCKS 64

/* Fill c's Parts (claimed by this search) from its blocks: docnos and tf parts' codes, published
 * when whole (emptied again if a block is broken). Each block is checked as it is decoded
 * (blk_docs: docnos ascending, ending at the block's last docno, below n_docs). Returns -1 when
 * the postings are broken. */
static int
fill_parts(Cursor *c)
{
    Parts *pa = c->parts;
    c->oi = 0;
    for (Py_ssize_t b = 0; b < c->nblk && !*c->broken; b++) {
        const int32_t *tfs = load_block(c, b);
        if (!tfs) {
            break;
        }
        Py_ssize_t m = blk_count(c, b), p0 = b << c->shift;
        if (block_codes_w(c, pa, c->bd, tfs, m, p0) < 0) {
            break;
        }
        memcpy(pa->docs + p0, c->bd, sizeof(int32_t) * (size_t)m);
    }
    parts_publish(pa, !*c->broken);
    return *c->broken ? -1 : 0;
}

/* Add every posting of c into the sums: its filled Parts in one run, else its blocks decoded one
 * at a time (a Parts another search is filling, or none). */
static void
add_term(Cursor *c, Sums *s, double *tp)
{
    Parts *pa = c->parts;
    if (pa && parts_ready(pa)) {
        sums_add_codes(s, pa, 0, pa->docs, pa->n, c->qw);
        return;
    }
    c->oi = 0;
    for (Py_ssize_t b = 0; b < c->nblk && !*c->broken; b++) {
        const int32_t *tfs = load_block(c, b);
        if (!tfs) {
            break;
        }
        Py_ssize_t m = blk_count(c, b), p0 = b << c->shift;
        const int32_t *docs = c->bd;
        int r = c->dli_w == 1   ? block_parts(c, docs, tfs, m, p0, tp, 1)
                : c->dli_w == 2 ? block_parts(c, docs, tfs, m, p0, tp, 2)
                                : block_parts(c, docs, tfs, m, p0, tp, 4);
        if (r < 0) {
            break;
        }
        sums_add_values(s, docs, tp, m, c->qw);
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

/* The k best of c[0..n) as h's entries, best first (build_result sorts them, already in order;
 * nothing reads them as a heap again). Returns -1 when out of memory (h unchanged). */
int
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

int
query_positive(const Query *q)
{
    for (int t = 0; t < q->n; t++) {
        const Cursor *c = &q->cs[t];
        double lb;
        if (c->parts && parts_ready(c->parts)) {
            lb = c->parts->tpmin;
        }
        else { /* (the table's, noted when it was taken: a scan of it here per query and term
                * cost ~17 µs a query on SciFact; NaN, unknown, is not positive) */
            lb = c->tmin;
            for (Py_ssize_t a = 0; a < c->novf && c->ovf_val; a++) {
                lb = c->ovf_val[a] < lb ? c->ovf_val[a] : lb;
            }
        }
        if (!(c->qw > 0.0 && c->qw * lb > 0.0)) {
            return 0;
        }
    }
    return 1;
}

/* Zero the sums and marks of the documents touched (all of them when dense; no marks in a
 * positive mode), leaving acc and seen as exhaustive() found them: a batch (batch.c) reuses them
 * query after query. */
static void
clear_sums(double *acc, uint8_t *seen, const int32_t *touched, Py_ssize_t nt, Py_ssize_t ndocs,
           int dense, int pos)
{
    if (dense) {
        memset(acc, 0, sizeof(double) * (size_t)ndocs);
        if (!pos) {
            memset(seen, 0, (size_t)ndocs);
        }
        return;
    }
    for (Py_ssize_t i = 0; i < nt; i++) {
        acc[touched[i]] = 0.0;
    }
    for (Py_ssize_t i = 0; !pos && i < nt; i++) {
        seen[touched[i]] = 0;
    }
}

/* A dense positive query's matches (acc > 0) into the top k (take_positive). Returns their number,
 * or -1 when out of memory. */
static long long
take_dense_positive(Query *q, const double *acc, Py_ssize_t ndocs, int take)
{
    Pool p;
    double *scratch = malloc(sizeof(double) * (size_t)take_scratch(ndocs));
    if (!scratch || pool_open(q, &p, take) < 0) {
        free(scratch);
        return -1;
    }
    long long matches = take_positive(q, &p, acc, 0, ndocs, scratch);
    free(scratch);
    return pool_close(q, &p, 1) < 0 ? -1 : matches;
}

long long
exhaustive(Query *q, Py_ssize_t ndocs, Py_ssize_t win, int rows, double *acc, uint8_t *seen,
           int32_t *touched, Py_ssize_t *slot_of, int split)
{
    double tp[BLK_MAX];
    int dense = is_dense(q, ndocs);
    /* The terms' empty Parts first (each claimed by one search: the others decode), so that
     * whether every contribution is positive is known before anything is added; windowed, the
     * short lists only (a long one is filled by the slices that read it, on their threads). */
    for (int t = 0; t < q->n && !q->broken; t++) {
        Cursor *c = &q->cs[t];
        if (c->parts && (!win || c->nblk <= FILL_FIRST_BLOCKS) && !parts_ready(c->parts) &&
            parts_take(c->parts, c)) {
            fill_parts(c);
        }
    }
    if (q->broken) {
        return 0;
    }
    int pos = query_positive(q);
    if (win) {
        int nsl = split && !rows ? split_count(q) : 1;
        long long m =
            exhaustive_windows(q, ndocs, win, acc, seen, !rows && q->h->cap > 64, nsl, pos);
        if (m >= 0 && rows && q->ncols && !q->broken) {
            for (Py_ssize_t d = 0; d < ndocs; d++) {
                slot_of[d] = -1;
            }
            fill_rows(q, ndocs, slot_of);
        }
        return m;
    }
    Sums s = {acc, seen, touched, 0, 0,
              dense ? (pos ? SUMS_POS : SUMS_SEEN) : (pos ? SUMS_TOUCH_POS : SUMS_TOUCH)};
    for (int t = 0; t < q->n && !q->broken; t++) {
        add_term(&q->cs[t], &s, tp);
    }
    if (q->broken) {
        return 0;
    }
    Heap *h = q->h;
    long long matches = 0;
    if (dense && pos) {
        matches = take_dense_positive(q, acc, ndocs, !rows && h->cap > 64);
        memset(acc, 0, sizeof(double) * (size_t)ndocs);
        if (matches < 0) {
            return -1;
        }
    }
    else {
        Py_ssize_t nt = s.nt;
        if (dense) {
            for (Py_ssize_t d = 0; d < ndocs; d++) {
                touched[nt] = (int32_t)d;
                nt += seen[d];
            }
        }
        /* Without rows, a deep k and few candidates per place in it: select the k best from an
         * array of them (linear). With many per place the heap: the candidates come in an order
         * unrelated to their scores, so after the first k few enter (about k ln(n / k)) and the
         * inline test rejects the rest, where the array would cost 24 bytes a candidate (2 MB
         * for the 80 k of a long query on 100 k passages: the heap was 10-15 % faster there at
         * k = 1000; the array was faster on SciFact's ~4 k candidates at k = 1000). */
        if (!rows && h->cap > 64 && nt < 16 * h->cap) {
            for (Py_ssize_t i = 0; i < nt; i++) {
                int32_t d = touched[i];
                matches += !((q->allow && !q->allow[d]) || (q->deny && q->deny[d]));
            }
            int got = take_best(q, touched, nt, acc);
            clear_sums(acc, seen, touched, nt, ndocs, dense, pos);
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
        clear_sums(acc, seen, touched, nt, ndocs, dense, pos);
    }
    if (rows && q->ncols) {
        for (Py_ssize_t d = 0; d < ndocs; d++) {
            slot_of[d] = -1;
        }
        fill_rows(q, ndocs, slot_of);
    }
    return matches;
}
