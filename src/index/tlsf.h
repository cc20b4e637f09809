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
 * As in Masmano's TLSF the block is then cut at the rounded size, so equal-slot requests reuse
 * each other's blocks; the rounding wastes less than 1/SL of a block (6.25% at SL = 16).
 *
 * Bounds: find = one mapping, at most two find-first-set operations (probes: 1 when the rounded
 * slot's row has a fitting slot, 2 when it climbs to a higher row): O(1). insert and remove: one
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

#if TLSF_SL_LOG2 == 4
typedef uint16_t tlsf_slmap_t;
#else
typedef uint32_t tlsf_slmap_t;
#endif

typedef struct idx_t {
    size_t fl_map;
    tlsf_slmap_t sl_map[TLSF_FL_COUNT];
    rt_blk *heads[TLSF_FL_COUNT][TLSF_SL_COUNT];
} idx_t;

_Static_assert(TLSF_FL_COUNT <= 8 * sizeof(size_t), "first-level bitmap is one word");

/* Mapping for insert: the slot containing size (size >= the smallest block). */
static inline void tlsf_map_insert(size_t size, unsigned *fl, unsigned *sl)
{
    if (size < TLSF_SMALL) {
        *fl = 0;
        *sl = (unsigned)(size >> TLSF_A_LOG2);
    } else {
        unsigned l = rt_log2(size);
        *fl = l - TLSF_FL_SHIFT + 1u;
        *sl = (unsigned)(size >> (l - TLSF_SL_LOG2)) - TLSF_SL_COUNT;
    }
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

static inline void idx_reset(idx_t *x)
{
    x->fl_map = 0;
    for (unsigned f = 0; f < TLSF_FL_COUNT; f++) {
        x->sl_map[f] = 0;
        for (unsigned s = 0; s < TLSF_SL_COUNT; s++) {
            x->heads[f][s] = NULL;
        }
    }
}

static inline void idx_insert(idx_t *x, rt_blk *b)
{
    unsigned fl, sl;
    tlsf_map_insert(blk_size(b), &fl, &sl);
    list_push(&x->heads[fl][sl], b);
    x->fl_map |= (size_t)1u << fl;
    x->sl_map[fl] = (tlsf_slmap_t)(x->sl_map[fl] | (1u << sl));
}

static inline void idx_remove(idx_t *x, rt_blk *b)
{
    rt_blk **slot = list_unlink(b);
    if (slot != NULL) {
        size_t i = list_head_index(&x->heads[0][0], TLSF_FL_COUNT * TLSF_SL_COUNT, slot);
        if (i < TLSF_FL_COUNT * TLSF_SL_COUNT) { /* that list is now empty */
            unsigned fl = (unsigned)(i >> TLSF_SL_LOG2), sl = (unsigned)i & (TLSF_SL_COUNT - 1u);
            x->sl_map[fl] = (tlsf_slmap_t)(x->sl_map[fl] & ~(1u << sl));
            if (x->sl_map[fl] == 0) {
                x->fl_map &= ~((size_t)1u << fl);
            }
        }
    }
}

/* *size: the block size needed, rounded up here to its slot boundary (the size the facade then
 * cuts). Returns the list head (the slot) of the first non-empty slot at or above it, or NULL. */
static inline rt_blk **idx_find(const rt_heap_t *h, idx_t *x, size_t *size, unsigned *probes)
{
    (void)h; /* the facade checks the head it returns (heap_found_ok) */
    size_t need = *size;
    unsigned fl, sl;
    if (need < TLSF_SMALL) {
        fl = 0;
        sl = (unsigned)(need >> TLSF_A_LOG2);
    } else {
        /* Round up to the next slot boundary; the octave may change, so map the rounded size. */
        size_t t = need + ((size_t)1 << (rt_log2(need) - TLSF_SL_LOG2)) - 1u;
        unsigned l = rt_log2(t);
        if (l >= RT_HEAP_MAX_BLOCK_LOG2) {
            *probes = 1;
            return NULL;
        }
        fl = l - TLSF_FL_SHIFT + 1u;
        sl = (unsigned)(t >> (l - TLSF_SL_LOG2)) - TLSF_SL_COUNT;
        *size = t & ~(((size_t)1 << (l - TLSF_SL_LOG2)) - 1u);
    }
    uint32_t sl_map = x->sl_map[fl] & (~0u << sl);
    if (sl_map == 0u) {
        size_t fl_map = x->fl_map & rt_bits_from(fl + 1u);
        *probes = 2;
        if (fl_map == 0u) {
            return NULL;
        }
        fl = RT_CTZ(fl_map);
        sl_map = x->sl_map[fl];
    } else {
        *probes = 1;
    }
    return &x->heads[fl][(unsigned)__builtin_ctz(sl_map)];
}

static inline size_t idx_fit_limit(size_t size) { return tlsf_slot_floor(size); }

static inline const char *idx_name(void) { return TLSF_SL_LOG2 == 4 ? "tlsf" : "tlsf32"; }

static bool tlsf_fits(const void *state, size_t size)
{
    unsigned fl, sl;
    tlsf_map_insert(size, &fl, &sl);
    return fl * TLSF_SL_COUNT + sl == *(const unsigned *)state;
}

static bool idx_check(idx_t *x, rt_idx_visit_fn visit, void *context)
{
    size_t fl_seen = 0;
    for (unsigned f = 0; f < TLSF_FL_COUNT; f++) {
        uint32_t sl_seen = 0;
        for (unsigned s = 0; s < TLSF_SL_COUNT; s++) {
            unsigned list = f * TLSF_SL_COUNT + s;
            if (!list_check(&x->heads[f][s], visit, context, tlsf_fits, &list)) {
                return false;
            }
            if (x->heads[f][s] != NULL) {
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
