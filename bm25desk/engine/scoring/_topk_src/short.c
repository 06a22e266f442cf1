/* The short path: a query whose lists are all short is ranked by scoring every document.
 *
 * A query of rare terms holds a few hundred postings in all, a block or two per list. The pruning
 * traversal (maxscore.c, quick.c) would spend more on its machinery than on the postings:
 * bounds from the blocks' frontiers, seeding, the lean pass, probes. Here every block of every
 * list is decoded and checked (layout, docnos, tfs and frontier entries, as the traversal checks
 * the blocks it reads), each posting's tf part looked up as contrib() does (the table, or the
 * term's overflow value for tf > cap), and added term after term, in query order, into its
 * document's sum in a small hash table (a document's first contribution is added to 0.0): the
 * numbers and the order of finish(), so the same float64 bits. Each allowed, live document is
 * then offered to the heap of the top k (score descending, docno ascending), with its row of
 * tfs and tf parts. Nothing is skipped, so the top k is that of every document: the pruning
 * traversal's, which only skips documents that cannot enter it.
 *
 * Taken when the lists hold at most short_limit() postings in all (4096), unless one list holds
 * most of them: the pruning traversal then scores the others first and passes over most of the
 * long one on its block maxima. Measured on 100 k and 1 M passages (lucene, k 11 and 101, the
 * rare, mixed and frequent mixes' queries of at most 6000 postings, ranked() by either path):
 * balanced lists of up to 4096 postings took 0.3-0.7 of the pruning time; one list of 90 % or
 * more of 1-6 K postings took up to 5 times longer here. So: at most an eighth of the limit
 * (512), or at most that plus 5 times the postings outside the longest list. */
#include "short.h"

/* Postings (all lists together) up to which a query may take the short path. */
static Py_ssize_t short_max = 4096;

/* ... whatever the limit (its scratch: about 40 bytes a posting, indexed by int32). */
#define SHORT_HARD_MAX ((Py_ssize_t)1 << 22)

int
short_taken(const Cursor *cs, int n)
{
    Py_ssize_t total = 0, longest = 0;
    for (int i = 0; i < n; i++) {
        total += cs[i].n;
        longest = cs[i].n > longest ? cs[i].n : longest;
    }
    if (n < 1 || total > short_max || total > SHORT_HARD_MAX) {
        return 0;
    }
    Py_ssize_t rest = total - longest;
    return total <= short_max / 8 || rest >= (total - short_max / 8 + 4) / 5;
}

/* Slots of the hash table for p postings: a power of two, at least four times p (few
 * collisions: a probe that goes on is a branch mispredicted). */
static size_t
table_slots(Py_ssize_t p)
{
    size_t m = 16;
    while (m < 4 * (size_t)p) {
        m *= 2;
    }
    return m;
}

/* Per posting: docno, tf, tf part, term, the document's previous posting; per slot: docno, sum,
 * last posting; per document (at most one per posting): its slot. */
size_t
short_scratch_bytes(Py_ssize_t postings, int n)
{
    size_t p = (size_t)postings, m = table_slots(postings);
    (void)n;
    return sizeof(double) * (p + m) + sizeof(int32_t) * (5 * p + 2 * m) + 64;
}

/* Decode every block of c into docs, tfs and tps (c->n each), checking what the traversal
 * checks: each block's layout, docnos (ascending from the previous block's last, ending at its
 * own, below n_docs), tfs, frontier entries; each document's length row; each overflow posting
 * (tf > cap) listed. Returns 0, or -1 with the cursor broken. */
static int
decode_list(Cursor *c, int32_t *docs, int32_t *tfs, double *tps)
{
    uint32_t *tmp = (uint32_t *)c->bt; /* the cursor's scratch: BLK_MAX values */
    for (Py_ssize_t b = 0; b < c->nblk; b++) {
        BlockView v;
        Py_ssize_t m = blk_count(c, b), p0 = b << c->shift;
        int32_t prev = b ? c->blk_last[b - 1] : -1, last = c->blk_last[b];
        if (UNLIKELY(blk_layout(c, b, &v) < 0 ||
                     blk_docs(&v, m, prev, last, c->ndocs, tmp, docs + p0) != BLK_OK ||
                     blk_tfs(&v, m, tmp, tfs + p0) != BLK_OK)) {
            cur_broken(c);
            return -1;
        }
        for (int e = 0; e < v.nprof; e++) {
            int tf;
            int32_t doc;
            if (UNLIKELY(blk_entry(&v, e, c->cap, prev, last, &tf, &doc) != BLK_OK ||
                         row_of(c, doc) < 0)) {
                cur_broken(c);
                return -1;
            }
        }
    }
    const double *T = c->T;
    Py_ssize_t oi = 0;
    for (Py_ssize_t p = 0; p < c->n; p++) {
        int32_t tf = tfs[p];
        if (LIKELY((uint32_t)(tf - 1) < (uint32_t)c->cap)) {
            int32_t j = dli_at(c->dli, c->dli_w, docs[p]);
            if (UNLIKELY(j < 0 || (Py_ssize_t)j >= c->rows)) {
                cur_broken(c);
                return -1;
            }
            tps[p] = T[(Py_ssize_t)j * c->stride + tf * c->tstride];
            continue;
        }
        while (oi < c->novf && c->ovf_pos[oi] < p) {
            oi++;
        }
        if (UNLIKELY(tf < 1 || oi >= c->novf || c->ovf_pos[oi] != p || !c->ovf_val)) {
            cur_broken(c);
            return -1;
        }
        tps[p] = c->ovf_val[oi];
    }
    return 0;
}

static inline int
excluded(const Query *q, int32_t d)
{
    return (q->allow && !q->allow[d]) || (q->deny && q->deny[d]);
}

/* (s1, d1) ranks below (s2, d2): a lower score, or the same score and a higher docno. */
static inline int
worse(double s1, int64_t d1, double s2, int64_t d2)
{
    return s1 < s2 || (s1 == s2 && d1 > d2);
}

void
short_rank(Query *q, void *scratch)
{
    int n = q->n;
    Heap *h = q->h;
    if (h->cap == 0 || n == 0) {
        return;
    }
    Py_ssize_t total = 0;
    for (int i = 0; i < n; i++) {
        total += q->cs[i].n;
    }
    size_t slots = table_slots(total), mask = slots - 1;
    int shift = 32;
    for (size_t m = slots; m > 1; m >>= 1) {
        shift--;
    }
    double *tps = scratch, *sum = tps + total;
    int32_t *docs = (int32_t *)(sum + slots), *tfs = docs + total, *term = tfs + total;
    int32_t *link = term + total, *key = link + total, *last = key + slots;
    int32_t *touched = last + slots;
    Py_ssize_t p0 = 0;
    for (int i = 0; i < n; i++) {
        Cursor *c = &q->cs[i];
        if (decode_list(c, docs + p0, tfs + p0, tps + p0) < 0) {
            return;
        }
        for (Py_ssize_t p = p0; p < p0 + c->n; p++) {
            term[p] = i;
        }
        p0 += c->n;
    }
    /* Term after term in query order: each document's sum from 0.0, as finish() adds. */
    memset(key, 0xFF, sizeof(int32_t) * slots); /* -1: empty */
    Py_ssize_t nt = 0;
    p0 = 0;
    for (int i = 0; i < n; i++) {
        double qw = q->cs[i].qw;
        Py_ssize_t p1 = p0 + q->cs[i].n;
        for (Py_ssize_t p = p0; p < p1; p++) {
            int32_t d = docs[p];
            size_t at = ((uint32_t)d * 0x9E3779B1u) >> shift;
            while (key[at] != d && key[at] >= 0) {
                at = (at + 1) & mask;
            }
            if (key[at] < 0) { /* its first posting */
                key[at] = d;
                sum[at] = 0.0;
                last[at] = -1;
                touched[nt++] = (int32_t)at;
            }
            sum[at] += qw * tps[p];
            link[p] = last[at];
            last[at] = (int32_t)p;
        }
        p0 = p1;
    }
    int ncols = q->ncols;
    for (Py_ssize_t e = 0; e < nt; e++) {
        int32_t at = touched[e], d = key[at];
        if (UNLIKELY(excluded(q, d))) {
            continue;
        }
        q->n_scored++;
        double s = sum[at];
        int64_t docno = q->base + d;
        if (h->size >= h->cap && !worse(h->s[0], h->d[0], s, docno)) {
            continue; /* (heap_push's own first test) */
        }
        Py_ssize_t sl = heap_push(h, s, docno);
        if (sl < 0 || ncols == 0) {
            continue;
        }
        int32_t *rt = q->rows_tf + sl * ncols;
        double *rp = q->rows_tp + sl * ncols;
        for (int c = 0; c < ncols; c++) { /* (a few columns: no call to memset) */
            rt[c] = 0;
            rp[c] = 0.0;
        }
        for (int32_t p = last[at]; p >= 0; p = link[p]) {
            rt[q->cols[term[p]]] = tfs[p];
            rp[q->cols[term[p]]] = tps[p];
        }
    }
    q->n_cand = q->n_scored;
}

PyObject *
topk_short_limit(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *arg = NULL;
    if (!PyArg_ParseTuple(args, "|O", &arg)) {
        return NULL;
    }
    Py_ssize_t before = short_max, v;
    if (arg && get_count(arg, "postings", -1, PY_SSIZE_T_MAX, 1, &v) < 0) {
        return NULL;
    }
    if (arg) {
        short_max = v;
    }
    return PyLong_FromSsize_t(before);
}
