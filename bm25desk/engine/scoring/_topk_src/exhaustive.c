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
        return c->T[(Py_ssize_t)j * c->stride + tf];
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
    const Py_ssize_t stride = c->stride;
    int bad = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        int32_t tf = tfs[i];
        uint32_t j = W == 1   ? ((const uint8_t *)dli)[docs[i]]
                     : W == 2 ? ((const uint16_t *)dli)[docs[i]]
                              : (uint32_t)((const int32_t *)dli)[docs[i]];
        if (LIKELY((uint32_t)(tf - 1) < cap)) {
            bad |= j >= rows; /* (a negative int32 row is a huge uint32) */
            tp[i] = T[(Py_ssize_t)(j < rows ? j : 0) * stride + tf];
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

/* Reorder c[0..n) so that its first k are the k best (in no order): quickselect. */
static void
select_best(Entry *c, Py_ssize_t n, Py_ssize_t k)
{
    Py_ssize_t lo = 0, hi = n - 1;
    while (lo < hi) {
        Py_ssize_t i, j;
        partition_entries(c, lo, hi, &i, &j);
        if (k - 1 <= j) {
            hi = j;
        }
        else if (k - 1 >= i) {
            lo = i;
        }
        else {
            return;
        }
    }
}

/* Without rows, a deep k: the candidates (and the heap's previous entries) in one array, the k
 * best selected in linear time and put back as the heap's entries (build_result sorts them;
 * nothing reads them as a heap again). Returns -1 when out of memory. */
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
    Py_ssize_t m = n < h->cap ? n : h->cap;
    if (m < n) {
        select_best(c, n, m);
    }
    for (Py_ssize_t e = 0; e < m; e++) {
        h->s[e] = c[e].s;
        h->d[e] = c[e].d;
        h->slot[e] = e;
    }
    h->size = m;
    free(c);
    return 0;
}

long long
exhaustive(Query *q, Py_ssize_t ndocs, int rows, double *acc, uint8_t *seen, int32_t *touched,
           Py_ssize_t *slot_of)
{
    Py_ssize_t nt = 0;
    double tp[BLK_MAX];
    /* Dense: postings for a quarter of the documents or more. Marking only, then one sequential
     * pass over `seen` lists the matches in docno order (a matching document may score exactly
     * 0.0: `seen`, not the score, says it matched). */
    int dense = q->total_postings >= ndocs / 4;
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
        return take_best(q, touched, nt, acc) < 0 ? -1 : matches;
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
    if (rows && q->ncols) {
        for (Py_ssize_t d = 0; d < ndocs; d++) {
            slot_of[d] = -1;
        }
        fill_rows(q, ndocs, slot_of);
    }
    return matches;
}
