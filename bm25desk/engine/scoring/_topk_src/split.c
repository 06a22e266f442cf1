/* The windowed exhaustive traversal split across threads: slices of the segment's documents,
 * each on its own cursors, sums and top k, merged exactly (see split_windows). Called without
 * the GIL. */
#include "exhaustive.h"

#ifndef _WIN32
#include <unistd.h>
#endif

/* Threads a large windowed traversal may use (0: as many as the machine has processors, at most
 * 4) and the postings each must have at least. A slice costs a wake-up of a parked worker
 * (workers.c), its cursors, candidates and a spare set of sums (sums.c). Measured on 100 k
 * passages, long queries (~750 k postings, ~1.2 ms), first pass, 2 cores: split in two from
 * 2^18 postings a slice, 10 % more queries a second for 18 % more CPU (k = 10); evaluation
 * runs at k = 1000, 1-14 % for 25 %. (When a slice started a thread of its own and took fresh
 * sums, the split cost 0.7 ms of CPU a query here: it was kept to 2 M postings a slice.)
 * Settable (exhaustive_threads()). */
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
int
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

static void
slice_job(void *arg)
{
    slice_run((Slice *)arg);
}

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
    sl->sheet = sheet_take(win, 0); /* (a spare: see sums.c) */
    sl->win = win;
    sl->take = take;
    if (!sl->heap.s || !sl->heap.d || !sl->heap.slot || !sl->own.cs || !sl->sheet) {
        return -1;
    }
    sl->acc = sl->sheet->acc;
    sl->seen = sl->sheet->seen;
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
    if (sl->sheet) { /* clean when the slice ran to its end: each window cleared its sums */
        sheet_give(sl->sheet, sl->matches >= 0 && !sl->own.broken);
    }
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
 * on parked worker threads (workers.c; run here, after it, when none can be had). Each slice
 * decodes the blocks its windows need: a Parts to fill is claimed here, each slice fills the
 * blocks from its first up to the next slice's first, and it is published when every slice
 * did. The slices' top k are merged exactly (score descending, docno ascending). Returns the
 * matches, -1 when out of memory, -2 when not split (a single window, or block last docnos
 * that do not ascend: the one-slice traversal finds the damage). */
long long
split_windows(Query *q, Py_ssize_t ndocs, Py_ssize_t win, double *acc, uint8_t *seen, int take,
              int nsl, int pos)
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
    uint64_t theta = 0; /* (the bits of 0.0: see WinPrune; the earlier segments' k-th best
                         * when the heap they carried in is full, for every slice at once) */
    double carried = heap_kth(q->h);
    if (carried > 0.0) {
        memcpy(&theta, &carried, sizeof(theta));
    }
    int ok = sls && claimed && runs && scratch;
    for (int s = 0; ok && s < nsl; s++) {
        Slice *sl = &sls[s];
        if (s == 0) {
            *sl = (Slice){q, {0}, {0}, NULL, 0, 0, win, acc, seen, take, pos, 0};
        }
        else if (slice_init(sl, q, win, take, scratch + (Py_ssize_t)CURSOR_SCRATCH * n * (s - 1)) <
                 0) {
            ok = 0;
        }
        sl->runs = runs + (Py_ssize_t)n * s;
        sl->pos = pos;
        sl->theta = &theta;
        sl->lo = ndocs * s / nsl; /* (a slice's last window may be short, as a segment's is) */
        sl->hi = ndocs * (s + 1) / nsl;
    }
    if (!ok) {
        goto done;
    }
    for (int t = 0; t < q->n; t++) {
        Cursor *c = &q->cs[t];
        claimed[t] = c->parts && !parts_ready(c->parts) && parts_take(c->parts, c);
        for (int s = 0; s < nsl; s++) {
            Py_ssize_t end = s + 1 < nsl ? first_block(c, (int32_t)sls[s + 1].lo) : c->nblk;
            run_start(&sls[s].q->cs[t], &sls[s].runs[t], (int32_t)sls[s].lo, claimed[t], end);
        }
    }
    void *jobs[64];
    for (int s = 0; s < nsl; s++) {
        jobs[s] = &sls[s];
    }
    workers_run(slice_job, jobs, nsl);
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

