/* SPDX-License-Identifier: MIT */
/*
 * tlsf.h -- Two-Level Segregated Fit index (Masmano et al. 2004; Masmano 2006 section 2; the
 * VaiOS blog section 2).
 *
 * Free blocks sit in a 2-D array of lists. First level: the octave, floor(log2 size). Second
 * level: the octave cut into SL = 2^TLSF_SL_LOG2 slots of equal width. Sizes below
 * 2^(TLSF_SL_LOG2 + log2 A) ("small") share first-level row 0, cut into slots of A bytes, so
 * every small size has an exact list. A one-word bitmap marks the non-empty rows, one SL-bit
 * bitmap per row marks the non-empty slots.
 *
 * The two mapping functions (the only place sizes become list numbers):
 *   insert: a block goes to the slot containing its size (rounds down);
 *   search: a request is rounded UP to the next slot boundary first, so every block in that
 *           slot or above fits and the head is taken without looking at its size (no walk).
 * Two placement refinements (doc/allocators.md, "TLSF placement"; rtalloc/config.h, both measured
 * by the benchmark):
 *   good fit (RT_TLSF_GOOD_FIT, default on): before rounding up, the first block of the
 *           request's own slot is taken when it is large enough -- one more look, no walk;
 *   the cut: Masmano's TLSF cuts the block at the rounded size; by default the facade cuts it at
 *           the request (RT_TLSF_CUT_AT_SLOT 1 restores the rounded cut): the rounding decides
 *           only which list is searched, and the rest goes back to the index.
 *
 * Bounds: find = one mapping, at most one look at a list's first block (good fit), at most two
 * find-first-set operations (probes: 1 when good fit or the rounded slot's row has a fitting
 * slot, 2 when it climbs to a higher row): O(1). insert and remove: one
 * mapping, O(1) list and bitmap updates. Control: FL_COUNT * SL list heads + FL_COUNT SL-bit
 * bitmaps + one word, where FL_COUNT = RT_HEAP_MAX_BLOCK_LOG2 - TLSF_FL_SHIFT + 1.
 */
#ifndef RT_INDEX_TLSF_H
#define RT_INDEX_TLSF_H

#include "index/list.h"

#ifndef TLSF_SL_LOG2
#define TLSF_SL_LOG2 RT_TLSF_SL_LOG2
#endif
_Static_assert(TLSF_SL_LOG2 == 4 || TLSF_SL_LOG2 == 5, "TLSF second level: 16 or 32 slots");

#define TLSF_SL_COUNT (1u << TLSF_SL_LOG2)

#define TLSF_A_LOG2 ((unsigned)__builtin_ctz((unsigned)RT_HEAP_ALIGN))
#define TLSF_FL_SHIFT (TLSF_SL_LOG2 + TLSF_A_LOG2)
#define TLSF_SMALL ((size_t)1 << TLSF_FL_SHIFT)
#define TLSF_FL_COUNT (RT_HEAP_MAX_BLOCK_LOG2 - TLSF_FL_SHIFT + 1)

/* One word per row whatever SL (16 or 32 bits used): no partial-register updates. */
typedef uint32_t tlsf_slmap_t;

typedef struct idx_t {
    size_t fl_map;
    tlsf_slmap_t sl_map[TLSF_FL_COUNT];
    rt_blk *heads[TLSF_FL_COUNT * TLSF_SL_COUNT]; /* list fl * SL + sl */
} idx_t;

_Static_assert(TLSF_FL_COUNT <= 8 * sizeof(size_t), "first-level bitmap is one word");

/* Mapping for insert: the list (flat: fl * SL + sl) whose slot contains size. Branch-free: with
 * l = log2(size | TLSF_SMALL) >= TLSF_FL_SHIFT, size >> (l - SL_LOG2) is the slot within row 0
 * (in [0, SL): sizes below TLSF_SMALL, A bytes a slot) or SL plus the slot within row
 * l - FL_SHIFT + 1 (in [SL, 2 SL)); adding (l - FL_SHIFT) rows gives the flat number either way. */
static inline unsigned tlsf_list(size_t size)
{
    unsigned l = rt_log2(size | TLSF_SMALL);
    return ((l - TLSF_FL_SHIFT) << TLSF_SL_LOG2) + (unsigned)(size >> (l - TLSF_SL_LOG2));
}

static inline void tlsf_map_insert(size_t size, unsigned *fl, unsigned *sl)
{
    unsigned i = tlsf_list(size);
    *fl = i >> TLSF_SL_LOG2;
    *sl = i & (TLSF_SL_COUNT - 1u);
}

/* Start of the slot containing size: the largest block size a request of this slot may need. */
static inline size_t tlsf_slot_floor(size_t size)
{
    if (size < TLSF_SMALL) {
        return size;
    }
    size_t width = (size_t)1 << (rt_log2(size) - TLSF_SL_LOG2);
    return size & ~(width - 1u);
}

/* The start of list i's slot. */
static inline size_t tlsf_list_start(unsigned i)
{
    unsigned fl = i >> TLSF_SL_LOG2, sl = i & (TLSF_SL_COUNT - 1u);
    if (fl == 0u) {
        return (size_t)sl << TLSF_A_LOG2;
    }
    unsigned l = fl + TLSF_FL_SHIFT - 1u;
    return ((size_t)1 << l) + ((size_t)sl << (l - TLSF_SL_LOG2));
}

static inline void idx_reset(idx_t *x)
{
    x->fl_map = 0;
    /* wcet: <= TLSF_FL_COUNT; the rows */
    for (unsigned f = 0; f < TLSF_FL_COUNT; f++) {
        x->sl_map[f] = 0;
        /* wcet: <= TLSF_SL_COUNT; the slots of a row */
        for (unsigned s = 0; s < TLSF_SL_COUNT; s++) {
            x->heads[f * TLSF_SL_COUNT + s] = NULL;
        }
    }
}

/* The bitmaps change only when the list was empty: a push onto a non-empty list is four stores. */
static inline void idx_insert(idx_t *x, rt_blk *b, size_t size)
{
    RT_INVARIANT(blk_size_ok(size), "tlsf: inserting a size that is no block size");
    unsigned i = tlsf_list(size);
    RT_INVARIANT(i < TLSF_FL_COUNT * TLSF_SL_COUNT && tlsf_list_start(i) <= size &&
                     (i + 1u == TLSF_FL_COUNT * TLSF_SL_COUNT || size < tlsf_list_start(i + 1u)),
                 "tlsf: mapping (fl, sl) out of range, or a block outside its list's size range");
    if (list_push(&x->heads[i], b) == NULL) {
        unsigned fl = i >> TLSF_SL_LOG2;
        x->fl_map |= (size_t)1u << fl;
        x->sl_map[fl] |= (uint32_t)1u << (i & (TLSF_SL_COUNT - 1u));
    }
    RT_INVARIANT(((x->fl_map >> (i >> TLSF_SL_LOG2)) & 1u) != 0u &&
                     ((x->sl_map[i >> TLSF_SL_LOG2] >> (i & (TLSF_SL_COUNT - 1u))) & 1u) != 0u,
                 "tlsf: a list that holds a block must have its bits set in both levels");
}

static inline void idx_remove(idx_t *x, rt_blk *b)
{
    rt_blk **slot = list_unlink(b);
    if (slot != NULL) {
        size_t i = list_head_index(x->heads, TLSF_FL_COUNT * TLSF_SL_COUNT, slot);
        if (i < TLSF_FL_COUNT * TLSF_SL_COUNT) { /* that list is now empty */
            unsigned fl = (unsigned)(i >> TLSF_SL_LOG2), sl = (unsigned)i & (TLSF_SL_COUNT - 1u);
            x->sl_map[fl] &= ~(1u << sl);
            if (x->sl_map[fl] == 0) {
                x->fl_map &= ~((size_t)1u << fl);
            }
            RT_INVARIANT(x->heads[i] == NULL && (((x->fl_map >> fl) & 1u) != 0u) == (x->sl_map[fl] != 0u),
                         "tlsf: a row's first-level bit must say whether any of its lists holds a block");
        }
    }
}

/* *size: the block size needed (left as it is, but set to the rounded size under
 * RT_TLSF_CUT_AT_SLOT). Returns the list head (the slot) of the first non-empty slot at or above
 * need's slot rounded up, or good fit's slot, or NULL. */
static inline rt_blk **idx_find(const rt_heap_t *h, idx_t *x, size_t *size, unsigned *probes)
{
    (void)h; /* used by good fit only; the facade checks the head it returns (heap_found_ok) */
    size_t need = *size;
    RT_IDX_COUNT(IDX_EV_FIND);
    /* The first list whose every block fits: the list after the one holding need - 1 (need at
     * its slot's start: need's own list; inside a slot: the next; the last slot of a row + 1 is
     * the next row's first) -- need rounded up to its slot boundary, in one mapping. *size stays
     * need: the facade cuts the block it finds at need, not at the rounded size (less waste,
     * same bound). */
    unsigned i = tlsf_list(need - 1u) + 1u;
#if RT_TLSF_GOOD_FIT
    /* Good fit within the slot: the first block of the list before i, when it is large enough
     * -- or when its header is no free header at all: the facade then verifies it and reports
     * the corruption, rather than this search passing it over in silence. That list is need's
     * own slot when need is not its slot's start; when it is, every block there is smaller
     * than need and none is taken. Below TLSF_SMALL every size is its slot's start: skipped. */
    if (need >= TLSF_SMALL) {
        rt_blk **own = &x->heads[i - 1u];
        rt_blk *b = *own;
        RT_IDX_COUNT(IDX_EV_HEAD);
        if (b != NULL) {
            RT_IDX_COUNT(IDX_EV_BLOCK);
            size_t d = blk_decode(idx_key(h), b, b->head);
            if ((d & BLK_FLAGS) != BLK_FREE || d > BLK_DATA_MASK || blk_head_size(d) >= need) {
                *probes = 1;
                return own;
            }
        }
    }
#endif
#if RT_TLSF_CUT_AT_SLOT
    *size = tlsf_list_start(i); /* Masmano's TLSF: cut at the rounded size */
#endif
    if (i >= TLSF_FL_COUNT * TLSF_SL_COUNT) {
        *probes = 1;
        return NULL;
    }
    unsigned fl = i >> TLSF_SL_LOG2;
    uint32_t sl_map = x->sl_map[fl] & (~0u << (i & (TLSF_SL_COUNT - 1u)));
    RT_IDX_COUNT(IDX_EV_MAP);
    if (sl_map == 0u) {
        size_t fl_map = x->fl_map & rt_bits_from(fl + 1u);
        RT_IDX_COUNT(IDX_EV_MAP);
        *probes = 2;
        if (fl_map == 0u) {
            return NULL;
        }
        fl = RT_CTZ(fl_map);
        sl_map = x->sl_map[fl];
        RT_IDX_COUNT(IDX_EV_MAP);
    } else {
        *probes = 1;
    }
    RT_INVARIANT(fl < TLSF_FL_COUNT && sl_map != 0u, "tlsf: the search ended outside the table");
    RT_INVARIANT(x->heads[fl * TLSF_SL_COUNT + (unsigned)__builtin_ctz(sl_map)] != NULL &&
                     tlsf_list_start(fl * TLSF_SL_COUNT + (unsigned)__builtin_ctz(sl_map)) >= need,
                 "tlsf: the list found is empty, or may hold blocks smaller than the request");
    return &x->heads[fl * TLSF_SL_COUNT + (unsigned)__builtin_ctz(sl_map)];
}

static inline size_t idx_fit_limit(size_t size) { return tlsf_slot_floor(size); }

#define IDX_GOOD_FIT RT_TLSF_GOOD_FIT
#if RT_TLSF_GOOD_FIT
/* The largest first block of a list (good fit serves a request of its own slot up to its size);
 * a header that is no free header counts as nothing. O(lists): for the statistics. */
static inline size_t idx_head_fit(idx_t *x, size_t key)
{
    size_t best = 0;
    for (unsigned i = 0; i < TLSF_FL_COUNT * TLSF_SL_COUNT; i++) {
        if (x->heads[i] != NULL) {
            size_t d = blk_decode(key, x->heads[i], x->heads[i]->head);
            if ((d & BLK_FLAGS) == BLK_FREE && d <= BLK_DATA_MASK && blk_head_size(d) > best) {
                best = blk_head_size(d);
            }
        }
    }
    return best;
}
#endif

static inline const char *idx_name(void) { return TLSF_SL_LOG2 == 4 ? "tlsf" : "tlsf32"; }

static bool tlsf_fits(const void *state, size_t size)
{
    unsigned fl, sl;
    tlsf_map_insert(size, &fl, &sl);
    return fl * TLSF_SL_COUNT + sl == *(const unsigned *)state;
}

static bool idx_check(idx_t *x, rt_idx_visit_fn visit, void *context, bool head_only)
{
    size_t fl_seen = 0;
    for (unsigned f = 0; f < TLSF_FL_COUNT; f++) {
        uint32_t sl_seen = 0;
        for (unsigned s = 0; s < TLSF_SL_COUNT; s++) {
            unsigned list = f * TLSF_SL_COUNT + s;
            if (!list_check(&x->heads[list], visit, context, tlsf_fits, &list, head_only)) {
                return false;
            }
            if (x->heads[list] != NULL) {
                sl_seen |= 1u << s;
            }
        }
        if (sl_seen != x->sl_map[f]) {
            return false;
        }
        if (sl_seen != 0u) {
            fl_seen |= (size_t)1u << f;
        }
    }
    return fl_seen == x->fl_map;
}

#endif /* RT_INDEX_TLSF_H */
