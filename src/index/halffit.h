/* SPDX-License-Identifier: MIT */
/*
 * halffit.h -- Half-fit (Ogasawara 1995; Masmano 2006 section 2).
 *
 * List i holds the free blocks with floor(log2 size) = i. A request of block size r searches
 * from i = ceil(log2 r) (= floor(log2(r - 1)) + 1), so every block of list i fits and the head is
 * taken; a one-word bitmap finds the next non-empty list. The remainder of a split goes back to
 * floor(log2 r'). Blocks of [r, 2^ceil(log2 r)) are never used for r: the "incomplete memory use"
 * behind half-fit's fragmentation (Masmano: F around 80%).
 * Bounds: find, insert, remove O(1) (one find-first-set). Probes: always 1.
 * Control: RT_HEAP_MAX_BLOCK_LOG2 list heads and one word.
 */
#ifndef RT_INDEX_HALFFIT_H
#define RT_INDEX_HALFFIT_H

#include "index/list.h"

#define HALF_LISTS ((unsigned)RT_HEAP_MAX_BLOCK_LOG2)

typedef struct idx_t {
    size_t map;
    rt_blk *heads[HALF_LISTS];
} idx_t;

static inline void idx_reset(idx_t *x)
{
    x->map = 0;
    for (unsigned i = 0; i < HALF_LISTS; i++) {
        x->heads[i] = NULL;
    }
}

static inline void idx_insert(idx_t *x, rt_blk *b, size_t size)
{
    RT_INVARIANT(blk_size_ok(size), "halffit: inserting a size that is no block size");
    unsigned i = rt_log2(size);
    RT_INVARIANT(i < HALF_LISTS, "halffit: a block size beyond the last list");
    list_push(&x->heads[i], b);
    x->map |= (size_t)1u << i;
}

static inline void idx_remove(idx_t *x, rt_blk *b)
{
    rt_blk **slot = list_unlink(b);
    if (slot != NULL) {
        size_t i = list_head_index(x->heads, HALF_LISTS, slot);
        if (i < HALF_LISTS) { /* that list is now empty */
            x->map &= ~((size_t)1u << i);
        }
    }
}

static inline rt_blk **idx_find(const rt_heap_t *h, idx_t *x, size_t *size, unsigned *probes)
{
    (void)h; /* the facade checks the head it returns (heap_found_ok) */
    RT_INVARIANT(blk_size_ok(*size), "halffit: searching for a size that is no block size");
    unsigned i = rt_log2(*size - 1u) + 1u; /* sizes are >= the smallest block, so r > 1 */
    size_t map = x->map & rt_bits_from(i);
    RT_IDX_COUNT(IDX_EV_FIND);
    RT_IDX_COUNT(IDX_EV_MAP);
    *probes = 1;
    RT_INVARIANT(map == 0u ||
                     (RT_CTZ(map) < HALF_LISTS && x->heads[RT_CTZ(map)] != NULL && ((size_t)1 << RT_CTZ(map)) >= *size),
                 "halffit: the list found is empty, or may hold blocks smaller than the request");
    return map != 0u ? &x->heads[RT_CTZ(map)] : NULL;
}

static inline size_t idx_fit_limit(size_t size) { return (size_t)1u << rt_log2(size); }

static inline const char *idx_name(void) { return "halffit"; }

static bool half_fits(const void *state, size_t size) { return rt_log2(size) == *(const unsigned *)state; }

static bool idx_check(idx_t *x, rt_idx_visit_fn visit, void *context, bool head_only)
{
    for (unsigned i = 0; i < HALF_LISTS; i++) {
        if (!list_check(&x->heads[i], visit, context, half_fits, &i, head_only) ||
            (x->heads[i] != NULL) != (((x->map >> i) & 1u) != 0u)) {
            return false;
        }
    }
    return true;
}

#endif /* RT_INDEX_HALFFIT_H */
