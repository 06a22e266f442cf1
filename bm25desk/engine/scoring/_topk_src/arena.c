/* An arena for a search's scratch: pieces of one block kept between calls (see arena.h). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The first block: enough for a query of a few dozen terms (each cursor decodes into 2 KB of
 * scratch; a probe copy and a seeding copy take as much again) or the short path's 4096
 * postings. Larger needs go apart, and the block kept grows to them up to ARENA_KEEP. */
#define ARENA_BLOCK ((size_t)256 * 1024)
#define ARENA_KEEP ((size_t)4 * 1024 * 1024)

struct ArenaExtra {
    ArenaExtra *next;
    max_align_t pad; /* what follows is aligned for any type */
};

/* The block no call holds now (NULL: a call holds it, or none was made yet). Read and written
 * with the GIL held only. */
static char *kept_block;
static size_t kept_size;

int
arena_open(Arena *a)
{
    memset(a, 0, sizeof(Arena));
#ifdef Py_GIL_DISABLED
    /* (no GIL to hand the kept block over with: every call makes its own) */
#else
    if (kept_block) {
        a->block = kept_block;
        a->size = kept_size;
        kept_block = NULL;
        return 0;
    }
#endif
    a->block = malloc(ARENA_BLOCK);
    a->size = ARENA_BLOCK;
    return a->block ? 0 : -1;
}

void *
arena_alloc_apart(Arena *a, size_t n, int zero)
{
    if (!a->block || n > SIZE_MAX - sizeof(ArenaExtra)) {
        return NULL;
    }
    ArenaExtra *e = malloc(sizeof(ArenaExtra) + n);
    if (!e) {
        return NULL;
    }
    e->next = a->extra;
    a->extra = e;
    a->apart += n + ARENA_ALIGN;
    if (zero) {
        memset(e + 1, 0, n);
    }
    return e + 1;
}

void
arena_close(Arena *a)
{
    while (a->extra) {
        ArenaExtra *e = a->extra;
        a->extra = e->next;
        free(e);
    }
    size_t want = a->used + a->apart;
    if (a->block && a->apart && want <= ARENA_KEEP && !kept_block) {
        char *bigger = malloc(want); /* what this call needed: kept instead (or not, if none) */
        if (bigger) {
            free(a->block);
            a->block = bigger;
            a->size = want;
        }
    }
#ifdef Py_GIL_DISABLED
    free(a->block);
    a->block = NULL;
#endif
    if (a->block) {
        if (!kept_block) { /* the kept block back, or this one kept instead */
            kept_block = a->block;
            kept_size = a->size;
        }
        else {
            free(a->block);
        }
    }
    memset(a, 0, sizeof(Arena));
}
