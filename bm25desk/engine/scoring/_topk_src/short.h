/* The short path of search() and ranked() (short.c): every posting scored, no pruning. */
#ifndef BM25DESK_TOPK_SHORT_H
#define BM25DESK_TOPK_SHORT_H

#include "topk.h"

/* Whether a query of n lists (cursors set up) takes the short path. */
int short_taken(const Cursor *cs, int n);
/* Bytes of scratch short_rank needs for such a query. */
size_t short_scratch_bytes(Py_ssize_t postings, int n);
/* Rank every document of q's lists into q->h (with its row), exactly: q's cursors set up by
 * cursor_setup (nothing decoded; tables, overflow values and weights set, qi in query order),
 * the heap started. Sets q->broken on postings that do not decode. Without the GIL. */
void short_rank(Query *q, void *scratch);
/* short_limit([postings]) -> the limit before the call; with an argument, set it. */
PyObject *topk_short_limit(PyObject *module, PyObject *args);

#endif
