/* An arena for a search's scratch: pieces of one block kept between calls (see arena.h). */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The kept block: enough for a query of a few dozen terms (each cursor decodes into 2 KB of
 * scratch; a probe copy and a seeding copy take as much again). Larger needs go apart. */
#define ARENA_BLOCK ((size_t)256 * 1024)
#define ARENA_ALIGN ((size_t)64)

struct ArenaExtra {
    ArenaExtra *next;
    max_align_t pad; /* what follows is aligned for any type */
};

/* The block no call holds now (NULL: a call holds it, or none was made yet). Read and written
 * with the GIL held only. */
static char *kept_block;

int
arena_open(Arena *a)
{
    memset(a, 0, sizeof(Arena));
    if (kept_block) {
        a->block = kept_block;
        a->cached = 1;
        kept_block = NULL;
    }
    else {
        a->block = malloc(ARENA_BLOCK);
        if (!a->block) {
            return -1;
        }
    }
    a->size = ARENA_BLOCK;
    return 0;
}

void *
arena_alloc(Arena *a, size_t n, int zero)
{
    if (!a->block) {
        return NULL;
    }
    size_t at = (a->used + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    void *p;
    if (n <= a->size && at <= a->size - n) {
        p = a->block + at;
        a->used = at + n;
    }
    else {
        if (n > SIZE_MAX - sizeof(ArenaExtra)) {
            return NULL;
        }
        ArenaExtra *e = malloc(sizeof(ArenaExtra) + n);
        if (!e) {
            return NULL;
        }
        e->next = a->extra;
        a->extra = e;
        p = e + 1;
    }
    if (zero) {
        memset(p, 0, n);
    }
    return p;
}

void
arena_close(Arena *a)
{
    while (a->extra) {
        ArenaExtra *e = a->extra;
        a->extra = e->next;
        free(e);
    }
    if (a->block) {
        if (!kept_block) { /* the kept block back, or this one kept instead */
            kept_block = a->block;
        }
        else {
            free(a->block);
        }
    }
    memset(a, 0, sizeof(Arena));
}
