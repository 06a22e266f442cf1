/* The traversal of one segment: seeding, block-max MaxScore, pruning, the heap of the top k.
 *
 * Pruning only ever skips a document whose score provably cannot enter the top k:
 *
 * - Bounds come from a table U >= T that is non-decreasing in tf and non-increasing in the length
 *   index, so a block's "profile" (for each tf in the block, the smallest length index with that
 *   tf, reduced to its Pareto frontier) gives the block's maximum exactly. A negative weight
 *   (bim*, BM25Adpt, relevance feedback) is bounded by 0.
 * - Traversal: if the list with the largest bound is short, its documents are scored first
 *   (term-at-a-time "seeding", probing the other lists) to raise the threshold early; then
 *   document-at-a-time MaxScore over the other lists (those that together cannot reach the
 *   threshold are only probed), with a block-max pre-check that skips whole blocks; once the
 *   top k is full, a lean pass (quick_prune, quick.c) drops ahead of each full step the documents
 *   whose block maxima or contributions, plus every probed list's upper bound, clearly fall
 *   short; when some lists are required (the others' bounds alone fall short), as a conjunction
 *   a block at a time.
 * - Rounding: bounds are summed in bound order, the score in query order. A comparison clearly
 *   away from the threshold uses a slack that covers float rounding; one within the slack is
 *   settled exactly by summing the same per-term bounds in query order (float addition is
 *   monotone, so that sum bounds the float score bit for bit).
 * - Ties: the heap orders by (score desc, docno asc); a document at the threshold's score enters
 *   only with a lower docno than the heap's worst, so ties keep the lower docnos.
 *
 * For each document in the top k, the per-term tf and tf part it was scored with are kept too
 * (the explanation of a hit without looking anything up again).
 */
#include "topk.h"

/* -- the heap of the current top k ------------------------------------------------------------ */

static inline int
worse(double s1, int64_t d1, double s2, int64_t d2)
{
    return s1 < s2 || (s1 == s2 && d1 > d2);
}

/* Put entry (s, d, slot) at position i. */
static inline void
heap_set(Heap *h, Py_ssize_t i, double s, int64_t d, Py_ssize_t slot)
{
    h->s[i] = s;
    h->d[i] = d;
    h->slot[i] = slot;
}

static void
heap_sift_down(Heap *h, Py_ssize_t i)
{
    double s = h->s[i];
    int64_t d = h->d[i];
    Py_ssize_t sl = h->slot[i];
    for (;;) {
        Py_ssize_t l = 2 * i + 1;
        if (l >= h->size) {
            break;
        }
        Py_ssize_t r = l + 1, m = l;
        if (r < h->size && worse(h->s[r], h->d[r], h->s[l], h->d[l])) {
            m = r;
        }
        if (!worse(h->s[m], h->d[m], s, d)) {
            break;
        }
        heap_set(h, i, h->s[m], h->d[m], h->slot[m]);
        i = m;
    }
    heap_set(h, i, s, d, sl);
}

/* Insert (s, d) if it belongs to the top k; return the row slot it now owns, or -1. */
Py_ssize_t
heap_push(Heap *h, double s, int64_t d)
{
    if (h->size < h->cap) {
        Py_ssize_t sl = h->size;
        Py_ssize_t i = h->size++;
        while (i > 0) {
            Py_ssize_t p = (i - 1) / 2;
            if (!worse(s, d, h->s[p], h->d[p])) {
                break;
            }
            heap_set(h, i, h->s[p], h->d[p], h->slot[p]);
            i = p;
        }
        heap_set(h, i, s, d, sl);
        return sl;
    }
    if (!worse(h->s[0], h->d[0], s, d)) {
        return -1;
    }
    Py_ssize_t sl = h->slot[0];
    h->s[0] = s;
    h->d[0] = d;
    heap_sift_down(h, 0);
    return sl;
}

/* -- pruning and scoring ---------------------------------------------------------------------- */

static inline int
excluded(const Query *q, int32_t d)
{
    return (q->allow && !q->allow[d]) || (q->deny && q->deny[d]);
}

/* Exact bound: the per-term bounds q->qb summed in query order from 0.0, like the score. Float
 * addition is monotone in both operands, so a document whose contributions are each at most its
 * term's bound (absent terms: 0.0 at most) scores at most this, bit for bit. */
static inline double
exact_bound(const Query *q, const double *b)
{
    double eb = 0.0;
    for (int i = 0; i < q->n; i++) {
        if (b[i] == b[i]) {
            eb += b[i];
        }
    }
    return eb;
}

/* Whether document `doc`, bounded by `bound` (the same bounds as q->qb, summed in another order),
 * cannot enter the top k. Clear cases use the rounding slack; a bound within the slack of the
 * threshold is settled exactly, ties included: at an equal score the lower docno stays. */
static inline int
prune(const Query *q, double bound, int32_t doc)
{
    const Heap *h = q->h;
    if (h->size < h->cap) {
        return 0;
    }
    double theta = h->s[0];
    if (bound + q->slack <= theta) {
        return 1;
    }
    if (bound - q->slack > theta) {
        return 0;
    }
    double eb = exact_bound(q, q->qb);
    return eb < theta || (eb == theta && q->base + doc > h->d[0]);
}

/* Extend the non-essential prefix ord[0..ne): lists that together cannot lift any later
 * document (docno > cur) into the top k. */
static int
extend_ne(Query *q, const int *ord, int n, const double *prefix, int ne, int32_t cur)
{
    const Heap *h = q->h;
    if (h->size < h->cap) {
        return ne;
    }
    double theta = h->s[0];
    while (ne < n) {
        if (prefix[ne] + q->slack <= theta) {
            ne++;
            continue;
        }
        if (prefix[ne] - q->slack > theta) {
            break;
        }
        for (int i = 0; i < q->n; i++) {
            q->tb[i] = NAN;
        }
        for (int i = 0; i <= ne; i++) {
            q->tb[ord[i]] = q->cs[ord[i]].ub;
        }
        double eb = exact_bound(q, q->tb);
        /* At an equal score a later document loses to the root, and while theta stays the same
         * the root's docno can only decrease. */
        if (eb < theta || (eb == theta && h->d[0] <= q->base + cur)) {
            ne++;
        }
        else {
            break;
        }
    }
    return ne;
}

static inline void
record(Query *q, Cursor *c, double v)
{
    q->vals[c->qi] = v;
    q->tfv[c->qi] = c->tf_last;
    q->tpv[c->qi] = c->tp_last;
}

/* Score the document from the m recorded terms (summed in query order, from 0.0 like numpy's
 * `scores[d] += c`), offer it to the heap, and fill its row. Return 1 when the heap changed. */
static int
finish(Query *q, int m, int64_t docno)
{
    int *present = q->present;
    for (int a = 1; a < m; a++) {
        int x = present[a], b2 = a - 1;
        while (b2 >= 0 && present[b2] > x) {
            present[b2 + 1] = present[b2];
            b2--;
        }
        present[b2 + 1] = x;
    }
    double s = 0.0;
    for (int a = 0; a < m; a++) {
        s += q->vals[present[a]];
    }
    q->n_scored++;
    Py_ssize_t sl = heap_push(q->h, s, docno);
    if (sl < 0) {
        return 0;
    }
    int32_t *rt = q->rows_tf + sl * q->ncols;
    double *rp = q->rows_tp + sl * q->ncols;
    for (int c = 0; c < q->ncols; c++) { /* (a few columns: no call to memset) */
        rt[c] = 0;
        rp[c] = 0.0;
    }
    for (int a = 0; a < m; a++) {
        int qi = present[a];
        rt[q->cols[qi]] = q->tfv[qi];
        rp[q->cols[qi]] = q->tpv[qi];
    }
    return 1;
}

/* Term-at-a-time seeding: score every document of the short list S exactly, probing `others`
 * (copies of the other cursors, by descending upper bound), so that the threshold is high before
 * the document-at-a-time pass over the other lists, which then skips S's documents. */
static void
seed(Query *q, Cursor *S, Cursor *others, int m)
{
    double *qb = q->qb;
    double rest = 0.0;
    for (int i = m - 1; i >= 0; i--) {
        rest += others[i].ub;
    }
    for (int i = 0; i < m; i++) {
        q->rest[i] = &others[i];
    }
    for (cur_rewind(S); S->cur != END_DOC && !q->broken; advance(S)) {
        /* With the top k full, the lean pass first (quick.c) when it probes: S's postings whose
         * bound, made exact in the lists probed, falls short. */
        if (q->h->size >= q->h->cap && conj_worth(q, S, q->rest, m, q->h->s[0]) &&
            conj_next(q, S, q->rest, m, rest, q->h->s[0]) == END_DOC) {
            break;
        }
        int32_t d = S->cur;
        if (UNLIKELY(excluded(q, d))) {
            continue;
        }
        q->n_seeded++;
        double vs = contrib(S);
        double bound = vs + rest;
        qb[S->qi] = vs;
        for (int i = 0; i < m; i++) {
            qb[others[i].qi] = others[i].ub;
        }
        if (prune(q, bound, d)) {
            continue;
        }
        int full = q->h->size >= q->h->cap;
        if (full) {
            for (int i = 0; i < m; i++) {
                Cursor *o = &others[i];
                double bb = block_bound(o, d);
                o->bb = bb;
                qb[o->qi] = bb;
                bound -= o->ub - bb;
                if (prune(q, bound, d)) {
                    goto next;
                }
            }
        }
        int mm = 0;
        record(q, S, vs);
        q->present[mm++] = S->qi;
        for (int i = 0; i < m; i++) {
            Cursor *o = &others[i];
            next_geq(o, d);
            if (o->cur == d) {
                double v = contrib(o);
                record(q, o, v);
                q->present[mm++] = o->qi;
                if (full) {
                    bound += v - o->bb;
                    qb[o->qi] = v;
                }
            }
            else if (full) {
                bound -= o->bb;
                qb[o->qi] = NAN;
            }
            if (full && prune(q, bound, d)) {
                goto next;
            }
        }
        finish(q, mm, q->base + d);
    next:;
    }
    cur_rewind(S);
}

/* The steps of run(), one candidate document `cur` at a time. ord[0..ne) are the non-essential
 * lists (probed only), ord[ne..n) the essential ones (whose documents are the candidates). */

/* An excluded document: move the essential lists past it; return the next candidate. */
static inline int32_t
pass_excluded(Query *q, const int *ord, int ne, int n, int32_t cur)
{
    int32_t next = END_DOC;
    for (int i = ne; i < n; i++) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur == cur) {
            advance(c);
        }
        if (c->cur < next) {
            next = c->cur;
        }
    }
    return next;
}

/* The non-essential lists' bound for cur: their upper bounds, except those whose cursor is
 * already past cur (left there by an earlier probe): they do not hold cur. *upto is the lowest
 * docno such a list is at. */
static inline double
nonessential_bound(Query *q, const int *ord, int ne, int32_t cur, int32_t *upto)
{
    double noness = 0.0;
    *upto = END_DOC;
    for (int i = 0; i < ne; i++) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur > cur) {
            q->qb[ord[i]] = NAN;
            if (c->cur < *upto) {
                *upto = c->cur;
            }
        }
        else {
            q->qb[ord[i]] = c->ub;
            noness += c->ub;
        }
    }
    return noness;
}

/* Block-max pre-check of the essential lists, before touching lengths or tfs. When even their
 * block maxima cannot lift cur into the top k, move them past what the same bounds rule out,
 * set *next and return 1. */
static inline int
skip_blocks(Query *q, const int *ord, int ne, int n, int32_t cur, double noness, int32_t ne_upto,
            int32_t *next)
{
    double bound = noness;
    for (int i = ne; i < n; i++) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur == cur) {
            double bb = block_bound(c, cur);
            q->qb[ord[i]] = bb;
            bound += bb;
        }
        else {
            q->qb[ord[i]] = NAN;
        }
    }
    if (!prune(q, bound, cur)) {
        return 0;
    }
    /* No document before `target` can enter either: one that is in an essential list is in a
     * list now at cur (the others are at `upto` or later) and inside that list's current block
     * (d <= bnd), it is not in the non-essential lists known to be past cur (before ne_upto), so
     * the same bounds hold, and it comes after cur (ties lose the same way). */
    int32_t upto = ne_upto, bnd = END_DOC;
    for (int i = ne; i < n; i++) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur == cur) {
            /* (a list bounded by 0 bounds every block by 0: no limit) */
            if (c->qwp != 0.0 && c->blk < c->nblk && c->blk_last[c->blk] < bnd) {
                bnd = c->blk_last[c->blk];
            }
        }
        else if (c->cur < upto) {
            upto = c->cur;
        }
    }
    int32_t target = bnd < upto ? bnd + 1 : upto;
    if (target <= cur) {
        target = cur + 1;
    }
    *next = END_DOC;
    for (int i = ne; i < n; i++) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur == cur) {
            next_geq(c, target);
        }
        if (c->cur < *next) {
            *next = c->cur;
        }
    }
    return 1;
}

/* Score cur in the essential lists (recording each contribution) and move them on; return the
 * sum, with *m terms recorded and *next the next candidate. */
static inline double
score_essential(Query *q, const int *ord, int ne, int n, int32_t cur, int *m, int32_t *next)
{
    double sum = 0.0;
    *next = END_DOC;
    for (int i = ne; i < n; i++) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur == cur) {
            double v = contrib(c);
            record(q, c, v);
            q->qb[ord[i]] = v;
            q->present[(*m)++] = c->qi;
            sum += v;
            advance(c);
        }
        else {
            q->qb[ord[i]] = NAN;
        }
        if (c->cur < *next) {
            *next = c->cur;
        }
    }
    return sum;
}

/* With the top k full: whether cur is pruned once the non-essential lists' bounds are replaced
 * by their block maxima, then by their actual contributions (recorded), largest bound first. */
static inline int
prune_with_nonessential(Query *q, const int *ord, int ne, int32_t cur, double bound, int *m)
{
    if (prune(q, bound, cur)) {
        return 1;
    }
    for (int i = ne - 1; i >= 0; i--) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur > cur) {
            continue; /* known absent: not in the bound */
        }
        double bb = block_bound(c, cur);
        c->bb = bb;
        q->qb[ord[i]] = bb;
        bound -= c->ub - bb;
        if (prune(q, bound, cur)) {
            return 1;
        }
    }
    for (int i = ne - 1; i >= 0; i--) {
        Cursor *c = &q->cs[ord[i]];
        if (c->cur > cur) {
            continue;
        }
        next_geq(c, cur);
        if (c->cur == cur) {
            double v = contrib(c);
            record(q, c, v);
            q->qb[ord[i]] = v;
            q->present[(*m)++] = c->qi;
            bound += v - c->bb;
        }
        else {
            q->qb[ord[i]] = NAN;
            bound -= c->bb;
        }
        if (prune(q, bound, cur)) {
            return 1;
        }
    }
    return 0;
}

/* Document-at-a-time MaxScore over the cursors ord[0..n) (ascending upper bounds, prefix[] their
 * running sums) with block-max checks, skipping the documents of q->excl. */
static void
run(Query *q, const int *ord, int n, const double *prefix)
{
    Heap *h = q->h;
    int ne = extend_ne(q, ord, n, prefix, 0, -1);
    int32_t cur = END_DOC;
    for (int i = ne; i < n; i++) {
        if (q->cs[ord[i]].cur < cur) {
            cur = q->cs[ord[i]].cur;
        }
    }
    while (ne < n && cur != END_DOC && !q->broken) {
        int32_t next, ne_upto;
        int full = h->size >= h->cap, m = 0;
        if (full && (cur = quick_prune(q, ord, ne, n, cur)) == END_DOC) {
            break;
        }
        q->n_cand++;
        if (UNLIKELY(excluded(q, cur))) {
            cur = pass_excluded(q, ord, ne, n, cur);
            continue;
        }
        double noness = nonessential_bound(q, ord, ne, cur, &ne_upto);
        if (full && skip_blocks(q, ord, ne, n, cur, noness, ne_upto, &next)) {
            q->n_skips++;
            cur = next;
            continue;
        }
        double sum = score_essential(q, ord, ne, n, cur, &m, &next);
        int pruned = full && prune_with_nonessential(q, ord, ne, cur, sum + noness, &m);
        if (!pruned && q->excl) {
            next_geq(q->excl, cur);
            pruned = q->excl->cur == cur; /* scored (or pruned) by the seeding pass */
        }
        if (!pruned && finish(q, m, q->base + cur)) {
            ne = extend_ne(q, ord, n, prefix, ne, cur);
        }
        cur = next;
    }
}

/* -- one segment ---------------------------------------------------------------------------- */

/* Order the cursors by upper bound, ascending (ties: query order). */
static void
order_by_bound(const Cursor *cs, int n, int *ord)
{
    for (int i = 0; i < n; i++) {
        ord[i] = i;
    }
    for (int a = 1; a < n; a++) {
        int x = ord[a], b2 = a - 1;
        while (b2 >= 0 && (cs[ord[b2]].ub > cs[x].ub ||
                           (cs[ord[b2]].ub == cs[x].ub && ord[b2] > x))) {
            ord[b2 + 1] = ord[b2];
            b2--;
        }
        ord[b2 + 1] = x;
    }
}

void
traverse(Query *q)
{
    Cursor *cs = q->cs;
    int n = q->n, *ord = q->ord;
    if (q->h->cap == 0 || n == 0) {
        return;
    }
    order_by_bound(cs, n, ord);
    /* Seed with the list of the largest upper bound when it is short. */
    int sd = -1;
    if (q->seed_ratio > 0.0 && n >= 2) {
        sd = ord[n - 1];
        if (!(cs[sd].ub > 0.0) ||
            (double)cs[sd].n * q->seed_ratio > (double)(q->total_postings - cs[sd].n)) {
            sd = -1;
        }
    }
    int na = n;
    if (sd >= 0) {
        for (int i = 0; i < n - 1; i++) {
            q->seedcs[i] = cs[ord[n - 2 - i]];
            cursor_rescratch(&q->seedcs[i], q->seed_scratch + (Py_ssize_t)CURSOR_SCRATCH * i);
        }
        seed(q, &cs[sd], q->seedcs, n - 1);
        q->excl = &cs[sd];
        q->qb[sd] = NAN; /* the main pass never sees its documents */
        na = n - 1;
    }
    double acc = 0.0;
    for (int i = 0; i < na; i++) {
        acc += cs[ord[i]].ub;
        q->prefix[i] = acc;
    }
    run(q, ord, na, q->prefix);
}
