/* One allocation for a search's scratch (arena.c), instead of a malloc per array.
 *
 * A search() or ranked() call used to make some twenty mallocs and callocs, several of them a few
 * KB (the cursors' decoding scratch): on a query of rare terms, whose traversal touches a hundred
 * postings, allocating and freeing them cost about as much as the traversal (glibc's free of a
 * chunk next to the top merges and consolidates). An Arena hands out pieces of one block that is
 * kept between calls (taken and given back with the GIL held: one call at a time owns it; a call
 * that finds it taken, a nested one, makes its own). A request the block cannot hold is a
 * malloc of its own, freed with the arena; the block kept then grows to what the call needed
 * (up to 4 MB), so that a run of similar queries makes no malloc at all. */
#ifndef BM25DESK_TOPK_ARENA_H
#define BM25DESK_TOPK_ARENA_H

#include <stddef.h>
#include <string.h>

typedef struct ArenaExtra ArenaExtra;

typedef struct {
    char *block;         /* the block pieces are cut from (NULL: none yet) */
    size_t size, used;
    ArenaExtra *extra;   /* requests made apart (too large for the block) */
    size_t apart;        /* their bytes (with alignment) */
} Arena;

/* Take the kept block (or make one). With the GIL held. Returns 0, or -1 (no memory: every
 * later arena_alloc then returns NULL, and arena_close is still needed). */
int arena_open(Arena *a);
/* A request the block cannot hold (arena.c). */
void *arena_alloc_apart(Arena *a, size_t n, int zero);

#define ARENA_ALIGN ((size_t)64)

/* n bytes (aligned for any type), or NULL when out of memory; zeroed with `zero`. */
static inline void *
arena_alloc(Arena *a, size_t n, int zero)
{
    size_t at = (a->used + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    if (a->block && n <= a->size && at <= a->size - n) {
        void *p = a->block + at;
        a->used = at + n;
        if (zero) {
            memset(p, 0, n);
        }
        return p;
    }
    return arena_alloc_apart(a, n, zero);
}
/* Give the block back (with the GIL held) and free the requests made apart. */
void arena_close(Arena *a);

#endif
