/* SPDX-License-Identifier: MIT */
/*
 * quick.h -- the state of the quick lists (rt_tlsfq, heap_tlsfq.c): a layer over the TLSF facade
 * that keeps small freed blocks, unmerged, on LIFO lists of their exact size (rtalloc/heap.h,
 * RT_HEAP_QUICK_MAX_REQUEST). Here so that white-box tests can read it; only heap_tlsfq.c writes it.
 *
 * A held ("cached") block keeps its used header with MARK set (so a neighbour's free sees it as
 * used and does not merge, and a second free of it is refused), and its first two payload words:
 *     link = next ^ key          the next block of its list (NULL at the end), keyed
 *     seal = (link + b) * Q ^ key     Q odd: bound to the block's address b and the heap's key
 * A link copied from another cached block, or left by an earlier life of the heap, fails its
 * seal: for a given b, link -> seal is a bijection (a new link needs a new seal); for a given
 * link, b -> seal is a bijection (a pair copied from b' != b does not seal at b); a new key
 * changes every seal. Level 0 (no tags): no seal.
 */
#ifndef RT_HEAP_QUICK_H
#define RT_HEAP_QUICK_H

#include "heap/heap_internal.h"

#define HEAP_QUICK_MAX_BLOCK ((RT_HEAP_QUICK_MAX_REQUEST + BLK_W + BLK_A - 1u) & ~(BLK_A - 1u))
#define HEAP_QUICK_CLASSES ((HEAP_QUICK_MAX_BLOCK - BLK_MIN) / BLK_A + 1u)
_Static_assert(HEAP_QUICK_MAX_BLOCK >= BLK_MIN, "quick lists: the largest cached block");
_Static_assert(BLK_MIN >= 3u * BLK_W, "quick lists: a cached block holds its header, link and seal");

typedef struct rt_quick {
    unsigned room;                    /* blocks that may still be cached: limit - cached */
    unsigned limit;                   /* the most that may be cached */
    size_t bytes;                     /* bytes of the blocks cached */
    unsigned share;                   /* bytes <= used >> share; 0: no bound in bytes */
    rt_blk *head[HEAP_QUICK_CLASSES]; /* class c: blocks of BLK_MIN + c * A bytes */
} rt_quick_t;

static inline unsigned heap_quick_count(const rt_quick_t *q) { return q->limit - q->room; }

/* Whether a freed block of `size` bytes may be cached as far as bytes go (the callers test the
 * room in blocks first): the bytes waiting stay within 1 / 2^share of the bytes in use (the block
 * being freed included), so that what the lists hold back is bounded by the live set as well as
 * in blocks: a heap with little in use caches little, and its fit stays TLSF's
 * (rt_heap_set_quick_share). */
static inline bool heap_quick_room(const rt_quick_t *q, size_t used, size_t size)
{
    return q->share == 0u || q->bytes + size <= used >> q->share;
}

#define HEAP_QUICK_MUL ((uintptr_t)(sizeof(uintptr_t) == 8u ? 0x9E3779B97F4A7C15ull : 0x9E3779B1ull))

static inline uintptr_t *heap_quick_link(const rt_blk *b) { return (uintptr_t *)(void *)((char *)b + BLK_W); }
static inline uintptr_t *heap_quick_seal_word(const rt_blk *b) { return (uintptr_t *)(void *)((char *)b + 2u * BLK_W); }

/* The seal of `link` (the keyed word) in block b. */
static inline uintptr_t heap_quick_seal(const rt_heap_t *h, const rt_blk *b, uintptr_t link)
{
    return (link + (uintptr_t)b) * HEAP_QUICK_MUL ^ (uintptr_t)h->key;
}

/* The block after b on its quick list (NULL at the end), as b's link says (unverified). */
static inline rt_blk *heap_quick_next(const rt_heap_t *h, const rt_blk *b)
{
    return (rt_blk *)(*heap_quick_link(b) ^ (uintptr_t)h->key);
}

/* True iff b's link carries its seal (always at level 0). */
static inline bool heap_quick_sealed(const rt_heap_t *h, const rt_blk *b)
{
    return RT_HARDENING < 1 || !RT_HEAP_TAG_PLACE ||
           *heap_quick_seal_word(b) == heap_quick_seal(h, b, *heap_quick_link(b));
}

#endif /* RT_HEAP_QUICK_H */
