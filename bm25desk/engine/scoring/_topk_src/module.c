/* The _topk module: its functions and types (see topk.h for what each source holds). */
#include "exhaustive.h"

PyObject *topk_search(PyObject *module, PyObject *args, PyObject *kwds);
PyObject *topk_count(PyObject *module, PyObject *args, PyObject *kwds);
PyObject *topk_bm25f(PyObject *module, PyObject *args, PyObject *kwds); /* bm25f.c */
PyObject *topk_window_shift(PyObject *module, PyObject *args);          /* windows.c */
PyObject *topk_window_prune(PyObject *module, PyObject *args);          /* winprune.c */
PyObject *topk_window_prune_counts(PyObject *module, PyObject *args);   /* winprune.c */
void windows_init(void);                                                 /* windows.c */
PyObject *topk_batch(PyObject *module, PyObject *args, PyObject *kwds); /* batch.c */
PyObject *topk_ranked(PyObject *module, PyObject *args, PyObject *kwds); /* ranked.c */
PyObject *topk_ranked_terms(PyObject *module, PyObject *args, PyObject *kwds); /* ranked.c */
PyObject *topk_exhaustive_threads(PyObject *module, PyObject *args);    /* split.c */
PyObject *topk_parts_wide(PyObject *module, PyObject *args);            /* parts.c */
PyObject *topk_parts(PyObject *module, PyObject *args, PyObject *kwds); /* parts.c */
PyObject *topk_exhaustive_query(PyObject *module, PyObject *args, PyObject *kwds); /* exquery.c */
PyObject *topk_short_limit(PyObject *module, PyObject *args);           /* short.c */
PyObject *topk_weighed(PyObject *module, PyObject *args);               /* weights.c */
PyObject *topk_remember_weighing(PyObject *module, PyObject *args);     /* weights.c */
PyObject *topk_fresh(PyObject *module, PyObject *args);                 /* parts.c */

static PyMethodDef topk_methods[] = {
    {"search", (PyCFunction)(void (*)(void))topk_search, METH_VARARGS | METH_KEYWORDS,
     "search(terms, dl_index, k, ncols, allow=None, deny=None, base=0, prev=None, stats=False, "
     "seed=4.0, exhaustive=False, rows=True)\n-> (docnos, scores, tfs, parts[, stats]) as bytes (int64, float64, int32 and "
     "float64 rows of ncols)\n\n"
     "terms: sequence, in query order, of (PostingList, qw, table, bound table, overflow values "
     "or None, column), where table is a Table (and bound table None) or a float64 array (and "
     "bound table its bounds, checked on each call). prev: a previous segment's result "
     "(docnos, scores, tfs, parts). exhaustive: add every posting instead of pruning; the result "
     "then ends with the number of matching documents, and its rows are returned only with rows (else empty: prev then must be such a result too). Raises ValueError or TypeError for any inconsistent "
     "argument."},
    {"stored", (PyCFunction)(void (*)(void))topk_stored, METH_VARARGS | METH_KEYWORDS,
     "stored(arrays, tid, dl_index, cap=32, shift=7) -> PostingList over term tid's blocks in a "
     "stored segment (format 3 or 4). arrays: the segment's (blocks (uint8, padded), blk_off, "
     "blk_last, ptr, bptr, ovf, tfront_term, tfront_off, tfront; blk_off, ptr and bptr uint32 "
     "or int64); the first three are kept "
     "referenced, nothing is decoded until a search."},
    {"count", (PyCFunction)(void (*)(void))topk_count, METH_VARARGS | METH_KEYWORDS,
     "count(lists, n_docs, allow=None, deny=None) -> documents in the union of the lists."},
    {"bm25f", (PyCFunction)(void (*)(void))topk_bm25f, METH_VARARGS | METH_KEYWORDS,
     "bm25f(terms, n_docs, k, k1, allow=None, deny=None, base=0, prev=None, work=None) -> "
     "(docnos, scores, matches, nonfinite): see _topk_src/bm25f.c."},
    {"window_shift", (PyCFunction)topk_window_shift, METH_VARARGS,
     "window_shift([shift]) -> the exhaustive traversal's window (2**shift documents: a segment "
     "larger than that, with postings for a quarter of it or more, is scored window by window) "
     "before the call; with shift (4..30), set it (tests, measurement)."},
    {"window_prune", (PyCFunction)topk_window_prune, METH_VARARGS,
     "window_prune([share]) -> the share of the k-th best score that the lists a window skips "
     "may bound together (exhaustive_query(prune=True): see _topk_src/winprune.c) before the "
     "call; with share (0 <= share < 1, 0: none skipped), set it (tests, measurement)."},
    {"window_prune_counts", (PyCFunction)topk_window_prune_counts, METH_NOARGS,
     "window_prune_counts() -> (windows that skipped lists, lists they skipped, documents "
     "scored again in them) since the module loaded (tests, measurement)."},
    {"fresh", (PyCFunction)topk_fresh, METH_VARARGS,
     "fresh(segment, memo, table, map, words, short, entry_bytes, added) -> per word its "
     "entry (a Parts or None) made, kept in map and noted in added as exhaustive_query makes a "
     "new term's, or NotImplemented where the caller must make it (not in memo, a list of short "
     "postings or more, or with postings above the cap): see parts.c."},
    {"remember_weighing", (PyCFunction)topk_remember_weighing, METH_VARARGS,
     "remember_weighing(terms, dfs, by_df, table, memo, chunks, size, top, proto) -> the dfs "
     "(> 0, distinct, in order) no weighting was found or made for; when none, every term's "
     "weighting (its df's; None for df 0) was put in table and its df in memo (df > 0). A df "
     "(<= top) by_df lacks whose chunk of idfs is computed gets a copy of proto with that idf "
     "and df, kept in by_df (see by_df.remember_weighing_python)"},
    {"weighed", (PyCFunction)topk_weighed, METH_VARARGS,
     "weighed(scored, table, dfs) -> the terms of scored without an entry in table (a list), or "
     "(the (term, qtf, weighting) of those weighed, the terms weighed None, the sum of their dfs) "
     "(see by_df.weighed_python)"},
    {"parts_wide", (PyCFunction)topk_parts_wide, METH_VARARGS,
     "parts_wide([wide]) -> whether Parts made from now on keep 32-bit codes whatever their "
     "table's size, before the call; with wide, set it (tests: the codes of tables of 64 K "
     "places or more)."},
    {"batch", (PyCFunction)(void (*)(void))topk_batch, METH_VARARGS | METH_KEYWORDS,
     "batch(segments, lists, slots, weights, offsets, k, allows=None, split=False) -> (docnos, "
     "scores, sizes, "
     "matches, k) as bytes (int64, float64 with k places per query; int64 per query) and the k "
     "used (at most every document)\n\nThe exhaustive top k of many queries in one call, "
     "without the GIL: see _topk_src/batch.c. segments: per segment (dl_index, deny or None, "
     "base); lists: per segment a tuple with one entry per slot, None, a Parts (with its "
     "overflow values) or (PostingList, Table, overflow values or None, Parts or None); slots (int32) and weights (float64): each query's "
     "terms in query order, offsets (int64, queries + 1) where each query's start; allows: None "
     "or per query None or a boolean mask of every document. split: a large windowed query may "
     "split its windows across threads (see exhaustive_threads; for a run on one thread)."},
    {"ranked", (PyCFunction)(void (*)(void))topk_ranked, METH_VARARGS | METH_KEYWORDS,
     "ranked(arrays, dl_index, tids, qws, table, k, allow=None, deny=None, cap=32, shift=7)\n"
     "-> (docnos, scores, tfs, parts) as search() returns them, or None\n\n"
     "The top k of one stored segment (arrays as for stored()) for the terms of ids "
     "tids, in query order, with weights qws (qtf * idf) and one Table: what search() does with "
     "stored(arrays, tid, ...) per term, in one call and without PostingList objects. None when "
     "a term has postings with tf > cap (their tf parts come from numpy: use search())."},
    {"ranked_terms", (PyCFunction)(void (*)(void))topk_ranked_terms, METH_VARARGS | METH_KEYWORDS,
     "ranked_terms(arrays, dl_index, terms, memo, table, k, allow=None, deny=None, cap=32, "
     "shift=7)\n-> ranked()'s result, None or NotImplemented\n\n"
     "ranked() for the query's terms (text, qtf, weighting) in query order, their ids read from "
     "memo (a dict of text -> id, the lexicon's; ids < 0: not in the vocabulary, left out) and "
     "their weights qtf * idf computed as Python does. None as ranked(), and when a weight is "
     "not finite or no term is in the vocabulary; NotImplemented when a term is not in memo, a "
     "weighting's k1 is not None, or a qtf or idf is not an int or float (the caller's loop then "
     "reads the terms). TypeError when a term is not a tuple (str, qtf, weighting)."},
    {"exhaustive_query", (PyCFunction)(void (*)(void))topk_exhaustive_query,
     METH_VARARGS | METH_KEYWORDS,
     "exhaustive_query(segments, maps, terms, k, allow=None, rows=False, miss=None, groups=None, "
     "fresh=None, prune=False)\n"
     "-> (docnos, scores, tfs, parts, matches) as search(exhaustive=True) returns them over every "
     "segment, None (a weight is not finite) or NotImplemented (the terms' k1 differ: give "
     "groups)\n\nOne query's exhaustive top k over every segment in one call: see "
     "_topk_src/exquery.c. segments: a tuple of Segment; maps: per segment a tuple of (Table, "
     "dict of term -> Parts or None) per group (groups: per term its group; None: group 0 for "
     "all, every term's k1 the first's); terms: (text, qtf, weighting) in query order; miss: "
     "called with the list of (segment, term position) the maps lack, returns their entries; "
     "prune: no match count is wanted (matches -1), and a large segment's windows may skip the "
     "lists that cannot lift a document into the top k (_topk_src/winprune.c)."},
    {"parts", (PyCFunction)(void (*)(void))topk_parts, METH_VARARGS | METH_KEYWORDS,
     "parts(segment, tid, table, fill=True) -> Parts of term tid's blocks in a stored Segment "
     "under table (empty; fill=False: never filled)."},
    {"exhaustive_threads", (PyCFunction)topk_exhaustive_threads, METH_VARARGS,
     "exhaustive_threads([threads[, min_postings]]) -> (threads, min_postings) before the call\n\n"
     "A windowed exhaustive search (search(exhaustive=True) without rows) of at least "
     "2 * min_postings postings splits its windows across up to `threads` threads (one per "
     "min_postings postings; 0: the processors online, at most 4; 1: never), its top k merged "
     "exactly. With arguments, set them (tests, measurement)."},
    {"short_limit", (PyCFunction)topk_short_limit, METH_VARARGS,
     "short_limit([postings]) -> the short path's limit before the call: search() (not "
     "exhaustive) and ranked() score every document, without pruning, when the lists hold at "
     "most that many postings in all, and either an eighth of it or not much more than 5 times "
     "those outside the longest list (see _topk_src/short.c). With postings, set it (tests, "
     "measurement: -1 never, 2**62 always)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef topk_module = {
    PyModuleDef_HEAD_INIT, "_topk",
    "Exact top-k retrieval kernel for bm25desk (see bm25desk/engine/scoring/topk.py).", -1,
    topk_methods, NULL, NULL, NULL, NULL,
};

static int
add_type(PyObject *m, PyTypeObject *type, const char *name)
{
    if (PyType_Ready(type) < 0) {
        return -1;
    }
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC
PyInit__topk(void)
{
    PyObject *m = PyModule_Create(&topk_module);
    if (!m) {
        return NULL;
    }
    windows_init();
    if (add_type(m, &PostingListType, "PostingList") < 0 || add_type(m, &TableType, "Table") < 0 ||
        add_type(m, &PartsType, "Parts") < 0 || add_type(m, &SegViewType, "Segment") < 0 ||
        PyModule_AddIntConstant(m, "MAX_CAP", MAX_CAP) < 0 ||
        PyModule_AddIntConstant(m, "ABI", 4) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SHIFT", BLK_MAX_SHIFT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
