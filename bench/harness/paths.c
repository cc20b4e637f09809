/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/paths.c -- the path a boundary-tag heap's malloc or free took (paths.h).
 */
#include "paths.h"

#include <string.h>

bool hp_supported(const rt_allocator_t *a)
{
    /* not a heap with quick lists: its small frees take none of TLSF's paths, and the stats the
     * classification reads would empty its lists */
    return a->family == RT_FAMILY_HEAP && !a->caches_frees && a->stats != NULL && a->walk != NULL &&
           a->last_probes != NULL;
}

static size_t free_blocks(const rt_allocator_t *a, void *h)
{
    rt_stats_t st;
    memset(&st, 0, sizeof st);
    a->stats(h, &st);
    return st.free_blocks;
}

typedef struct hp_walk {
    const unsigned char *target;
    rt_block_info_t last;
    bool have_last, found, done;
    size_t footprint;
    hp_pre_t *pre;
} hp_walk_t;

/* Blocks come in address order within a pool: the one before the target is its predecessor when
 * it ends where the target's header starts, the one after is its successor when it starts where
 * the target ends. */
static bool walk_one(void *context, const rt_block_info_t *b)
{
    hp_walk_t *w = context;
    const unsigned char *p = b->pointer;
    if (w->found) {
        w->pre->next_free = !b->used && p == w->target + w->footprint;
        w->done = true;
        return false;
    }
    if (p == w->target) {
        w->found = true;
        w->footprint = b->footprint;
        w->pre->prev_free =
            w->have_last && !w->last.used && (const unsigned char *)w->last.pointer + w->last.footprint == p;
    }
    w->last = *b;
    w->have_last = true;
    return true;
}

void hp_before(const rt_allocator_t *a, void *h, const wl_op_t *op, void *ptr, hp_pre_t *pre)
{
    memset(pre, 0, sizeof *pre);
    pre->free_blocks = free_blocks(a, h);
    if (WL_OP_KIND(op) == WL_FREE && ptr != NULL) {
        hp_walk_t w = {.target = ptr, .pre = pre};
        a->walk(h, walk_one, &w);
        pre->found = w.found;
    }
}

uint32_t hp_after(const rt_allocator_t *a, void *h, const wl_op_t *op, void *result, const hp_pre_t *pre)
{
    size_t after = free_blocks(a, h);
    uint32_t before = pre->free_blocks > 0xffffffu ? 0xffffffu : (uint32_t)pre->free_blocks;
    wl_path_t path = WL_PATH_NONE;
    if (WL_OP_KIND(op) == WL_MALLOC) {
        /* probes count bitmap look-ups only where malloc is O(1) (tlsf, tlsf32, halffit); the
         * walking indexes count blocks inspected, which says nothing of a climb. */
        bool climb = strcmp(a->malloc_bound, "O(1)") == 0 && a->last_probes(h) >= 2u;
        if (result == NULL) {
            path = WL_PATH_NONE;
        } else if (after + 1u == pre->free_blocks) {
            path = climb ? WL_PATH_M_EXACT2 : WL_PATH_M_EXACT;
        } else if (after == pre->free_blocks) {
            path = climb ? WL_PATH_M_SPLIT2 : WL_PATH_M_SPLIT;
        }
    } else if (WL_OP_KIND(op) == WL_FREE && pre->found) {
        size_t merges = (size_t)pre->prev_free + (size_t)pre->next_free;
        if (after + merges == pre->free_blocks + 1u) {
            path = merges == 2u     ? WL_PATH_F_BOTH
                   : pre->prev_free ? WL_PATH_F_PREV
                   : pre->next_free ? WL_PATH_F_NEXT
                                    : WL_PATH_F_NONE;
        }
    }
    return path == WL_PATH_NONE ? 0u : (uint32_t)path | before << 8;
}
