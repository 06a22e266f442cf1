/* What search() (search.c) and ranked() (ranked.c) share: the state of one call and its steps.
 *
 * A call's arguments, cursors, scratch (all from one arena), top k and rows are in one Search,
 * released in one place (release). */
#ifndef BM25DESK_TOPK_SEARCH_H
#define BM25DESK_TOPK_SEARCH_H

#include "arena.h"
#include "short.h"

typedef struct {
    Py_buffer T, U, ov;
    int haveT, haveU, haveO;
    double ovmax; /* the largest overflow value (0.0 without) */
    const PostingList *pl;
} TermViews;

typedef struct {
    /* arguments */
    PyObject *terms;              /* a tuple of the terms (ours: the caller's list may change) */
    int n;
    Py_ssize_t k, ncols;
    int64_t base;
    int want_stats;
    int exhaustive, rows;         /* the exhaustive traversal (exhaustive.c); its hits' rows */
    Py_buffer dli, allow, deny, pv[4];
    int have_dli, have_allow, have_deny, have_pv[4];
    Py_ssize_t ndocs, np_prev;
    TermViews *tv;
    /* per term */
    Cursor *cs, *seedcs;
    int *ord, *cols, *present;
    double *prefix, *vals, *tpv, *qb, *tb;
    int32_t *tfv;
    char *seen_col;
    double *bub;                  /* block maxima of every term's blocks */
    int32_t *scratch;             /* decoded blocks: CURSOR_SCRATCH per cursor and seed cursor */
    int32_t *pend;                /* the traversal's candidates of one block (BLK_MAX) */
    double *pend_b;               /* and their bounds */
    Cursor *probes, **rest;       /* the traversal's probes of required lists; list pointers */
    int32_t *probe_scratch;       /* CURSOR_SCRATCH per probe */
    Py_ssize_t total_blocks, total_postings;
    double total_abs;
    /* the top k and its rows */
    Heap h;
    int32_t *rows_tf;
    double *rows_tp;
    Query q;
    Arena arena;                  /* every array above (one block kept between calls) */
} Search;

/* Release everything s holds (buffers, references, the arena). */
void search_release(Search *s);
/* The segment's length index (*dli_w: its item size) and its optional allow and deny masks. */
int search_segment(Search *s, PyObject *dli, PyObject *allow, PyObject *deny, int *dli_w);
/* Scratch arrays sized by the number of terms and columns (s->n, s->ncols), from the arena. */
int search_scratch(Search *s);
/* Cursor i's list and weight (its cursor set up), and the query's totals. */
void search_term_weight(Search *s, int i, const PostingList *pl, double qw);
/* After the terms' set-up: the short path, the exhaustive traversal or the pruning one; the
 * result (docnos, scores, tfs, parts[, ...]) or NULL with an exception. */
PyObject *search_set_up(Search *s, PyObject *prev, double seed_ratio);

#endif
