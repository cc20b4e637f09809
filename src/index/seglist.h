/* SPDX-License-Identifier: MIT */
/*
 * seglist.h -- segregated fit, the VaiOS blog's original index (blog section 1).
 *
 * Eight size classes by payload capacity (block size - W): upper bounds 8, 16, 32, 64, 128, 256,
 * 512 bytes, and a catch-all. find walks the request's own class first fit (a class spans a
 * range, so its head need not fit), then takes the head of the next non-empty class above (an
 * 8-bit map of non-empty classes), whose every block fits.
 * Probes = blocks inspected. Bounds: insert/remove O(1); find O(blocks in the request's class)
 * + O(1): linear in the number of free blocks in the worst case (the blog's mem_frag: N + c).
 * Control: 8 list heads and one byte.
 */
#ifndef RT_INDEX_SEGLIST_H
#define RT_INDEX_SEGLIST_H

#include "index/list.h"

#define SEG_CLASSES 8u

/* This index walks its lists: its find may return IDX_CORRUPT (heap/facade.h). */
#define IDX_WALKS 1

typedef struct idx_t {
    rt_blk *heads[SEG_CLASSES];
    uint8_t map;
} idx_t;

/* Class of a payload capacity: 0 for <= 8, 1 for <= 16, ... 6 for <= 512, 7 above. */
static inline unsigned seg_class(size_t capacity)
{
    if (capacity <= 8u) {
        return 0;
    }
    if (capacity > 512u) {
        return SEG_CLASSES - 1u;
    }
    return rt_log2(capacity - 1u) - 2u;
}

static inline void idx_reset(idx_t *x)
{
    for (unsigned c = 0; c < SEG_CLASSES; c++) {
        x->heads[c] = NULL;
    }
    x->map = 0;
}

static inline void idx_insert(idx_t *x, rt_blk *b, size_t size)
{
    RT_INVARIANT(blk_size_ok(size), "seglist: inserting a size that is no block size");
    unsigned c = seg_class(size - BLK_W);
    RT_INVARIANT(c < SEG_CLASSES, "seglist: a class beyond the last");
    list_push(&x->heads[c], b);
    x->map = (uint8_t)(x->map | (1u << c));
}

static inline void idx_remove(idx_t *x, rt_blk *b)
{
    rt_blk **slot = list_unlink(b);
    if (slot != NULL) {
        size_t i = list_head_index(x->heads, SEG_CLASSES, slot);
        if (i < SEG_CLASSES) { /* that list is now empty */
            x->map = (uint8_t)(x->map & ~(1u << i));
        }
    }
}

/* Walks the class's list; every block is checked before its size is read or its next followed
 * (idx_member: IDX_CORRUPT if one fails; that block and the one whose next led to it are cut
 * off with the rest of the list, list_quarantine). The head of a higher class is checked by the
 * facade. */
static inline rt_blk **idx_find(const rt_heap_t *h, idx_t *x, size_t *size, unsigned *probes)
{
    size_t need = *size;
    unsigned c = seg_class(need - BLK_W);
    unsigned n = 0;
    rt_blk **slot = &x->heads[c], **before = NULL;
    RT_IDX_COUNT(IDX_EV_FIND);
    RT_IDX_COUNT(IDX_EV_HEAD);
    for (rt_blk *b = *slot; b != NULL; before = slot, slot = &b->next, b = b->next) {
        RT_IDX_COUNT(IDX_EV_BLOCK);
        n++;
        if (!idx_member(h, b, slot)) {
            if (list_quarantine(slot, before) == &x->heads[c]) {
                x->map = (uint8_t)(x->map & ~(1u << c)); /* the class's list is now empty */
            }
            *probes = n;
            return IDX_CORRUPT;
        }
        if (blk_size(b) >= need) {
            *probes = n;
            return slot;
        }
    }
    unsigned above = x->map & ~((2u << c) - 1u);
    RT_IDX_COUNT(IDX_EV_MAP);
    *probes = n + 1u;
    RT_INVARIANT(above == 0u || ((unsigned)__builtin_ctz(above) > c && (unsigned)__builtin_ctz(above) < SEG_CLASSES &&
                                 x->heads[__builtin_ctz(above)] != NULL),
                 "seglist: the class found above is empty, or not above the request's");
    return above != 0u ? &x->heads[__builtin_ctz(above)] : NULL;
}

static inline size_t idx_fit_limit(size_t size) { return size; }

static inline const char *idx_name(void) { return "seglist"; }

static bool seg_fits(const void *state, size_t size) { return seg_class(size - BLK_W) == *(const unsigned *)state; }

static bool idx_check(idx_t *x, rt_idx_visit_fn visit, void *context, bool head_only)
{
    for (unsigned c = 0; c < SEG_CLASSES; c++) {
        if (!list_check(&x->heads[c], visit, context, seg_fits, &c, head_only) ||
            (x->heads[c] != NULL) != ((((unsigned)x->map >> c) & 1u) != 0u)) {
            return false;
        }
    }
    return true;
}

#endif /* RT_INDEX_SEGLIST_H */
