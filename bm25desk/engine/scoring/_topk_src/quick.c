/* The lean pass of the pruning traversal: with the top k full, the documents that clearly
 * cannot enter it are dropped ahead of each full step (run()'s, and seed()'s in maxscore.c).
 *
 * Every drop here is one the full step would make too, on prune()'s first, slack-covered test
 * only (a dropped document scores below the threshold, never at it, so ties are untouched):
 *
 * - one list e drives (its postings are the candidates), the others bounded by their upper
 *   bounds: a posting goes when its contribution plus theirs falls short (scan_qualifying);
 * - a list is "required" when the other lists' bounds alone fall short: every document that
 *   can still enter holds it (queries of stopwords, whose lists hold a near-maximum posting in
 *   every block, so that block maxima do not help). Then, and for short queries (at most
 *   PROBE_ALL other lists), e goes a block at a time: its qualifying postings are merged with
 *   probes of the other lists (copies of their cursors, decoding only the blocks a candidate
 *   falls in), each candidate's bound made exact in the lists probed (an absent required list
 *   drops it), and the survivors are kept for the following calls (conj_next);
 * - several essential lists (run()): a stretch goes when the block maxima of the lists at the
 *   candidate cannot reach the threshold, as skip_blocks() does (quick_prune).
 */
#include "topk.h"

/* Lists besides the driving one up to which all are probed (see conj_next). */
#define PROBE_ALL 6

/* The block bound of cursor c for the documents of its current block (0 for a weight <= 0). */
static inline double
current_block_bound(Cursor *c)
{
    return c->qwp == 0.0 ? 0.0 : c->qwp * blk_max(c, c->pos >> c->shift);
}

/* Move c, a block at a time, to its first posting (from its position) whose contribution plus
 * `rest` might reach theta, and return its docno (END_DOC: none). A block goes whole on its
 * maximum, else its postings are read in one tight loop (docnos checked when the block was
 * decoded, rows checked here); the posting that stops the loop is checked by contrib(). */
static int32_t
scan_qualifying(Query *q, Cursor *c, double rest, double theta)
{
    while (c->cur != END_DOC && !q->broken) {
        Py_ssize_t b = c->pos >> c->shift, base = b << c->shift, end = base + blk_count(c, b);
        if (rest + current_block_bound(c) + q->slack <= theta) {
            q->n_skips++;
            cur_set(c, end);
            continue;
        }
        const int32_t *tfs = cur_tfs(c);
        if (UNLIKELY(!tfs)) {
            break;
        }
        const int32_t *docs = c->bd;
        Py_ssize_t p = c->pos;
        for (; p < end; p++) {
            int32_t tf = tfs[p - base];
            if (UNLIKELY((uint32_t)(tf - 1) >= (uint32_t)c->cap)) {
                break; /* an overflow posting: contrib() below finds its value */
            }
            int32_t j = dli_at(c->dli, c->dli_w, docs[p - base]);
            if (UNLIKELY(j < 0 || (Py_ssize_t)j >= c->rows)) {
                break; /* contrib() below marks the cursor broken */
            }
            if (rest + c->qw * c->T[(Py_ssize_t)j * c->stride + tf * c->tstride] + q->slack >
                theta) {
                break;
            }
        }
        if (p == c->pos) { /* the posting at the cursor: checked by contrib() */
            if (rest + contrib(c) + q->slack > theta) {
                break;
            }
            p++;
        }
        cur_set(c, p);
    }
    return q->broken ? END_DOC : c->cur;
}

/* Keep the candidates cand[0..m) (ascending docnos; cb: their bounds, with this list at its
 * upper bound) that probe cursor p (a copy of a required list's cursor, moving on its own)
 * holds, and whose bound with p's upper bound replaced by its contribution might still reach
 * theta; return how many are kept. Its blocks are passed on their last docnos and decoded (and
 * checked) only where a candidate falls; within a block the candidates are merged in. A
 * posting whose value is not read here (tf > cap) keeps its candidate and bound. */
static int
probe_filter(Query *q, Cursor *p, int req, int32_t *cand, double *cb, int m, double theta)
{
    int kept = 0;
    Py_ssize_t b = p->pos >> p->shift, at = p->pos;
    for (int x = 0; x < m && !q->broken; x++) {
        int32_t d = cand[x];
        while (b < p->nblk && p->blk_last[b] < d) {
            b++;
        }
        if (b >= p->nblk) {
            p->pos = p->n;
            p->cur = END_DOC;
            for (; x < m && !req; x++) { /* none of the rest is in the list */
                double bound = cb[x] - p->ub;
                cand[kept] = cand[x];
                cb[kept] = bound;
                kept += bound + q->slack > theta;
            }
            break;
        }
        Py_ssize_t base = b << p->shift, end = base + blk_count(p, b);
        if (b != p->dblk) {
            if (cur_load(p, b) < 0) {
                break;
            }
            at = base;
        }
        else if (at < base) {
            at = base;
        }
        const int32_t *docs = p->bd;
        while (at < end && docs[at - base] < d) {
            at++;
        }
        if (UNLIKELY(at >= end)) { /* the block's last docno is no longer what it was */
            cur_broken(p);
            break;
        }
        if (docs[at - base] != d) {
            if (!req) { /* absent: the bound without the list */
                double bound = cb[x] - p->ub;
                cand[kept] = d;
                cb[kept] = bound;
                kept += bound + q->slack > theta;
            }
            continue;
        }
        const int32_t *tfs = cur_tfs(p);
        if (UNLIKELY(!tfs)) {
            break;
        }
        int32_t tf = tfs[at - base];
        double bound = cb[x];
        if (LIKELY((uint32_t)(tf - 1) < (uint32_t)p->cap)) {
            int32_t j = row_of(p, d);
            if (j < 0) {
                break;
            }
            bound += p->qw * p->T[(Py_ssize_t)j * p->stride + tf * p->tstride] - p->ub;
        }
        cand[kept] = d;
        cb[kept] = bound;
        kept += bound + q->slack > theta;
    }
    if (p->cur != END_DOC) {
        p->pos = at;
        p->cur = at < p->n && b == p->dblk ? p->bd[at - (b << p->shift)] : p->cur;
    }
    return q->broken ? 0 : kept;
}

/* The candidates of e's current block from its position on: its postings whose contribution
 * plus noness might reach theta (one that is not read here, tf > cap, is kept at e's upper
 * bound), then filtered through the probes of the required lists, the bound of each candidate
 * becoming exact in the lists probed. Fills q->pend; e's position is unchanged. (The bounds
 * are sums in another order than the score's, of at most 2n + 2 terms: what q->slack covers,
 * as for every bound of the traversal.) */
static void
fill_pending(Query *q, Cursor *e, int nreq, int nprobe, double noness, double theta)
{
    Py_ssize_t b = e->pos >> e->shift, base = b << e->shift, end = base + blk_count(e, b);
    const int32_t *tfs = cur_tfs(e);
    q->npend = q->ipend = 0;
    q->pend_upto = end;
    if (UNLIKELY(!tfs)) {
        return;
    }
    const int32_t *docs = e->bd;
    int32_t *cand = q->pend;
    double *cb = q->pend_b;
    int m = 0;
    for (Py_ssize_t p = e->pos; p < end; p++) {
        int32_t tf = tfs[p - base], d = docs[p - base];
        double bound = noness + e->ub;
        if (LIKELY((uint32_t)(tf - 1) < (uint32_t)e->cap)) {
            int32_t j = dli_at(e->dli, e->dli_w, d);
            if (LIKELY(j >= 0 && (Py_ssize_t)j < e->rows)) { /* (else contrib() marks it) */
                bound = noness + e->qw * e->T[(Py_ssize_t)j * e->stride + tf * e->tstride];
            }
        }
        cand[m] = d;
        cb[m] = bound;
        m += bound + q->slack > theta;
    }
    for (int i = 0; i < nprobe && m > 0; i++) {
        m = probe_filter(q, &q->probes[i], i < nreq, cand, cb, m, theta);
    }
    q->npend = m;
}

/* How many of the lists rest[0..m) (descending upper bounds) are required: a prefix, each the
 * list whose absence alone keeps a document out (e's bound and the others' fall short). */
static int
required(const Query *q, const Cursor *e, Cursor *const *rest, int m, double theta)
{
    int nreq = 0;
    while (nreq < m) {
        double others = 0.0; /* in ascending order, as the traversal sums its bounds */
        for (int i = m - 1; i >= 0; i--) {
            if (i != nreq) {
                others += rest[i]->ub;
            }
        }
        if (others + e->ub + q->slack > theta) {
            break;
        }
        nreq++;
    }
    return nreq;
}

int
conj_worth(const Query *q, const Cursor *e, Cursor *const *rest, int m, double theta)
{
    return m <= PROBE_ALL || required(q, e, rest, m, theta) > 0;
}

int32_t
conj_next(Query *q, Cursor *e, Cursor *const *rest, int m, double noness, double theta)
{
    int nreq = required(q, e, rest, m, theta);
    /* A few lists besides e: all probed, those not required lowering the bound by theirs when
     * absent (more lists: the probes would cost more than the full step they save). */
    int nprobe = m <= PROBE_ALL ? m : nreq;
    if (nprobe == 0 || !q->pend) {
        return scan_qualifying(q, e, noness, theta);
    }
    if (q->pend_e != e) { /* a new traversal (seeding, then run()): new probes */
        q->pend_e = e;
        q->nprobe = 0;
        q->npend = q->ipend = 0;
        q->pend_upto = -1;
    }
    for (; q->nprobe < nprobe; q->nprobe++) { /* probes of the lists newly probed */
        int i = q->nprobe;
        q->probes[i] = *rest[i];
        cursor_rescratch(&q->probes[i], q->probe_scratch + (Py_ssize_t)CURSOR_SCRATCH * i);
    }
    while (e->cur != END_DOC && !q->broken) {
        while (q->ipend < q->npend && q->pend[q->ipend] < e->cur) {
            q->ipend++;
        }
        if (q->ipend < q->npend) {
            next_geq(e, q->pend[q->ipend]);
            return q->broken ? END_DOC : e->cur;
        }
        if (e->pos < q->pend_upto) { /* the rest of the filled stretch holds no candidate */
            q->n_skips++;
            cur_set(e, q->pend_upto);
            continue;
        }
        Py_ssize_t end = ((e->pos >> e->shift) + 1) << e->shift;
        if (noness + current_block_bound(e) + q->slack <= theta) {
            q->n_skips++;
            cur_set(e, end);
            continue;
        }
        fill_pending(q, e, nreq, nprobe, noness, theta);
    }
    return q->broken ? END_DOC : e->cur;
}

/* With the top k full: move the essential lists ord[ne..n) past the documents from cur on that
 * clearly cannot enter it, and return the first that might (END_DOC: none left). A lean pass
 * before run()'s full step, dropping only documents that step drops too: each bound here counts
 * every non-essential list's upper bound (run() may leave some out) and the essential lists'
 * block maxima or contributions (as run() does), and a document goes on prune()'s first,
 * slack-covered test only. As skip_blocks() does, a stretch goes when the block maxima of the
 * lists at cur cannot reach the threshold: up to the first end of their blocks, and before any
 * other essential list's next document. */
int32_t
quick_prune(Query *q, const int *ord, int ne, int n, int32_t cur)
{
    double theta = q->h->s[0], noness = 0.0;
    for (int i = 0; i < ne; i++) {
        noness += q->cs[ord[i]].ub;
    }
    if (n - ne == 1) {
        for (int i = 0; i < ne; i++) { /* descending bounds */
            q->rest[i] = &q->cs[ord[ne - 1 - i]];
        }
        return conj_next(q, &q->cs[ord[ne]], q->rest, ne, noness, theta);
    }
    while (cur != END_DOC && !q->broken) {
        double bound = noness;
        int32_t bnd = END_DOC, upto = END_DOC;
        for (int i = ne; i < n; i++) {
            Cursor *c = &q->cs[ord[i]];
            if (c->cur == cur) {
                bound += current_block_bound(c);
                int32_t last = c->blk_last[c->pos >> c->shift];
                if (c->qwp != 0.0 && last < bnd) {
                    bnd = last;
                }
            }
            else if (c->cur < upto) {
                upto = c->cur;
            }
        }
        int32_t target = cur + 1;
        if (bound + q->slack <= theta) {
            target = bnd < upto ? bnd + 1 : upto; /* bnd >= cur and upto > cur: past cur */
            q->n_skips++;
        }
        else {
            double v = noness;
            for (int i = ne; i < n; i++) {
                Cursor *c = &q->cs[ord[i]];
                if (c->cur == cur) {
                    v += contrib(c);
                }
            }
            if (v + q->slack > theta) {
                return q->broken ? END_DOC : cur;
            }
        }
        int32_t next = END_DOC;
        for (int i = ne; i < n; i++) {
            Cursor *c = &q->cs[ord[i]];
            if (c->cur == cur && target == cur + 1) {
                advance(c);
            }
            else if (c->cur < target) {
                if (target == END_DOC) {
                    cur_set(c, c->n);
                }
                else {
                    next_geq(c, target);
                }
            }
            if (c->cur < next) {
                next = c->cur;
            }
        }
        cur = next;
    }
    return q->broken ? END_DOC : cur;
}
