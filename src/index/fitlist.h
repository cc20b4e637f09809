/* SPDX-License-Identifier: MIT */
/*
 * fitlist.h -- first fit and best fit over one doubly linked free list (Masmano 2006 section 2).
 *
 * Insertion is LIFO at the head (O(1) free, as Masmano's Table 1 assumes). First fit returns the
 * first block that is large enough; best fit scans the whole list for the smallest one that is,
 * stopping early on an exact fit. Probes = blocks inspected.
 * Bounds: insert/remove O(1); find O(free blocks) -- the worst case is a long list of blocks
 * that are all too small (first fit) or any long list (best fit). Control: one list head.
 * The including file defines FITLIST_BEST to 0 (first fit) or 1 (best fit).
 */
#ifndef RT_INDEX_FITLIST_H
#define RT_INDEX_FITLIST_H

#include "index/list.h"

#ifndef FITLIST_BEST
#error "define FITLIST_BEST to 0 or 1"
#endif

/* This index walks its lists: its find may return IDX_CORRUPT (heap/facade.h). */
#define IDX_WALKS 1

typedef struct idx_t {
    rt_blk *head;
} idx_t;

static inline void idx_reset(idx_t *x) { x->head = NULL; }
static inline void idx_insert(idx_t *x, rt_blk *b, size_t size)
{
    RT_INVARIANT(blk_size_ok(size), "fitlist: inserting a size that is no block size");
    (void)size, list_push(&x->head, b);
}
static inline void idx_remove(idx_t *x, rt_blk *b)
{
    (void)x;
    (void)list_unlink(b);
}

/* Every block is checked before its size is read or its next followed (idx_member:
 * IDX_CORRUPT if one fails). The block that fails, and the block whose next led to it (its link
 * may be what was damaged), are cut off with the rest of the list (list_quarantine): never
 * followed or handed out again, so the next walk serves from the blocks before them instead of
 * failing too. */
static inline rt_blk **idx_find(const rt_heap_t *h, idx_t *x, size_t *size, unsigned *probes)
{
    size_t need = *size;
    rt_blk **best = NULL;
    size_t best_size = SIZE_MAX;
    unsigned n = 0;
    rt_blk **slot = &x->head, **before = NULL;
    RT_IDX_COUNT(IDX_EV_FIND);
    RT_IDX_COUNT(IDX_EV_HEAD);
    for (rt_blk *b = *slot; b != NULL; before = slot, slot = &b->next, b = b->next) {
        RT_IDX_COUNT(IDX_EV_BLOCK);
        n++;
        if (!idx_member(h, b, slot)) {
            (void)list_quarantine(slot, before);
            *probes = n;
            return IDX_CORRUPT;
        }
        size_t s = blk_size(b);
        if (s >= need && s < best_size) {
            best = slot;
            best_size = s;
            if (!FITLIST_BEST || s == need) {
                break;
            }
        }
    }
    *probes = n;
    RT_INVARIANT(best == NULL || (best_size >= need && best_size == blk_size(*best)),
                 "fitlist: the block found is smaller than the request");
    return best;
}

static inline size_t idx_fit_limit(size_t size) { return size; }

static inline const char *idx_name(void) { return FITLIST_BEST ? "bestfit" : "firstfit"; }

static bool fitlist_any(const void *state, size_t size)
{
    (void)state;
    (void)size;
    return true;
}

static bool idx_check(idx_t *x, rt_idx_visit_fn visit, void *context, bool head_only)
{
    return list_check(&x->head, visit, context, fitlist_any, NULL, head_only);
}

#endif /* RT_INDEX_FITLIST_H */
