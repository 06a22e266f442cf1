/* An open-addressing index over a dense array of entries, shared by the build's hash tables.
 *
 * The entries (the token table's in analysis/_tokens.c, the id table's in readers/_seen.c) stay
 * in insertion order in one array; the index holds entry number + 1 in 4-byte slots (0 = empty),
 * a power of two of them, probed linearly from the entry's hash. Growing rebuilds only the index.
 * Every entry type starts with its uint64_t hash.
 */
#ifndef BM25DESK_DENSE_INDEX_H
#define BM25DESK_DENSE_INDEX_H

#include <Python.h>
#include <stdint.h>

/* Place entry ``number`` (from 1) with hash ``h`` in ``index`` (``cap`` slots, one free). */
static inline void dense_index_place(uint32_t *index, Py_ssize_t cap, uint64_t h,
                                     uint32_t number) {
    Py_ssize_t mask = cap - 1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)mask);
    while (index[j])
        j = (j + 1) & mask;
    index[j] = number;
}

/* A new index of ``cap`` slots over the ``n`` entries of ``entry_size`` bytes (NULL with
 * MemoryError set when it cannot be allocated). */
static inline uint32_t *dense_index_build(const void *entries, size_t entry_size, Py_ssize_t n,
                                          Py_ssize_t cap) {
    uint32_t *index = PyMem_Calloc((size_t)cap, sizeof(uint32_t));
    if (!index) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        uint64_t h;
        memcpy(&h, (const char *)entries + (size_t)k * entry_size, sizeof h);
        dense_index_place(index, cap, h, (uint32_t)(k + 1));
    }
    return index;
}

#endif
